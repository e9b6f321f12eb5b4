"""The divergence view's payload: a `Divergence` as the frontend (js/divergence/) reads it.

Per token: its text, the KL range (low == high where exact), Δp, same-top, both sides' logprob of the
token that followed. For the hover, each scored position's alternatives of BOTH sides in one token
order (the base's top-K, then the candidate's tokens the base does not list, then the token that
followed if neither lists it), each with the side's logprob where that side gives it (NaN where it
does not: then the side's smallest listed probability bounds it, sent as ``*_floor``). O(N * K).
Floats cross as float32 (the wire codec's); inf (a range with no upper end) crosses as JSON null.
"""

from __future__ import annotations

import math

import numpy as np

from ...records.divergence import Divergence
from ...records.divergence.stats import Interval
from ..codec import array, texts

__all__ = ["encode_divergence", "header_stats", "hover_rows", "nice_range"]

_KLD_RANGES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)  # nats at full colour
_DELTA_P_RANGES = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def nice_range(values: np.ndarray, steps: tuple[float, ...]) -> float:
    """The value drawn at full colour: the 95th percentile of the finite positive `values`, rounded up
    to a round step, so a few large tokens do not leave every other one uncoloured."""
    v = values[np.isfinite(values) & (values > 0)]
    if not v.size:
        return steps[-1]
    q = float(np.quantile(v, 0.95))
    return next((x for x in steps if x >= q), steps[-1])


def _name(d: Divergence, token_id: int) -> str:
    return d.vocab[int(token_id)] if d.vocab is not None else f"#{int(token_id)}"


def _listed(ids: np.ndarray, lps: np.ndarray) -> dict[int, float]:
    return {int(i): float(lp) for i, lp in zip(ids, lps, strict=True) if i >= 0 and np.isfinite(lp)}


def hover_rows(d: Divergence) -> dict[str, list]:
    """Per position, the alternatives of both sides in one order: ``start`` (N + 1), and flat ``text``,
    ``base``, ``cand`` (logprobs, NaN where that side does not give the token), ``chosen`` (1 for the
    token that followed, whose logprob both sides always give)."""
    a = d.arrays
    out = {"start": [0], "text": [], "base": [], "cand": [], "chosen": []}
    for i in range(len(d)):
        if d.scored[i]:
            base = _listed(a["base_alt_ids"][i], a["base_alt_logprobs"][i])
            cand = _listed(a["cand_alt_ids"][i], a["cand_alt_logprobs"][i])
            chosen = int(d.token_ids[i])
            base[chosen], cand[chosen] = float(a["base_logprob"][i]), float(a["cand_logprob"][i])
            order = list(dict.fromkeys([*base, *cand]))  # the base's order, then the candidate's others
            for tid in order:
                out["text"].append(_name(d, tid))
                out["base"].append(base.get(tid, math.nan))
                out["cand"].append(cand.get(tid, math.nan))
                out["chosen"].append(int(tid == chosen))
        out["start"].append(len(out["text"]))
    return out


def _floor(lps: np.ndarray) -> np.ndarray:
    """Each row's smallest listed logprob (NaN where none): a token the side does not list is at most that."""
    finite = np.where(np.isfinite(lps), lps, np.inf)
    low = finite.min(axis=-1, initial=np.inf) if lps.ndim == 2 else np.full(len(lps), np.inf)
    return np.where(np.isfinite(low), low, np.nan)


def _number(x) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def _bounds(value) -> list:
    """[low, high] of a statistic (both the same where exact); None for an end that is unbounded."""
    if isinstance(value, Interval):
        return [_number(value.low), _number(value.high)]
    return [_number(value), _number(value)]


def header_stats(d: Divergence) -> dict:
    """The header's figures, from the record's own ``summary()``: mean and max KL as [low, high], same-top
    share (None where unknown), the PPL ratio, how many scored tokens and how many flips."""
    s = d.summary()
    return {"mean_kld": _bounds(s["mean_kld"]), "max_kld": _bounds(s["kld_max"]),
            "same_top": _number(s["same_top"]), "ppl_ratio": _number(s["ppl_ratio"]), "tokens": int(s["tokens"]),
            "flips": [int(i) for i in d.flips], "cutoff": d.cutoff, "exact": d.exact,
            "kld_range": nice_range(d.arrays["kld_low"], _KLD_RANGES),
            "delta_p_range": nice_range(np.abs(d.arrays["delta_p"]), _DELTA_P_RANGES)}


def encode_divergence(d: Divergence) -> dict:
    """The `_payload` trait (arrays and texts through `logprob_viz.views.codec`)."""
    a = d.arrays
    hover = hover_rows(d)
    return {
        "n": len(d),
        "tokens": texts("tokens", d.tokens),
        **{name: array(name, a[name], "float32") for name in
           ("kld_low", "kld_high", "delta_p", "same_top", "base_logprob", "cand_logprob")},
        "base_floor": array("base_floor", _floor(a["base_alt_logprobs"]), "float32"),
        "cand_floor": array("cand_floor", _floor(a["cand_alt_logprobs"]), "float32"),
        "alt_start": array("alt_start", hover["start"], "uint32"),
        "alt_texts": texts("alt_texts", hover["text"]),
        "alt_base": array("alt_base", np.asarray(hover["base"], dtype=np.float64), "float32"),
        "alt_cand": array("alt_cand", np.asarray(hover["cand"], dtype=np.float64), "float32"),
        "alt_chosen": array("alt_chosen", np.asarray(hover["chosen"], dtype=np.uint8), "uint8"),
    }
