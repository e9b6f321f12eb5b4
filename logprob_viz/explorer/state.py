"""The explorer's bookkeeping, free of widgets: settings, branches, fork points, re-scoring.

Everything here is plain Python over `Trace` and `Tree` objects, so it can be tested and
reused without a notebook: how the app's settings become runner arguments, where a branch
forks from its parent, how a branch is labelled in the list, how a token chosen by hand is
appended to a trace, and the top-K approximation of "this position at another temperature".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..trace import Trace

__all__ = [
    "Settings",
    "SETTING_NAMES",
    "append_row",
    "as_trace",
    "default_runner",
    "has_chat_template",
    "exact_at",
    "branch_label",
    "fork_position",
    "parents_of",
    "tempered_top_k",
    "visible",
]


@dataclass
class Settings:
    """What the controls hold; `lv.explore(**settings)` sets their starting values."""

    temperature: float = 0.0  # 0: greedy, so a first Generate is reproducible
    top_p: float = 1.0
    top_k: int = 0
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
        return args

    def check(self) -> None:
        """Raise ValueError saying which setting is out of range and what it may be."""
        if not (math.isfinite(self.temperature) and 0 <= self.temperature):
            raise ValueError(f"temperature must be a number >= 0 (0 means greedy), got {self.temperature!r}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p!r}")
        if self.top_k < 0:
            raise ValueError(f"top_k must be >= 0 (0 means no top-k), got {self.top_k!r}")
        if self.max_new_tokens < 1:
            raise ValueError(f"max new tokens must be at least 1, got {self.max_new_tokens!r}")
        if self.top_logprobs < 1:
            raise ValueError(
                f"top_logprobs must be at least 1 (the alternatives to branch from), got {self.top_logprobs!r}"
            )


SETTING_NAMES = tuple(Settings.__dataclass_fields__)


def as_trace(node) -> Trace:
    """A tree node as a Trace (nodes are traces; a node object holding one also works)."""
    if isinstance(node, Trace):
        return node
    trace = getattr(node, "trace", None)
    if isinstance(trace, Trace):
        return trace
    raise TypeError(f"expected a Trace (a tree node), got {type(node).__name__}")


def parents_of(tree) -> dict[int, object]:
    """{id(child): parent} over the whole tree, from `tree.children`."""
    parents: dict[int, object] = {}
    for node in tree.nodes:
        for child in tree.children(node):
            parents[id(child)] = node
    return parents


def fork_position(parent: Trace, child: Trace) -> int:
    """The first position where `child` differs from `parent` (by token id, by bytes where ids are unknown).

    ``len(parent)`` when the child only extends it, ``len(child)`` when it is a prefix of the parent.
    """
    n = min(len(parent), len(child))
    a, b = np.asarray(parent.token_ids[:n]), np.asarray(child.token_ids[:n])
    known = (a >= 0) & (b >= 0)
    differ = np.where(known, a != b, [parent.token_bytes[i] != child.token_bytes[i] for i in range(n)])
    hits = np.flatnonzero(differ)
    return int(hits[0]) if hits.size else n


def visible(token: str, limit: int = 40) -> str:
    """A token's text with its whitespace made visible (for button and list labels, which are plain text)."""
    shown = token.replace("\n", "⏎").replace("\t", "⇥").replace(" ", "␣")
    shown = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in shown)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _words(trace: Trace, start: int, limit: int = 48) -> str:
    text = "".join(trace.tokens[start : start + 12]).replace("\n", " ⏎ ")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def branch_label(number: int, trace: Trace, fork: int | None, prompt_len: int) -> str:
    """One line of the branch list: its number, perplexity, and where and how it differs from its parent.

    The perplexity is over everything after the root's prompt (`prompt_len`), so branches compare.
    """
    ppl = trace[prompt_len:].perplexity() if len(trace) > prompt_len else math.nan
    head = f"#{number}  ppl {ppl:.2f}" if math.isfinite(ppl) else f"#{number}  ppl –"
    if fork is None:
        return f"{head}  root: {_words(trace, trace.prompt_len) or '(prompt only)'}"
    return f"{head}  at {fork}: {_words(trace, fork)}"


