"""The two sides of `lv.divergence`: what each gives per position, and the checks that they score the
same token ids.

A side is *whole* when it gives its whole next-token distribution (a local runner, a llama.cpp base
file) and *top-K* when it gives the chosen token's logprob and a few alternatives (a server runner, a
trace). The base's tokenization is the one both sides score, teacher-forced.
"""

from __future__ import annotations

import numpy as np

from ...records.trace import Trace
from ..request import Request
from .kld_file import KldFile

__all__ = ["Whole", "TopK", "side_of", "tokenize", "check_same_ids", "check_scored", "TOKENIZERS_DIFFER"]

TOKENIZERS_DIFFER = ("the two sides tokenize the text differently ({detail}): a divergence compares two "
                     "distributions over the same token ids. For models with different tokenizers use "
                     "lv.compare([base.score(text), candidate.score(text)]), which aligns them by bytes")


class Whole:
    """A local runner: the logits of its model's forward pass over the ids (sources/divergence/local.py)."""

    kind = "whole"

    def __init__(self, runner, label: str):
        self.runner, self.engine, self.label = runner, runner.engine, label

    @property
    def vocab_size(self) -> int:
        return int(self.engine.vocab_size)

    def describe(self) -> dict:
        return {"source": "transformers", "model": self.engine.name,
                "dtype": str(self.engine.model.dtype).removeprefix("torch.")}

    @property
    def vocab(self):
        return self.engine.vocab

    def ids_of(self, texts: list[str]) -> list[list[int]]:
        return [tokenize(self, text) for text in texts]

    def tokens_of(self, ids: list[int]) -> tuple[list[str], list[bytes]]:
        return [self.engine.text_of(i) for i in ids], [self.engine.bytes_of(i) for i in ids]

    def positions(self, item: int, ids: list[int]) -> np.ndarray:
        """The positions this side predicts: every token after the first."""
        return np.arange(1, len(ids))

    def batch_rows(self, items: list[int], id_lists: list[list[int]]):
        """``rows(b, positions, k)`` of one batch: float64 log-probabilities (T, V) and the k most likely ids;
        see local.py."""
        from .local import forward_batch  # torch: imported when a local side runs

        return forward_batch(self.engine, [id_lists[i] for i in items])


class TopK:
    """A server runner (asked for its top-K of the base's ids) or given traces: per position, the chosen
    token's logprob and the listed alternatives (ids, -1 where the source gave none)."""

    kind = "top-k"

    def __init__(self, label: str, runner=None, traces: list[Trace] | None = None, single: bool = False):
        self.label, self.runner, self.traces, self.single = label, runner, traces, single

    @property
    def texts(self) -> list[list[int]] | None:
        """Given traces' token ids (what a trace base scores when no text is given); None for a server."""
        return None if self.traces is None else [list(t.token_ids) for t in self.traces]

    def describe(self) -> dict:
        if self.runner is not None:
            return {"source": getattr(self.runner, "server", "server"), "model": self.runner.name}
        return {"source": self.traces[0].meta.get("source", "trace") if self.traces else "trace"}

    def score(self, id_lists: list[list[int]], k: int, progress: bool) -> list[Trace]:
        """The side's traces of the ids: the given traces, or the server's teacher-forced scores."""
        if self.traces is not None:
            if len(self.traces) != len(id_lists):
                raise ValueError(f"{len(self.traces)} {self.label} traces for {len(id_lists)} texts: give one "
                                 "trace per text")
            return self.traces
        if len(id_lists) == 1:
            return [self.runner.score(prompt_ids=id_lists[0], top_logprobs=k, progress=progress)]
        return list(self.runner.score(prompt_ids=id_lists, top_logprobs=k, progress=progress))


def side_of(value, label: str):
    """A `Whole` or `TopK` for what the user gave as ``base`` or ``candidate``."""
    if isinstance(value, Trace):
        return TopK(label, traces=[value], single=True)
    if isinstance(value, (list, tuple)) and value and all(isinstance(t, Trace) for t in value):
        return TopK(label, traces=list(value))
    if isinstance(value, KldFile):  # a llama.cpp base file (lv.read_kld): whole rows at its positions
        if label != "base":
            raise TypeError("a llama.cpp base file (lv.read_kld) is a base: give it as the first argument")
        return value
    engine = getattr(value, "engine", None)
    if engine is None:
        raise TypeError(f"{label} must be a runner (lv.load, lv.connect), a Trace or a list of traces over the "
                        f"same token ids, or a llama.cpp base file (lv.read_kld); got {type(value).__name__}")
    if getattr(engine.capabilities, "in_process", False) and hasattr(engine, "forward"):
        return Whole(value, label)
    return TopK(label, runner=value)


def tokenize(side: Whole, text: str) -> list[int]:
    """The ids a local runner scores for ``text`` (as its ``score`` tokenizes it)."""
    if not isinstance(text, str):
        raise TypeError(f"texts must be str, got {type(text).__name__}")
    req = Request(text=text, top_logprobs=0, max_new_tokens=0, progress=False, scoring=True)
    side.engine.prepare(req)
    return list(req.prompt_ids)


def check_same_ids(base_ids: list[int], other_ids, what: str) -> None:
    """Refuse a side that scored other token ids than the base's (another tokenizer, another text)."""
    other = np.asarray(other_ids)
    if len(other) != len(base_ids) or not np.array_equal(other, np.asarray(base_ids)):
        first = next((i for i, (a, b) in enumerate(zip(base_ids, other.tolist(), strict=False)) if a != b),
                     min(len(base_ids), len(other)))
        raise ValueError(TOKENIZERS_DIFFER.format(
            detail=f"{what}: {len(base_ids)} base tokens against {len(other)}, first different at token {first}"))


def check_scored(side: TopK, trace: Trace, item: int) -> None:
    """Refuse a top-K side that gave no logprob where one was needed: a server asked to score the ids must
    give every token after the first; a given trace at least one (its unscored tokens, e.g. a chat's
    prompt, are left unscored in the record)."""
    missing = np.flatnonzero(np.isnan(np.asarray(trace.logprobs, dtype=np.float64)[1:])) + 1
    if not len(missing) or (side.runner is None and len(missing) < len(trace) - 1):
        return
    who = (f"the {side.label} server ({side.describe()['source']}, {side.runner.name})" if side.runner is not None
           else f"the {side.label} trace")
    raise ValueError(f"{who} gave no logprob for {len(missing)} of the {len(trace) - 1} tokens after the first of "
                     f"text {item} (first at token {missing[0]}): a divergence needs each token's logprob. Score the "
                     "text (runner.score, or a server that scores prompt tokens: vLLM, llama.cpp) rather than "
                     "generate it")
