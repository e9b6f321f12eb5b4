"""`Rollouts`: the train/inference mismatch of RL rollouts, token by token (`Divergence.from_logprobs`).

Two sides give only the chosen tokens' logprobs: side a, the engine the tokens were sampled from (the
rollout engine: vLLM, SGLang), and side b, the trainer's recomputation of the same tokens. Per token,
Δ = log π_b − log π_a and the ratio r = exp(Δ) = π_b / π_a. With the tokens drawn from π_a, J. Schulman's
"Approximating KL divergence" (2020) estimators of KL(π_a ‖ π_b) are

    k1 = −log r = −Δ          (unbiased, high variance, can be negative)
    k2 = ½ (log r)² = Δ²/2    (biased, low variance, >= 0)
    k3 = (r − 1) − log r      (unbiased, low variance, >= 0)

Per rollout: the mean and max |Δ|, the mean of each estimator, and the share of tokens whose ratio
leaves [1/c, c] (c = 2 by default; what importance-sampling corrections clip or mask). Where entropy is
given, the "forking" tokens are the top 20 % by entropy over all rollouts (Wang et al. 2025, "Beyond the
80/20 rule"), and their mean |Δ| is reported beside the rest. Arrays are flat with offsets: a million
tokens are a few numpy passes. ``view(i, vocab=)`` shows one rollout's tokens coloured by |Δ|
(views/divergence/rollout.py, found through records/viewable.py's table).
"""

from __future__ import annotations

import numbers

import numpy as np

from ..viewable import show

__all__ = ["Rollouts", "FORKING_SHARE"]

# the share of tokens, by entropy, that count as forking tokens
FORKING_SHARE = 0.2


def _flat(values, name: str, dtype, lengths=None) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise TypeError(f"{name} must be a list with one sequence per rollout, got {type(values).__name__}")
    rows = [np.asarray(v, dtype=dtype).reshape(-1) for v in values]
    got = np.array([len(r) for r in rows], dtype=np.int64)
    if lengths is not None and not np.array_equal(got, lengths):
        bad = int(np.flatnonzero(got != lengths)[0]) if len(got) == len(lengths) else None
        where = f"rollout {bad} has {got[bad]} values where token_ids has {lengths[bad]}" if bad is not None \
            else f"{len(got)} rollouts where token_ids has {len(lengths)}"
        raise ValueError(f"{name} must give one value per token of each rollout: {where}")
    return (np.concatenate(rows) if rows else np.zeros(0, dtype=dtype)), got