def tempered_top_k(top_logprobs, temperature: float) -> np.ndarray:
    """Probabilities of the top-K tokens under `temperature`, renormalised over the top K.

    An approximation: the exact tempered distribution needs the whole vocabulary's logits,
    which the trace does not keep (the tail outside the top K is left out). Temperature 0 is
    greedy: all the mass on the most likely token.
    """
    lp = np.asarray(top_logprobs, dtype=np.float64)
    finite = np.isfinite(lp)
    out = np.zeros_like(lp)
    if not finite.any():
        return out
    if temperature <= 0:
        out[int(np.argmax(np.where(finite, lp, -np.inf)))] = 1.0
        return out
    scaled = np.where(finite, lp / temperature, -np.inf)
    scaled -= scaled[finite].max()
    weights = np.where(finite, np.exp(scaled), 0.0)
    return weights / weights.sum()


def exact_at(runner, trace: Trace, at: int, settings: Settings) -> tuple[str, np.ndarray]:
    """(label, logprobs): token `at`'s top-K alternatives under `settings`, exactly, by one forward pass.

    The runner records the processed (sampled-from) distribution over the whole vocabulary; it is
    read at the same token ids as the trace's alternatives (-inf where the settings cut one off).
    """
    sampling = settings.sampling()
    if settings.temperature <= 0:
        return "greedy", np.where(np.arange(trace.k) == 0, 0.0, -np.inf)  # all the mass on the top token
    step = runner.generate(
        prompt_ids=trace.token_ids[:at].tolist(),
        max_new_tokens=1,
        top_logprobs=max(trace.k, 1),
        progress=False,
        **sampling,
    )
    processed = step.top_logprobs if step.processed_top_logprobs is None else step.processed_top_logprobs
    by_id = dict(zip(step.top_ids[-1].tolist(), processed[-1].tolist(), strict=True))
    label = ", ".join(f"{name}={value}" for name, value in sampling.items() if name != "seed")
    return label, np.array([by_id.get(int(i), -np.inf) for i in trace.top_ids[at]])


def append_row(trace: Trace, scored: Trace, index: int) -> Trace:
    """`trace` with row `index` of `scored` (the runner's record of the next token) appended.

    Used when a person picks the next token by hand: the runner scores the text with the chosen
    token added, and its record of that token (logprob, rank, entropy, alternatives) is appended.
    The appended row has no processed logprobs (nothing was sampled).
    """
    k = max(trace.k, scored.k)

    def widen(m, fill, dtype):
        m = np.asarray(m, dtype=dtype)
        return np.pad(m, ((0, 0), (0, k - m.shape[1])), constant_values=fill) if m.shape[1] < k else m

    row = scored[index : index + 1]
    processed = {}
    if trace.processed_logprobs is not None:
        processed = {
            "processed_logprobs": np.concatenate([trace.processed_logprobs, [np.nan]]),
            "processed_top_logprobs": np.concatenate(
                [widen(trace.processed_top_logprobs, -np.inf, np.float32), np.full((1, k), -np.inf, np.float32)]
            ),
        }
    if trace.vocab is not None and trace.vocab is scored.vocab:
        alternatives = {"vocab": trace.vocab}  # texts read by id from the runner's shared table
    else:
        alternatives = {"top_tokens": [list(r) for r in trace.top_tokens] + [list(r) for r in row.top_tokens]}
    return Trace(
        tokens=list(trace.tokens) + list(row.tokens),
        token_bytes=list(trace.token_bytes) + list(row.token_bytes),
        token_ids=np.concatenate([trace.token_ids, row.token_ids]),
        logprobs=np.concatenate([trace.logprobs, row.logprobs]),
        ranks=np.concatenate([trace.ranks, row.ranks]),
        entropy=np.concatenate([trace.entropy, row.entropy]),
        top_logprobs=np.concatenate(
            [widen(trace.top_logprobs, -np.inf, np.float32), widen(row.top_logprobs, -np.inf, np.float32)]
        ),
        top_ids=np.concatenate([widen(trace.top_ids, -1, np.int32), widen(row.top_ids, -1, np.int32)]),
        flags=[list(f) for f in trace.flags] + [list(f) for f in row.flags],
        prompt_len=trace.prompt_len,
        meta={**trace.meta, "manual_steps": int(trace.meta.get("manual_steps", 0)) + 1},
        **alternatives,
        **processed,
    )


def default_runner():
    from ..runners import transformers as local  # torch: only when no runner was given

    default = getattr(local, "_default", None)
    return default() if default is not None else local.load()


def has_chat_template(runner) -> bool:
    tokenizer = getattr(runner, "tokenizer", None)
    return tokenizer is None or getattr(tokenizer, "chat_template", None) is not None
