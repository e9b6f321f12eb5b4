"""A pinned position under other sampling settings when only the top K are known (a server's
response): for each known token, a range its probability certainly lies in.

A server returns the K most likely tokens' logprobs; the rest of the vocabulary holds the remaining
mass R = 1 - sum p_known, in tokens each no more likely than the K-th. How that mass is spread is
unknown (one token or thousands), and temperature, top-k, top-p and min-p treat the two cases
differently, so no single number follows. But every spread gives a normalizer within bounds that
the known numbers fix, and the range below holds for every one of them (tests/records/
test_sampling_bounds.py tries many spreads). Where it is a point (T = 1 with no cut, T = 0,
top-k <= K, a min-p that cuts the whole tail) the number is exact.

Weights are relative to the most likely token: w(p) = (p / p_1) ** (1 / T), as in sampling.py
(the same rules in the same order: temperature, top-k, top-p, min-p). Another engine's order
(`engine=`, records/samplers.py) goes through the counts that engine can keep for some spread of the
rest (`samplers.kept_counts`), then the same normaliser bounds: ranges that hold, a little wider
than transformers' own where a cut depends on the rest.
"""

from __future__ import annotations

import math

import numpy as np

from .samplers import ENGINES, kept_counts
from .samplers import sampled_from as engine_sampled_from
from .sampling import SamplingSettings, min_p_removes, sampled_from

__all__ = ["probability_ranges"]


