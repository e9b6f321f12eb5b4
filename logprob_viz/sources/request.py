"""What a call to a runner asks for, checked: the sampling settings, the request, and the argument
checks that every runner (local, server) and the batched calls share."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..records.trace import Trace
from ..records.trace_fields import is_int

# A growing trace is shown at most this often while tokens arrive: smooth to the eye, and few
# messages. A server stream's snapshots without stream_every (`remote.engine`), LogprobView's batches
# and the explorer's updates (the views import it from `views.defaults`).
UPDATE_S = 0.1


@dataclass(frozen=True)
class Sampling:
    """Validated sampling settings of a sampled (not greedy) generation."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None
    # keep tokens with p >= min_p * p(top token), after temperature (transformers' MinPLogitsWarper); 0: off
    min_p: float = 0.0

    @property
    def changes_distribution(self) -> bool:
        """Whether the distribution sampled from differs from the model's own."""
        return self.temperature != 1.0 or self.top_k > 0 or self.top_p < 1.0 or self.min_p > 0.0


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def parse_sampling(temperature=None, top_p=None, top_k=None, do_sample=None, seed=None,
                   min_p=None) -> Sampling | None:
    """Validate sampling arguments; None means greedy decoding.

    Sampling happens when ``do_sample=True``, or when ``do_sample`` is not given and a
    temperature > 0, ``top_p``, ``top_k`` or ``min_p`` is; temperature 0 is always greedy.
    ``min_p`` keeps the tokens whose probability is at least ``min_p`` times the most likely
    token's, after temperature (as transformers' ``MinPLogitsWarper``); 0 turns it off.
    """
    if temperature is not None and (not _is_number(temperature) or temperature < 0 or not math.isfinite(temperature)):
        raise ValueError(f"temperature must be a number >= 0 (0 means greedy), got {temperature!r}")
    if top_p is not None and (not _is_number(top_p) or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    if top_k is not None and (not is_int(top_k) or top_k < 0):
        raise ValueError(f"top_k must be an int >= 0 (0 means no top-k), got {top_k!r}")
    if min_p is not None and (not _is_number(min_p) or not 0 <= min_p <= 1):
        raise ValueError(f"min_p must be in [0, 1] (a fraction of the top token's probability; 0 means off), "
                         f"got {min_p!r}")
    if seed is not None and not is_int(seed):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
    if do_sample is None:
        do_sample = (temperature is not None and temperature > 0) or top_p is not None or bool(top_k) or bool(min_p)
    if not do_sample or temperature == 0:
        return None
    return Sampling(
        temperature=float(1.0 if temperature is None else temperature),
        top_k=int(top_k or 0),
        top_p=float(1.0 if top_p is None else top_p),
        seed=None if seed is None else int(seed),
        min_p=float(min_p or 0.0),
    )


@dataclass
class Request:
    """One checked generate / stream / score call. ``prompt_ids`` is filled by ``Runner.prepare``."""

    text: str | None = None
    messages: list[dict] | None = None
    prompt_ids: list[int] | None = None
    max_new_tokens: int = 0
    sampling: Sampling | None = None
    seed: int | None = None
    top_logprobs: int = 5
    progress: bool = True
    stop: Any = None
    stream_every: int | None = None
    scoring: bool = False  # a score() call: the input as given, nothing to generate after it
    extra: dict = field(default_factory=dict)  # runner-specific state from prepare

    def sampling_meta(self) -> dict:
        """The settings as recorded in ``trace.meta``."""
        s = self.sampling
        return {
            "max_new_tokens": self.max_new_tokens,
            "do_sample": s is not None,
            "temperature": None if s is None else s.temperature,
            "top_p": None if s is None else s.top_p,
            "top_k": None if s is None else s.top_k,
            "min_p": None if s is None else s.min_p,
            "seed": self.seed,
        }

    def input_meta(self) -> dict:
        if self.messages is not None:
            return {"messages": self.messages}
        if self.text is not None:
            return {"prompt": self.text}
        return {"prompt_ids": list(self.prompt_ids)}


@dataclass
class Step:
    """What a runner's loop reports after each chunk: tokens generated so far, and a snapshot."""

    n_new: int
    snapshot: Callable[[], Trace]


def check_input(text, messages, prompt_ids) -> None:
    """Exactly one of a text, chat messages or token ids, each well formed."""
    given = sum(x is not None for x in (text, messages, prompt_ids))
    if given != 1:
        raise ValueError(
            "give either a text (the first argument) or messages=[{'role': ..., 'content': ...}] "
            "(or prompt_ids=[...]), not both" + ("" if given else " and not none")
        )
    if messages is not None:
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and "role" in m and "content" in m for m in messages
        ):
            raise ValueError(
                "messages must be a list of dicts with 'role' and 'content', e.g. [{'role': 'user', 'content': 'Hi'}]"
            )
    elif text is not None:
        if not isinstance(text, str):
            raise TypeError(f"the text must be a str, got {type(text).__name__}")
        if not text:
            raise ValueError("the text is empty: give at least one character to start from")


