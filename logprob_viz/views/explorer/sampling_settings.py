"""The explorer's settings, free of widgets: what the controls hold and how they become runner arguments."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...records.trace_fields import check_top_logprobs

__all__ = ["Settings", "SETTING_NAMES", "MIN_TOP_LOGPROBS", "default_runner", "has_chat_template"]

# The explorer shows alternatives to branch from and to choose the next token among: at least one.
MIN_TOP_LOGPROBS = 1


@dataclass
class Settings:
    """What the controls hold; `lv.explore(**settings)` sets their starting values."""

    temperature: float = 0.0  # 0: greedy, so a first Generate is reproducible
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0  # keep tokens with p >= min_p * p(most likely); 0: off. The local runner applies it
    max_new_tokens: int = 32
    top_logprobs: int = 5
    seed: int = 0
    chat: bool = False  # wrap the prompt as [{"role": "user", "content": prompt}]

    def sampling(self) -> dict:
        """The sampling arguments of `runner.generate` / `runner.stream` / `tree.branch`."""
        if self.temperature <= 0:
            return {"temperature": 0.0}  # greedy: top-p / top-k / seed change nothing
        args: dict = {"temperature": float(self.temperature), "seed": int(self.seed)}
        if self.top_p < 1.0:
            args["top_p"] = float(self.top_p)
        if self.top_k > 0:
            args["top_k"] = int(self.top_k)
        if self.min_p > 0:
            args["min_p"] = float(self.min_p)
        return args

    def check(self, max_top_logprobs: int | None = None, where: str = "for this runner") -> None:
        """Raise ValueError saying which setting is out of range and what it may be.

        ``max_top_logprobs`` (and ``where``, whose limit it is): the runner's, which the app knows.
        """
        if not (math.isfinite(self.temperature) and 0 <= self.temperature):
            raise ValueError(f"temperature must be a number >= 0 (0 means greedy), got {self.temperature!r}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 means no top-k), got {self.top_k!r}")
        if not (math.isfinite(self.min_p) and 0 <= self.min_p <= 1):
            raise ValueError(f"min_p must be in [0, 1] (a fraction of the most likely token's probability; "
                             f"0 means off), got {self.min_p!r}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max new tokens must be at least 1, got {self.max_new_tokens!r}")
        if self.top_logprobs < MIN_TOP_LOGPROBS:
            raise ValueError(
                f"top_logprobs must be at least 1 (the alternatives to branch from), got {self.top_logprobs!r}"
            )
        if max_top_logprobs is not None:  # the runner's own rule, with its own message
            check_top_logprobs(self.top_logprobs, max_top_logprobs, where)


SETTING_NAMES = tuple(Settings.__dataclass_fields__)


def default_runner():
    from ...sources.local import loading  # torch: only when no runner was given

    return loading.default_runner()


def has_chat_template(runner) -> bool:
    tokenizer = getattr(runner, "tokenizer", None)
    return tokenizer is None or getattr(tokenizer, "chat_template", None) is not None
