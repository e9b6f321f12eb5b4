"""`Divergence`: two engines over one text, position by position; `Divergences`: many texts, pooled.

Position i holds the two distributions that predict token i, as a trace's ``logprobs[i]`` does: the
first token is not scored (NaN there), nor any position a side did not predict (a llama.cpp base file
scores only the second half of each chunk). Everything is per token, O(N * K): no vocabulary-wide row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..viewable import Viewable
from .rollouts import Rollouts
from .stats import summary

__all__ = ["Divergence", "Divergences", "PER_POSITION"]

# per-position arrays: name -> (dtype, value where not scored)
PER_POSITION = {
    "kld_low": (np.float64, np.nan), "kld_high": (np.float64, np.nan),
    "delta_p": (np.float64, np.nan), "same_top": (np.float64, np.nan),
    "base_logprob": (np.float64, np.nan), "cand_logprob": (np.float64, np.nan),
    "base_top_id": (np.int64, -1), "base_top_logprob": (np.float64, np.nan),
    "cand_top_id": (np.int64, -1), "cand_top_logprob": (np.float64, np.nan),
    "base_top_rank": (np.int64, 0),
}
# per-position alternatives (N, K): ids (-1 padded) and logprobs (-inf padded)
ALTERNATIVES = {"base_alt_ids": (np.int64, -1), "base_alt_logprobs": (np.float64, -np.inf),
                "cand_alt_ids": (np.int64, -1), "cand_alt_logprobs": (np.float64, -np.inf)}


@dataclass(eq=False)
class Divergence(Viewable):
    """KL(base ‖ candidate), Δp = q(y) − p(y), same top token and each side's top of one text.

    ``kld_low``/``kld_high`` bound the KL of each position; they are equal where it is exact (both
    sides gave their whole distribution) and ``kld`` is then that array. ``same_top`` is 1.0 / 0.0, NaN
    where a side's top token is unknown; ``base_top_rank`` is the candidate's rank of the base's top
    token (0: unknown). ``cutoff``: the KL sum's cutoff in nats (llama.cpp's 16.0), or None (exact sum).
    """

    tokens: list[str]
    token_bytes: list[bytes]
    token_ids: np.ndarray
    arrays: dict[str, np.ndarray]
    cutoff: float | None = 16.0
    vocab: Any = None  # the text of every token id (the base's tokenizer), for the top tokens' names
    meta: dict = field(default_factory=dict)

    @classmethod
    def from_rows(cls, tokens: list[str], token_bytes: list[bytes], token_ids, positions, rows: dict, *, cutoff,
                  vocab=None, meta=None) -> Divergence:
        """The record of a text (its tokens as a trace carries them) whose scored ``positions`` got the
        per-position ``rows`` (from `positions.exact_rows` / `interval_rows`, one row per scored position,
        in that order)."""
        ids = np.asarray(token_ids, dtype=np.int64)
        n = len(ids)
        at = np.asarray(positions, dtype=np.int64)
        arrays = {}
        for name, (dtype, empty) in PER_POSITION.items():
            arrays[name] = np.full(n, empty, dtype=dtype)
            arrays[name][at] = rows[name]
        for name, (dtype, empty) in ALTERNATIVES.items():
            values = np.asarray(rows[name])
            arrays[name] = np.full((n, values.shape[1] if values.ndim == 2 else 0), empty, dtype=dtype)
            arrays[name][at] = values
        return cls(list(tokens), list(token_bytes), ids, arrays, cutoff=cutoff, vocab=vocab, meta=dict(meta or {}))

    @staticmethod
    def from_logprobs(token_ids, logprobs_a, logprobs_b, *, labels=None, rewards=None, entropy=None,
                      clip: float = 2.0) -> Rollouts:
        """RL rollouts: the sampling engine's (a) and the trainer's (b) logprobs of the same chosen tokens,
        one sequence per rollout; per token Δ = log π_b − log π_a, the ratio and Schulman's k1, k2, k3
        estimators of KL(π_a ‖ π_b); per rollout mean / max |Δ| and the share of ratios outside
        [1/clip, clip]. A `Rollouts` (records/divergence/rollouts.py)."""
        return Rollouts(token_ids, logprobs_a, logprobs_b, labels=labels, rewards=rewards, entropy=entropy,
                        clip=clip)

    def __len__(self) -> int:
        return len(self.tokens)

    def __getattr__(self, name: str):
        arrays = self.__dict__.get("arrays", {})
        if name in arrays:
            return arrays[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    @property
    def scored(self) -> np.ndarray:
        """Which positions both sides predicted (bool [N])."""
        return ~np.isnan(self.arrays["delta_p"])

    @property
    def exact(self) -> bool:
        """True when every scored position's KL is one number (both sides gave their whole distribution)."""
        return bool(np.array_equal(self.arrays["kld_low"], self.arrays["kld_high"], equal_nan=True))

    @property
    def kld(self) -> np.ndarray:
        """KL(base ‖ candidate) per position in nats (NaN where not scored), where it is exact."""
        if not self.exact:
            raise ValueError("this divergence's KL is a range at some positions (a side gave only its top-K): "
                             "read kld_low and kld_high, which certainly hold it")
        return self.arrays["kld_low"]

    @property
    def flips(self) -> np.ndarray:
        """The positions where the two top tokens differ (where both are known)."""
        return np.flatnonzero(self.arrays["same_top"] == 0.0)

    def summary(self) -> dict:
        """llama-perplexity's statistics over the scored tokens (see `stats`), keys in snake case."""
        return _summary([self])

    def to_pandas(self):
        """One row per token: the token, its KL (or range), Δp, each side's top token and p."""
        import pandas as pd  # pandas is optional: imported when a table is asked for

        a = self.arrays
        columns = {"token": self.tokens, "token_id": self.token_ids}
        if self.exact:
            columns["kld"] = a["kld_low"]
        else:
            columns.update(kld_low=a["kld_low"], kld_high=a["kld_high"])
        columns.update(delta_p=a["delta_p"], same_top=a["same_top"], base_p=np.exp(a["base_logprob"]),
                       cand_p=np.exp(a["cand_logprob"]))
        for side in ("base", "cand"):
            columns[f"{side}_top"] = [self._name(i) for i in a[f"{side}_top_id"]]
            columns[f"{side}_top_p"] = np.exp(a[f"{side}_top_logprob"])
        columns["base_top_rank"] = a["base_top_rank"]
        return pd.DataFrame(columns)

    def _name(self, token_id) -> str | None:
        if token_id < 0:
            return None
        return self.vocab[int(token_id)] if self.vocab is not None else str(int(token_id))

    def __repr__(self) -> str:
        return _describe(type(self).__name__, [self])