def batch_items(text, messages, prompt_ids) -> list[dict] | None:
    """A list of inputs (texts, conversations, id lists) as one checked dict each; None for one input."""
    nested = [isinstance(x, (list, tuple)) and bool(x) and all(isinstance(e, (list, tuple)) for e in x)
              for x in (messages, prompt_ids)]  # a list of lists: many conversations / many id lists
    if isinstance(text, (list, tuple)):
        items = [{"text": x} for x in text]
    elif nested[0] or nested[1] or getattr(prompt_ids, "ndim", 1) == 2:
        items = [{"messages": list(m)} for m in messages] if nested[0] else [{"prompt_ids": p} for p in prompt_ids]
    else:
        return None
    if sum(x is not None for x in (text, messages, prompt_ids)) != 1 or not items:
        raise ValueError("give one non-empty list: of texts (the first argument), of messages=[...] or of prompt_ids")
    for i, item in enumerate(items):
        try:
            check_input(item.get("text"), item.get("messages"), item.get("prompt_ids"))
        except (TypeError, ValueError) as error:
            raise type(error)(f"item {i} of the list: {error}") from None
    return items


def item_seeds(seed, n: int) -> list[int | None]:
    """The seeds of a list of `n` items, one rule for every runner's corpus: ``seed + i`` for item i
    (so item i equals one call with that seed), a list or array of `n` ints (one per item), or None
    for all; anything else is a ValueError that says so."""
    if seed is None:
        return [None] * n
    if is_int(seed):
        return [int(seed) + i for i in range(n)]
    seeds = list(seed) if isinstance(seed, (list, tuple)) or getattr(seed, "ndim", None) == 1 else None
    if seeds is None or len(seeds) != n or not all(is_int(s) for s in seeds):
        raise ValueError(f"seed must be an int (item i gets seed + i), None, or a list of {n} ints (one per item), "
                         f"got {seed!r}"[:300])
    return [int(s) for s in seeds]


def check_prompt_ids(prompt_ids, vocab_size: int | None = None) -> list[int]:
    """Token ids as a prompt: a non-empty list of ints in the vocabulary."""
    if isinstance(prompt_ids, (str, bytes)) or not hasattr(prompt_ids, "__iter__"):
        raise TypeError(f"prompt_ids must be a list of token ids (ints), got {type(prompt_ids).__name__}")
    ids = list(prompt_ids.tolist() if hasattr(prompt_ids, "tolist") else prompt_ids)
    if not ids:
        raise ValueError("prompt_ids is empty: give at least one token id to start from")
    bad = [i for i in ids if not is_int(i) or i < 0 or (vocab_size is not None and i >= vocab_size)]
    if bad:
        where = "" if vocab_size is None else f" below the vocabulary size {vocab_size}"
        raise ValueError(f"prompt_ids must be ints >= 0{where}; got {bad[:5]!r}")
    return [int(i) for i in ids]


def check_max_new_tokens(max_new_tokens) -> int:
    if not is_int(max_new_tokens) or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
    return int(max_new_tokens)


def check_stop(stop) -> None:
    if stop is not None and not callable(stop) and not callable(getattr(stop, "is_set", None)):
        raise TypeError(
            f"stop must be a threading.Event or a callable returning True to stop, got {type(stop).__name__}"
        )