def probability_ranges(known_logprobs, settings: SamplingSettings,
                       engine: str = "transformers") -> list[tuple[float, float]]:
    """(low, high) of each known token's probability under `settings` in `engine`'s order (one of
    `samplers.ENGINES`), for logprobs of the K most likely tokens (in any order; the rest of the
    vocabulary unknown). low == high where exact."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")
    lp = np.asarray(known_logprobs, dtype=np.float64)
    if lp.size == 0:
        return []
    order = np.argsort(-lp, kind="stable")
    desc = lp[order]
    ranges = _ranges_desc(desc, settings) if engine == "transformers" else _engine_ranges(desc, settings, engine)
    out: list[tuple[float, float]] = [(0.0, 0.0)] * len(lp)
    for place, index in enumerate(order):
        out[int(index)] = ranges[place]
    return out


def _ranges_desc(desc: np.ndarray, s: SamplingSettings) -> list[tuple[float, float]]:
    p = np.exp(desc)
    tail = max(0.0, 1.0 - float(p.sum()))  # the unknown tokens' mass
    k = len(desc)
    if s.temperature <= 0:  # greedy: the most likely token, which is known
        return [(1.0, 1.0)] + [(0.0, 0.0)] * (k - 1)
    if tail <= 0 or 0 < s.top_k <= k:  # nothing unknown can be kept: exact from the known tokens
        exact = sampled_from(desc, s)
        return [(float(x), float(x)) for x in exact]
    alpha = 1.0 / s.temperature
    w = np.exp((desc - desc[0]) * alpha)  # (k,): the known tokens' weights, the top one's 1
    extra = math.inf if s.top_k <= 0 else s.top_k - k  # unknown tokens top-k may keep
    p_top, p_last = float(p[0]), float(p[-1])
    # min-p's cut among the known tokens, relative to the most likely (known) one: a prefix, known exactly
    scores = desc * alpha
    kept = ~min_p_removes(scores, scores[0], s.min_p) if s.min_p > 0 else np.ones(k, bool)
    final_tail = _tail_bounds(tail, p_top, p_last, alpha, s.min_p, extra)  # what the last normalizer holds
    if s.top_p >= 1.0:
        known = float(w[kept].sum())
        return [_ratio(float(x), known + final_tail[1], known + final_tail[0]) if ok else (0.0, 0.0)
                for x, ok in zip(w, kept, strict=True)]
    # top-p comes before min-p: it sees the tokens top-k keeps, min-p's cut not yet made
    low_tail, high_tail = _tail_bounds(tail, p_top, p_last, alpha, 0.0, extra)
    total = float(w.sum())
    return _top_p_ranges(w, kept, s.top_p, (total + low_tail, total + high_tail), final_tail[1])


def _tail_bounds(mass: float, p_top: float, p_last: float, alpha: float, min_p: float,
                 extra: float) -> tuple[float, float]:
    """(low, high) of the summed weight of the unknown tokens kept by min-p and top-k: `mass` spread
    over tokens each of probability <= p_last, at most `extra` of them counted (top-k).

    sum w = sum p_j * r(p_j) with r(p) = w(p) / p = p ** (alpha - 1) / p_top ** alpha, so the sum
    lies between mass * min r and mass * max r over the probabilities a kept token can have.
    """
    def w(x: float) -> float:
        return (x / p_top) ** alpha

    floor = p_top * min_p ** (1.0 / alpha) if min_p > 0 else 0.0  # the least probability min-p keeps
    if floor > p_last:
        return 0.0, 0.0  # min-p cuts every unknown token (each is at most as likely as the last known)
    if alpha >= 1:  # r grows with p: at most as if all the mass sat in tokens as likely as the last
        high = min(mass, extra * p_last) / p_last * w(p_last)
    elif floor > 0:  # r falls with p: at most as if all sat at min-p's threshold
        high = min(mass / floor * w(floor), extra * w(p_last))
    elif math.isinf(extra):
        high = math.inf  # thousands of tiny tokens: each gains from a high temperature, unbounded
    else:  # a concave weight: the most when `extra` tokens share the mass equally
        high = extra * w(min(p_last, mass / extra))
    if min_p > 0 or not math.isinf(extra):
        low = 0.0  # spread thin enough, every unknown token is cut (or the kept ones hold nearly nothing)
    elif alpha > 1:
        low = 0.0  # spread over many tokens, a low temperature shrinks them towards nothing
    else:
        low = mass / p_last * w(p_last)  # r falls with p: the least when all sit as likely as the last
    return low, high


def _ratio(weight: float, high_norm: float, low_norm: float) -> tuple[float, float]:
    low = 0.0 if math.isinf(high_norm) else weight / high_norm
    return low, weight / low_norm


def _top_p_ranges(w: np.ndarray, min_p_kept: np.ndarray, top_p: float, norm: tuple[float, float],
                  tail_high: float) -> list[tuple[float, float]]:
    """Top-p over the known weights (most likely first), then min-p, when the normalizer top-p
    divides by is only known to lie in `norm`: a token stays when the mass before it is under top_p
    of that normalizer. `tail_high`: the most the unknown tokens can add to the last normalizer."""
    before = np.concatenate([[0.0], np.cumsum(w)[:-1]])
    surely = (before < top_p * norm[0]) & min_p_kept  # kept whatever the unknown tokens hold
    maybe = (before < top_p * norm[1]) & min_p_kept  # kept for some of them
    surely[0] = maybe[0] = True  # the most likely token always stays
    cumulative = np.cumsum(w)
    fewest, most = int(surely.sum()), int(maybe.sum())  # both prefixes
    least_norm = float(cumulative[fewest - 1])
    # at most every token that may stay, and the unknown ones too when every known token may stay
    most_norm = float(cumulative[most - 1]) + (tail_high if most == len(w) else 0.0)
    out = []
    for i, weight in enumerate(w):
        if surely[i]:
            out.append(_ratio(float(weight), most_norm, least_norm))
        elif maybe[i]:
            out.append((0.0, float(weight / cumulative[i])))  # cut for some spreads; kept, at most this
        else:
            out.append((0.0, 0.0))
    return out


def _engine_ranges(desc: np.ndarray, s: SamplingSettings, engine: str) -> list[tuple[float, float]]:
    """`engine`'s ranges: the counts it can keep (`kept_counts`), each known token's p over each."""
    p = np.exp(desc)
    tail = max(0.0, 1.0 - float(p.sum()))
    k = len(desc)
    arguments = {"temperature": s.temperature, "top_k": s.top_k, "top_p": s.top_p, "min_p": s.min_p}
    if s.temperature <= 0:
        return [(1.0, 1.0)] + [(0.0, 0.0)] * (k - 1)
    if tail <= 0:  # nothing unknown: exact
        return [(float(x), float(x)) for x in np.exp(engine_sampled_from(desc, **arguments, engine=engine))]
    p_top, p_last = float(p[0]), float(p[-1])

    def tail_weight(alpha: float, floor: float, extra: float) -> tuple[float, float]:
        as_min_p = (floor / p_top) ** alpha if floor > 0 else 0.0  # (_tail_bounds takes min-p at that alpha)
        return _tail_bounds(tail, p_top, p_last, alpha, as_min_p, extra)

    counts = kept_counts(desc, tail_weight, **arguments, engine=engine)
    alpha = 1.0 / s.temperature
    w = np.exp((desc - desc[0]) * alpha)  # every engine renormalises what it keeps at T
    cumulative = np.cumsum(w)
    unknown_low, unknown_high = tail_weight(alpha, counts.floor, counts.extra) if counts.more else (0.0, 0.0)
    if s.top_p < 1.0:
        unknown_low = 0.0  # top-p may keep only some of the unknown tokens
    out = []
    for i, weight in enumerate(w):
        if i >= counts.high and not counts.more:
            out.append((0.0, 0.0))
            continue
        if counts.more:
            low = _ratio(float(weight), float(cumulative[-1]) + unknown_high, 1.0)[0]
        else:
            low = float(weight / cumulative[counts.high - 1])
        fewest = max(counts.low, i + 1)  # the fewest kept that still keep this token
        high = float(weight / cumulative[fewest - 1]) if fewest <= counts.high else \
            float(weight / (cumulative[-1] + unknown_low))
        out.append((0.0 if counts.low <= i else low, high))
    return out
