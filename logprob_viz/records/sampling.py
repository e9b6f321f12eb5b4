"""The distribution sampled from under sampling settings, and where a token stays sampleable: one
statement of the rules for the local runner and the views.

The rules are transformers' warpers, in their order: temperature, then top-k, then top-p, then
min-p. Each cut is written once below (`top_k_removes`, `top_p_removes`, `min_p_removes`) with plain
comparisons that numpy arrays and torch tensors both take: the local runner applies them to its
logits on the model's device (`sources.local.distribution.process`), the explorer to a position's
whole next-token distribution in numpy float64 (`sampled_from`, `band_of`). Settings are anything
with ``temperature``, ``top_k``, ``top_p`` and ``min_p`` (the runner's `Sampling`, the explorer's
`Settings`).

None of the rules reorders the tokens, so the most likely token is the same under every setting;
they only reshape the probabilities and cut the tail. That is what the band teaches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = ["sampled_from", "Band", "band_of", "top_k_removes", "top_p_removes", "min_p_removes",
           "TEMPERATURE_RANGE", "TOP_P_RANGE", "MIN_P_RANGE"]


class SamplingSettings(Protocol):
    temperature: float
    top_k: int
    top_p: float
    min_p: float


def top_k_removes(scores, kth):
    """Top-k: the tokens whose score is below the k-th highest score `kth` go. Ties with the k-th
    stay, so a tie can keep more than k (transformers' TopKLogitsWarper does the same)."""
    return scores < kth


def top_p_removes(cumulative, top_p: float):
    """Top-p: `cumulative` is each token's probability summed with every less likely token's (from
    the least likely up); a token goes when that is at most 1 - top_p, so the most likely tokens that
    hold top_p of the mass stay. The caller keeps the most likely token whatever this says
    (transformers' TopPLogitsWarper: the same comparison, min_tokens_to_keep=1)."""
    return cumulative <= (1 - top_p)


def min_p_removes(scores, top_score, min_p: float):
    """Min-p: p >= min_p * p(top) is, in scores (logits / T, up to a constant), score >= top score +
    log(min_p); the tokens below go. No softmax needed, and the top token always stays."""
    return scores < top_score + math.log(min_p)


# The explorer sliders' ranges: the band is drawn over what the person can set.
TEMPERATURE_RANGE = (0.0, 2.0)
TOP_P_RANGE = (0.05, 1.0)
MIN_P_RANGE = (0.0, 1.0)


def sampled_from(logprobs: np.ndarray, settings: SamplingSettings) -> np.ndarray:
    """Probabilities (V,) of the distribution `settings` sample from, given the model's logprobs (V,).

    Temperature 0 is greedy: all the mass on the most likely token.
    """
    lp = np.asarray(logprobs, dtype=np.float64)
    order = np.argsort(-lp, kind="stable")  # most likely first
    weights, kept = _kept_prefix(lp[order], settings.temperature, settings.top_k, settings.top_p, settings.min_p)
    out = np.zeros_like(lp)
    out[order[:kept]] = weights[:kept] / weights[:kept].sum()
    return out


def _kept_prefix(desc: np.ndarray, temperature: float, top_k: int, top_p: float,
                 min_p: float) -> tuple[np.ndarray, int]:
    """(weights, m): exp((logprob - top) / T) of the tokens in descending order, and how many of them
    the settings keep. Every rule keeps a most-likely-first prefix (none reorders), so m says it all.
    """
    if temperature <= 0:
        return np.ones(1), 1  # greedy: the most likely token only
    scores = desc / temperature  # (V,) descending, as the runner's logits / T up to a constant
    n = len(desc)
    if 0 < top_k < n:
        n = int(np.count_nonzero(~top_k_removes(scores, scores[top_k - 1])))
    weights = np.exp(scores[:n] - scores[0])  # (n,): the top token's weight is 1
    kept = n
    if top_p < 1.0:
        probs = weights / weights.sum()
        cumulative = np.cumsum(probs[::-1])[::-1]  # each token's mass and every less likely one's
        kept = max(1, int(np.count_nonzero(~top_p_removes(cumulative, top_p))))  # the top token stays
    if min_p > 0.0:
        kept = min(kept, max(1, int(np.count_nonzero(~min_p_removes(scores[:kept], scores[0], min_p)))))
    return weights, kept


@dataclass
class Band:
    """Over which values of one setting (the others as they are) a token can be sampled.

    ``values`` / ``probs``: the setting's grid and the token's probability there (drawn);
    ``sampleable_from`` / ``sampleable_to``: the interval in which the token can be sampled
    (None: at no value in the range); ``only_from`` / ``only_to``: where it is the only token left
    (sampled for sure; None: nowhere in the range). ``rank``: the token's rank (1: the most likely),
    the same under every setting.
    """

    setting: str
    low: float
    high: float
    current: float
    values: np.ndarray
    probs: np.ndarray
    sampleable_from: float | None
    sampleable_to: float | None
    only_from: float | None
    only_to: float | None
    rank: int


def band_of(logprobs: np.ndarray, token_id: int, settings: SamplingSettings, points: int = 81,
            kept_count=None) -> dict[str, Band]:
    """The token's band over temperature, top-p and min-p (each swept with the others held).

    ``kept_count``: another order's cut, ``(desc, temperature, top_k, top_p, min_p) -> how many of the
    descending logprobs stay`` (an engine's, from `records.samplers.kept_count`); None: the rules here.

    The ends of each interval come from bisection on a condition that is monotone in the setting
    (to ~1e-9), not from the grid; the grid only draws the probability.
    """
    lp = np.asarray(logprobs, dtype=np.float64)
    order = np.argsort(-lp, kind="stable")
    desc = lp[order]
    rank = int(np.nonzero(order == token_id)[0][0])  # 0-based
    s = settings

    def state(temperature, top_p, min_p) -> tuple[float, int]:
        """(the token's probability, how many tokens are kept) under these values."""
        if kept_count is None:
            weights, kept = _kept_prefix(desc, temperature, s.top_k, top_p, min_p)
        else:  # the kept tokens renormalised at the temperature, in every engine
            kept = kept_count(desc, temperature, s.top_k, top_p, min_p)
            weights = np.exp((desc[:kept] - desc[0]) / temperature) if temperature > 0 else np.ones(1)
        return (float(weights[rank] / weights[:kept].sum()) if rank < kept else 0.0), kept

    knobs = {  # setting -> (range, current value, the state as a function of that setting alone)
        "temperature": (TEMPERATURE_RANGE, max(s.temperature, 0.0), lambda v: state(v, s.top_p, s.min_p)),
        "top_p": (TOP_P_RANGE, s.top_p, lambda v: state(s.temperature, v, s.min_p)),
        "min_p": (MIN_P_RANGE, s.min_p, lambda v: state(s.temperature, s.top_p, v)),
    }
    if s.temperature <= 0:  # greedy: top-p and min-p change nothing; swept at T = 1 they would mislead
        knobs["top_p"] = (TOP_P_RANGE, s.top_p, lambda v: state(0.0, v, s.min_p))
        knobs["min_p"] = (MIN_P_RANGE, s.min_p, lambda v: state(0.0, s.top_p, v))
    bands = {}
    for name, ((low, high), current, at) in knobs.items():
        grid = np.linspace(low, high, points)
        probs = np.array([at(v)[0] for v in grid])
        sampleable = _interval(lambda v, at=at: rank < at(v)[1], low, high)
        alone = _interval(lambda v, at=at: at(v)[1] == 1, low, high) if rank == 0 else (None, None)
        bands[name] = Band(name, low, high, current, grid, probs, *sampleable, *alone, rank + 1)
    return bands


def _bisect(condition, low: float, high: float, steps: int = 40) -> float:
    """The value between `low` and `high` where `condition` changes (it holds at exactly one end)."""
    at_low = condition(low)
    for _ in range(steps):
        mid = (low + high) / 2
        if condition(mid) == at_low:
            low = mid
        else:
            high = mid
    return (low + high) / 2


def _interval(condition, low: float, high: float) -> tuple[float | None, float | None]:
    """Where in [low, high] `condition` holds, for one that changes at most once over the range
    (temperature and top-p keep more tokens as they grow, min-p fewer); (None, None): nowhere."""
    at_low, at_high = condition(low), condition(high)
    if at_low and at_high:
        return low, high
    if not at_low and not at_high:
        return None, None
    edge = _bisect(condition, low, high)
    return (edge, high) if at_high else (low, edge)