class Divergences:
    """The divergences of many texts, in input order; ``summary()`` pools every scored token, as
    llama.cpp pools its chunks."""

    def __init__(self, items: list[Divergence], meta: dict | None = None):
        self.items = list(items)
        self.meta = dict(meta or {})

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index):
        return self.items[index]

    def __iter__(self):
        return iter(self.items)

    def summary(self) -> dict:
        return _summary(self.items)

    def to_pandas(self):
        """One row per token of every text, with a ``text`` column (the text's index)."""
        import pandas as pd  # pandas is optional: imported when a table is asked for

        frames = [d.to_pandas().assign(text=i) for i, d in enumerate(self.items)]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def __repr__(self) -> str:
        return _describe(type(self).__name__, self.items)

    def to_corpus(self, labels=None):
        """An `lv.Corpus`, one row per text with its mean and max KLD, flips, max |Δp|... as sortable
        columns (`lv.CorpusView(divergences)` shows it; `to_parquet` stores it): records/corpus/from_divergence.py."""
        from ..corpus.from_divergence import divergence_corpus  # (records/corpus is not needed to build these)

        return divergence_corpus(self, labels=labels)


def _pooled(items: list[Divergence], name: str) -> np.ndarray:
    return np.concatenate([d.arrays[name][d.scored] for d in items]) if items else np.zeros(0)


def _summary(items: list[Divergence]) -> dict:
    cutoffs = {d.cutoff for d in items}
    if len(cutoffs) > 1:
        raise ValueError(f"these divergences used different KL cutoffs {sorted(map(str, cutoffs))}: pool records "
                         "computed with one cutoff")
    out = summary(*(_pooled(items, name) for name in ("kld_low", "kld_high", "delta_p", "same_top",
                                                      "cand_logprob", "base_logprob")))
    out["cutoff"] = cutoffs.pop() if cutoffs else None
    return out


def _describe(kind: str, items: list[Divergence]) -> str:
    tokens = sum(int(d.scored.sum()) for d in items)
    if not tokens:
        return f"<{kind}: no scored token>"
    s = _summary(items)
    mean = s["mean_kld"]
    kld = f"[{mean.low:.4g}, {mean.high:.4g}]" if isinstance(mean, tuple) else f"{mean:.4g}"
    same = "?" if s["same_top"] is None else f"{100 * s['same_top']:.1f}%"
    texts = f"{len(items)} texts, " if kind == "Divergences" else ""
    return (f"<{kind}: {texts}{tokens} tokens, mean KLD {kld} nats, same top {same}, "
            f"PPL ratio {s['ppl_ratio']:.4f}, cutoff {s['cutoff']}>")