class Rollouts:
    """Rollouts' per-token mismatch between a sampling engine (a) and a trainer (b); one row per rollout
    in ``to_pandas()``, one per token in ``tokens_frame()``. Build with `Divergence.from_logprobs`."""

    def __init__(self, token_ids, logprobs_a, logprobs_b, *, labels=None, rewards=None, entropy=None,
                 clip: float = 2.0):
        self.token_ids, self.lengths = _flat(token_ids, "token_ids", np.int64)
        self.logprobs_a, _ = _flat(logprobs_a, "logprobs_a", np.float64, self.lengths)
        self.logprobs_b, _ = _flat(logprobs_b, "logprobs_b", np.float64, self.lengths)
        self.entropy = None if entropy is None else _flat(entropy, "entropy", np.float64, self.lengths)[0]
        n = len(self.lengths)
        self.labels = list(labels) if labels is not None else [str(i) for i in range(n)]
        self.rewards = None if rewards is None else np.asarray(rewards, dtype=np.float64).reshape(-1)
        for name, values in (("labels", self.labels), ("rewards", self.rewards)):
            if values is not None and len(values) != n:
                raise ValueError(f"{name} must give one value per rollout: {len(values)} for {n} rollouts")
        if isinstance(clip, bool) or not (isinstance(clip, numbers.Real) and clip > 1):
            raise ValueError(f"clip must be a number > 1 (the ratio's band is [1/clip, clip]), got {clip!r}")
        self.clip = float(clip)
        self.offsets = np.r_[0, np.cumsum(self.lengths)]
        self.rollout = np.repeat(np.arange(n), self.lengths)  # each token's rollout

    def __len__(self) -> int:
        return len(self.lengths)

    @property
    def delta(self) -> np.ndarray:
        """Δ = log π_b − log π_a per token (flat; NaN where a side gave no logprob)."""
        return self.logprobs_b - self.logprobs_a

    @property
    def ratio(self) -> np.ndarray:
        return np.exp(self.delta)

    @property
    def k1(self) -> np.ndarray:
        return -self.delta

    @property
    def k2(self) -> np.ndarray:
        return 0.5 * self.delta ** 2

    @property
    def k3(self) -> np.ndarray:
        return np.expm1(self.delta) - self.delta  # (r - 1) - log r, exact for small Δ

    @property
    def outside(self) -> np.ndarray:
        """Whether each token's ratio leaves [1/clip, clip] (False where unknown)."""
        r = self.ratio
        with np.errstate(invalid="ignore"):
            return (r < 1 / self.clip) | (r > self.clip)

    @property
    def forking(self) -> np.ndarray | None:
        """The top 20 % of tokens by entropy over all rollouts (None without entropy)."""
        if self.entropy is None:
            return None
        known = ~np.isnan(self.entropy)
        if not known.any():
            return np.zeros(len(self.entropy), dtype=bool)
        threshold = np.quantile(self.entropy[known], 1 - FORKING_SHARE)
        return known & (self.entropy >= threshold)

    def _per_rollout(self, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The mean of ``values`` over each rollout's tokens where ``mask`` (NaN where none)."""
        n = len(self.lengths)
        sums = np.bincount(self.rollout[mask], weights=values[mask], minlength=n)
        counts = np.bincount(self.rollout[mask], minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)

    def table(self) -> dict[str, np.ndarray]:
        """The per-rollout columns (what ``to_pandas`` shows)."""
        delta = self.delta
        known = ~np.isnan(delta)
        size = np.bincount(self.rollout[known], minlength=len(self))
        abs_delta = np.abs(np.where(known, delta, 0.0))
        fmax = np.full(len(self), -np.inf)
        np.maximum.at(fmax, self.rollout[known], abs_delta[known])
        out = {"label": np.asarray(self.labels, dtype=object), "tokens": size,
               "mean_abs_delta": self._per_rollout(abs_delta, known),
               "max_abs_delta": np.where(size > 0, fmax, np.nan),
               "share_outside": self._per_rollout(self.outside.astype(np.float64), known)}
        for name in ("k1", "k2", "k3"):
            out[f"mean_{name}"] = self._per_rollout(getattr(self, name), known)
        forking = self.forking
        if forking is not None:
            out["forking_mean_abs_delta"] = self._per_rollout(abs_delta, known & forking)
            out["other_mean_abs_delta"] = self._per_rollout(abs_delta, known & ~forking)
        if self.rewards is not None:
            out["reward"] = self.rewards
        return out

    def summary(self) -> dict:
        """Over every token of every rollout: mean and max |Δ|, each estimator's mean (a KL estimate),
        the share of ratios outside [1/clip, clip]."""
        delta = self.delta[~np.isnan(self.delta)]
        if not len(delta):
            raise ValueError("no token with both logprobs: nothing to summarise")
        return {"rollouts": len(self), "tokens": int(len(delta)), "mean_abs_delta": float(np.abs(delta).mean()),
                "max_abs_delta": float(np.abs(delta).max()), "mean_k1": float((-delta).mean()),
                "mean_k2": float((0.5 * delta ** 2).mean()), "mean_k3": float((np.expm1(delta) - delta).mean()),
                "share_outside": float(((np.exp(delta) < 1 / self.clip) | (np.exp(delta) > self.clip)).mean()),
                "clip": self.clip}

    def to_pandas(self):
        import pandas as pd  # pandas is optional: imported when a table is asked for

        return pd.DataFrame(self.table())

    def tokens_frame(self):
        """One row per token: rollout, position, token id, both logprobs, Δ, ratio, k1, k2, k3, outside."""
        import pandas as pd  # pandas is optional: imported when a table is asked for

        position = np.arange(len(self.token_ids)) - np.repeat(self.offsets[:-1], self.lengths)
        return pd.DataFrame({"rollout": self.rollout, "position": position, "token_id": self.token_ids,
                             "logprob_a": self.logprobs_a, "logprob_b": self.logprobs_b, "delta": self.delta,
                             "ratio": self.ratio, "k1": self.k1, "k2": self.k2, "k3": self.k3,
                             "outside": self.outside})

    def view(self, i: int, *, vocab=None, **traits):
        """Rollout `i` as a widget (`RolloutView`): its text coloured by |Δ| per token, the tokens outside
        [1/clip, clip] marked, each token's numbers on hover. Token texts from `vocab` (a tokenizer, a
        runner, or a list of texts by id), else ``<id>``."""
        return show(self, "view", i, vocab=vocab, **traits)

    def to_corpus(self, vocab=None):
        """An `lv.Corpus`, one row per rollout with its mean and max |Δ|, share outside, k3 and reward as
        sortable columns (`lv.CorpusView(rollouts)` shows it; `to_parquet` stores it); token texts from
        `vocab` (id -> text), else ``<id>``: records/corpus/from_divergence.py."""
        from ..corpus.from_divergence import rollouts_corpus  # (records/corpus is not needed to build these)

        return rollouts_corpus(self, vocab=vocab)

    def __repr__(self) -> str:
        try:
            s = self.summary()
        except ValueError:
            return f"<Rollouts: {len(self)} rollouts, no token with both logprobs>"
        return (f"<Rollouts: {s['rollouts']} rollouts, {s['tokens']} tokens, mean |Δ| {s['mean_abs_delta']:.4g}, "
                f"KL(a‖b) k3 {s['mean_k3']:.4g}, {100 * s['share_outside']:.2f}% of ratios outside "
                f"[1/{self.clip:g}, {self.clip:g}]>")
