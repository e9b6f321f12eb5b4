"""`lv.Audit`: which distribution a server's numbers come from, given a reference distribution.

At each audited position the server listed a few tokens with logprobs (the chosen one and its top K);
the reference (the same model run locally, teacher-forced: `sources.audit`) gives the whole
distribution ``ref`` (V,). The served numbers are explained as

- **raw**: ``served = ref`` (the model's own distribution at T = 1);
- **scaled**: ``served = log_softmax(ref / T)``, nothing cut. T comes from two listed tokens: the ratio
  ``(ref_a - ref_b) / (served_a - served_b)`` (scaling divides every difference by T, and a cut's
  renormalisation adds the same constant to every kept token, so the ratio holds for processed numbers
  too); the median over positions is the estimate;
- **processed**: ``served = ref / T - log Z_n`` for the ``n`` most likely tokens, where ``Z_n`` sums
  ``exp(ref / T)`` over them: scaled, cut to ``n`` tokens by top-k / top-p / min-p and renormalised.
  Every listed token then has the same offset ``ref / T - served`` (= log Z_n), which gives ``n``;
  a listed ``-inf`` is a token the server cut. Which engines' orders explain the kept sizes is the
  setting interval each order allows at every position (`explain_cuts`);
- **mismatch**: some position fits none of these within the tolerance; ``positions`` holds them,
  served and reference side by side.

The tolerance (`DEFAULT_TOLERANCE`, in nats, on each logprob) covers what the same weights give on
two engines: float32 kernels differ by ~1e-4 nats, a reduced-precision (bf16/fp16) server by up to
~0.25 (see DESIGN: "bf16 moves logprobs by up to 0.25 nats"), so audit a bf16 server with a larger one.

A reference may also be known at its N most likely tokens only (`TopN`: a llama-server's own raw
top-N, teacher-forced, where no local runner computes what the server computes). Their values are
out of the whole vocabulary, so raw numbers and every kept set of at most N tokens are checked
exactly. What N values cannot give is the whole vocabulary's normaliser at T != 1: it is bounded
from the tail's mass ``m`` (1 - the top N's) and the N-th probability ``p_N`` (every tail token is
at most ``p_N``, and the tail sums to ``m``): ``sum p^(1/T)`` over the tail lies between
``m * p_N^(1/T - 1)`` and ``U * (m / U)^(1/T)`` (the tail spread evenly over its ``U`` tokens). A
scaled distribution is then "consistent" when its normaliser lies within those bounds, and one cut
to more than N tokens gives numbers in the same range: where the bounds are wider than the
tolerance, the audit says so in ``limits`` (and its explanation) instead of deciding.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .samplers import ENGINES, sampled_from

__all__ = ["Audit", "Listed", "TopN", "classify", "explain_cuts", "engines_with", "log_z_bounds", "DEFAULT_TOLERANCE",
           "KINDS", "verdict"]

KINDS = ("raw", "scaled", "processed", "mismatch")
DEFAULT_TOLERANCE = 0.02  # nats per logprob: float32 engines agree far closer; see the module docstring
_MIN_GAP = 0.1  # nats: a pair of served values closer than this says little about T

# Which engines apply a lone cut after temperature (judged on softmax(ref / T)), and which at T = 1.
_AFTER_T = ("transformers", "vllm", "sglang", "ollama")
_AT_T1 = ("llama.cpp",)


@dataclass
class Listed:
    """What the server listed at one position: token ids and their served logprobs (-inf: cut)."""

    index: int  # the position in the trace
    token: str  # the chosen token's text, for the report
    ids: np.ndarray  # (L,) int
    values: np.ndarray  # (L,) float64


@dataclass
class TopN:
    """A reference known at its ``n`` most likely tokens only (and perhaps the chosen token beyond them):
    ``logprobs`` (V,) their log-probabilities out of the whole vocabulary, NaN at every other token."""

    logprobs: np.ndarray  # (V,) float64
    n: int


@dataclass
class Audit:
    """What a served trace's numbers are (see the module docstring).

    ``kind``: one of ``KINDS``. ``settings``: the inferred ``temperature``; for processed numbers
    ``kept`` (per position, the kept set's size or its range) and ``engines`` (whose orders explain
    the cuts, with each setting's interval under ``cuts``); where the request's settings are known,
    ``requested`` and ``engines_with_requested`` (whose order with exactly those keeps those sets).
    ``positions``: the positions whose numbers fit no explanation, each with ``served`` and
    ``reference`` ({token id: logprob}). ``tolerance``: nats per logprob. ``explanation``: one sentence a person reads.
    ``limits``: what a top-N reference (`TopN`) could not decide (also in ``explanation``); empty otherwise.
    """

    kind: str
    settings: dict
    positions: list[dict]
    tolerance: float
    explanation: str
    checked: int = 0
    fits: dict = field(default_factory=dict, repr=False)  # explanation -> per position: fits?
    limits: list[str] = field(default_factory=list)

    def verdict(self) -> dict:
        """What a trace view shows of this audit (`verdict`): JSON-safe, kept in ``trace.meta["audit"]``."""
        return verdict(self)

    def __repr__(self) -> str:
        return f"Audit(kind={self.kind!r}, settings={self.settings!r}, {len(self.positions)} positions disagree)"


_CUT_NAMES = {"top_k": "top-k", "top_p": "top-p", "min_p": "min-p"}


def verdict(audit: Audit) -> dict:
    """The badge a trace view shows: ``label`` ("raw", "scaled (T 0.7)", "processed (T 0.7, top-p 0.9)",
    "3 tokens disagree"), ``kind``, ``positions`` (the disagreeing tokens' indices in the trace, in
    order), ``explanation`` and ``tolerance``."""
    t = audit.settings.get("temperature")
    label = audit.kind
    if audit.kind == "scaled":
        label = f"scaled (T {t:.2g})"
    elif audit.kind == "processed":
        label = f"processed ({', '.join([f'T {t:.2g}', *_cut_words(audit.settings)])})"
    elif audit.kind == "mismatch":
        n = len(audit.positions)
        label = f"{n} token{'s' if n != 1 else ''} disagree{'' if n != 1 else 's'}"
    return {"kind": audit.kind, "label": label, "positions": sorted(int(p["index"]) for p in audit.positions),
            "explanation": audit.explanation, "tolerance": audit.tolerance}


def _cut_words(settings: dict) -> list[str]:
    """The cut settings for a label: the request's (where known and not a no-op), else the first cut
    the audit found with the interval of settings that explains it ("top-p 0.88-0.91")."""
    requested = settings.get("requested") or {}
    noop = {"top_k": (None, 0, -1), "top_p": (None, 1.0), "min_p": (None, 0.0)}
    words = [f"{word} {requested[name]:g}" for name, word in _CUT_NAMES.items()
             if requested.get(name) not in noop[name]]
    if words or not settings.get("cuts"):
        return words
    cut = settings["cuts"][0]
    low, high = cut["low"], cut["high"]
    return [f"{_CUT_NAMES[cut['setting']]} {low:.3g}" + ("" if f"{low:.3g}" == f"{high:.3g}" else f"\u2013{high:.3g}")]


def _lse(x: np.ndarray) -> float:
    top = x.max()
    return float(top + np.log(np.exp(x - top).sum()))


def _values(ref) -> np.ndarray:
    return ref.logprobs if isinstance(ref, TopN) else ref


def _prefix(ref, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(the ids whose rank the reference knows, most likely first; log Z_n at T for n = 1..their number):
    every token of a whole reference, the N most likely of a `TopN`."""
    lp = _values(ref)
    if isinstance(ref, TopN):
        known = np.nonzero(~np.isnan(lp))[0]
        order = known[np.argsort(-lp[known], kind="stable")][:ref.n]
    else:
        order = np.argsort(-lp, kind="stable")
    return order, np.logaddexp.accumulate(lp[order] / t)


def _tail_log_bounds(ref: TopN, t: float) -> tuple[float, float]:
    """log of the lowest and highest sum of p^(1/T) over the tokens beyond a TopN's N (module docstring)."""
    top = np.sort(ref.logprobs[~np.isnan(ref.logprobs)])[::-1][:ref.n]
    mass = 1.0 - float(np.exp(top).sum())
    unknown = len(ref.logprobs) - ref.n
    if mass <= 0 or unknown <= 0:
        return -np.inf, -np.inf
    every_at_most_p_n = np.log(mass) + (1 / t - 1) * float(top[-1])
    spread_evenly = np.log(unknown) + (np.log(mass) - np.log(unknown)) / t
    return min(every_at_most_p_n, spread_evenly), max(every_at_most_p_n, spread_evenly)


def log_z_bounds(ref, t: float) -> tuple[float, float]:
    """log of the whole vocabulary's sum of exp(ref / T): exact (lo = hi) for a whole reference; for a
    `TopN`, its N tokens' sum plus the tail's bounds."""
    if not isinstance(ref, TopN):
        z = _lse(ref / t)
        return z, z
    _, cumulative = _prefix(ref, t)
    tail_lo, tail_hi = _tail_log_bounds(ref, t)
    return float(np.logaddexp(cumulative[-1], tail_lo)), float(np.logaddexp(cumulative[-1], tail_hi))


def infer_temperature(listed: list[Listed], refs: list) -> float | None:
    """The median over positions of (ref_a - ref_b) / (served_a - served_b) for the two finite listed
    tokens (that the reference knows) furthest apart; None where no position lists two distinguishable tokens."""
    estimates = []
    for row, ref in zip(listed, refs, strict=True):
        lp = _values(ref)[row.ids]
        usable = np.isfinite(row.values) & ~np.isnan(lp)
        if usable.sum() < 2:
            continue
        values, lp = row.values[usable], lp[usable]
        a, b = int(values.argmax()), int(values.argmin())
        if values[a] - values[b] >= _MIN_GAP:
            estimates.append((lp[a] - lp[b]) / (values[a] - values[b]))
    return float(np.median(estimates)) if estimates else None


def _fits_scaled(row: Listed, ref, t: float, tol: float) -> bool:
    """served = ref / T - log Z at every listed token, for one log Z within the reference's bounds."""
    lp = _values(ref)[row.ids]
    if not np.isfinite(row.values).all() or np.isnan(lp).any():
        return False  # a cut token (not a whole distribution), or one beyond a TopN's N
    offsets = lp / t - row.values
    lo, hi = log_z_bounds(ref, t)
    return bool(max(lo, offsets.max() - tol) <= min(hi, offsets.min() + tol))


def kept_range(row: Listed, ref, t: float, tol: float) -> tuple[int, int] | None:
    """(lo, hi): the kept sizes n for which ``served = ref / T - log Z_n`` at every listed token; None: none.
    For a `TopN` whose N tokens are too few, ``hi`` is the vocabulary's size: more than N, how many unknown."""
    lp = _values(ref)
    finite, known = np.isfinite(row.values), ~np.isnan(lp[row.ids])
    if not (finite & known).any():
        return None
    offsets = lp[row.ids[finite & known]] / t - row.values[finite & known]  # each listed kept token's log Z_n
    if offsets.max() - offsets.min() > 2 * tol:
        return None  # the kept tokens do not share one normaliser
    order, cumulative = _prefix(ref, t)
    n_known, vocab = len(order), len(lp)
    rank = np.full(vocab, n_known + 1, dtype=np.int64)  # beyond a TopN's N: somewhere after it
    rank[order] = np.arange(1, n_known + 1)
    need = int(rank[row.ids[finite]].max())  # every listed kept token is inside the kept prefix
    cut = rank[row.ids[~finite]]
    cut = cut[cut <= n_known]  # a cut token beyond N: its rank, hence the limit it sets, is unknown
    limit = int(cut.min()) - 1 if cut.size else vocab  # every listed cut token is outside it
    fitting = np.nonzero(np.abs(cumulative - offsets.mean()) <= tol)[0] + 1
    fitting = fitting[(fitting >= need) & (fitting <= limit)]
    beyond = n_known < vocab and limit > n_known and \
        cumulative[-1] - tol <= offsets.mean() <= log_z_bounds(ref, t)[1] + tol
    if beyond:
        return (int(fitting.min()) if fitting.size else n_known + 1), vocab
    return (int(fitting.min()), int(fitting.max())) if fitting.size else None


def classify(listed: list[Listed], refs: list, tol: float = DEFAULT_TOLERANCE,
             requested: dict | None = None) -> Audit:
    """The simplest explanation that fits every position (raw, then scaled, then processed), else a
    mismatch at the positions that fit none. `refs`: per position the reference's whole log-probabilities
    (V,) or a `TopN`. `requested`: the sampling settings the request sent (temperature, top_k, top_p,
    min_p), when known: processed numbers then also name the engines whose order, with exactly those
    settings, keeps the kept sets found."""
    if not listed:
        raise ValueError("the provider returned no logprobs: there is nothing to audit")
    t = infer_temperature(listed, refs)
    fits = {"raw": [_fits_scaled(r, ref, 1.0, tol) for r, ref in zip(listed, refs, strict=True)]}
    temps = [1.0] if t is None or abs(t - 1.0) < 1e-3 else [1.0, t]
    kept = {}
    for temp in temps:
        fits[("scaled", temp)] = [_fits_scaled(r, ref, temp, tol) for r, ref in zip(listed, refs, strict=True)]
        kept[temp] = [kept_range(r, ref, temp, tol) for r, ref in zip(listed, refs, strict=True)]
        fits[("processed", temp)] = [k is not None for k in kept[temp]]
    t_best = temps[-1]
    settings = {"temperature": round(t_best, 4)}
    if all(fits["raw"]):
        return Audit("raw", {"temperature": 1.0}, [], tol, "the model's own distribution (T = 1)", len(listed), fits)
    if all(fits[("scaled", t_best)]):
        limits = _scaled_limits(refs, t_best, tol)
        sentence = " ".join([f"softmax(logits / {t_best:.3g}), nothing cut", *limits])
        return Audit("scaled", settings, [], tol, sentence, len(listed), fits, limits)
    for temp in reversed(temps):
        if all(fits[("processed", temp)]):
            return _processed(listed, refs, temp, kept[temp], tol, fits, requested)
    bad = [i for i in range(len(listed)) if not any(per[i] for per in fits.values())]
    positions = [_side_by_side(listed[i], refs[i]) for i in bad]
    sentence = (f"{len(bad)} of {len(listed)} tokens disagree with every explanation (raw, scaled at T = "
                f"{t_best:.3g}, processed) by more than {tol} nats")
    return Audit("mismatch", settings, positions, tol, sentence, len(listed), fits)


def _top_n(refs: list) -> int | None:
    sizes = [ref.n for ref in refs if isinstance(ref, TopN)]
    return min(sizes) if sizes else None


def _scaled_limits(refs: list, t: float, tol: float) -> list[str]:
    """What a TopN reference leaves open about a scaled verdict: the normaliser's bounds, where wider than tol."""
    n = _top_n(refs)
    if n is None:
        return []
    width = max(hi - lo for lo, hi in (log_z_bounds(ref, t) for ref in refs))
    if width <= 2 * tol:
        return []
    return [f"(the reference knew each position's {n} most likely tokens only: the tokens beyond them bound the "
            f"normaliser within {width:.3g} nats, so a cut that keeps more than {n} tokens would give the same "
            f"numbers; the verdict cannot tell it from nothing cut)"]


def _side_by_side(row: Listed, ref) -> dict:
    lp = _values(ref)
    return {"index": row.index, "token": row.token,
            "served": {int(i): float(v) for i, v in zip(row.ids, row.values, strict=True)},
            "reference": {int(i): float(lp[i]) for i in row.ids}}


def _processed(listed, refs, t, kept, tol, fits, requested) -> Audit:
    cuts = explain_cuts(refs, kept, t)
    engines = sorted({engine for c in cuts for engine in c["engines"]})
    settings = {"temperature": round(t, 4), "kept": [k if k[0] != k[1] else k[0] for k in kept],
                "engines": engines, "cuts": cuts}
    limits = []
    n = _top_n(refs)
    beyond = sum(k[0] > n for k in kept) if n is not None else 0
    if beyond:
        limits.append(f"(at {beyond} positions the kept set holds more than the reference's {n} tokens: how many, "
                      "and so the cuts' intervals, the reference cannot say exactly)")
    if requested:
        settings["requested"] = dict(requested)
        settings["engines_with_requested"], undecided = engines_with(refs, kept, requested)
        if undecided:
            limits.append(f"({', '.join(undecided)}: not decided, their order judges top-p at T on the whole "
                          f"vocabulary, beyond the reference's {n} tokens)")
    named = "; ".join(f"{c['setting']} in [{c['low']:.4g}, {c['high']:.4g}] ({', '.join(c['engines'])})" for c in cuts)
    sentence = f"scaled at T = {t:.3g} and cut to the most likely tokens: " + (
        named or "no single top-k, top-p or min-p explains every position")
    return Audit("processed", settings, [], tol, " ".join([sentence, *limits]), len(listed), fits, limits)


def engines_with(refs: list, kept: list[tuple[int, int]], requested: dict) -> tuple[list[str], list[str]]:
    """(the engines whose order, with the requested settings, keeps a set of the found size everywhere;
    those a `TopN` reference cannot decide). A TopN knows its N tokens' probabilities out of the whole
    vocabulary, so every cut at T = 1 (llama.cpp's), every min-p (a ratio) and every cut after a top-k
    within the N are decided; a top-p judged at T on the whole vocabulary (the others' without such a
    top-k, SGLang's joint one always) needs the normaliser, and is not."""
    names = ("temperature", "top_k", "top_p", "min_p")
    settings = {name: requested[name] for name in names if requested.get(name) is not None}
    n = _top_n(refs)
    undecided = []
    if n is not None and settings.get("top_p", 1.0) < 1.0:
        top_k_first = 1 <= settings.get("top_k", 0) <= n
        undecided = [e for e in ENGINES if e != "llama.cpp" and (e == "sglang" or not top_k_first)]
    rows = [_filled(ref) for ref in refs]
    out = []
    for engine in (e for e in ENGINES if e not in undecided):
        sizes = [int(np.isfinite(sampled_from(row, engine=engine, **settings)).sum()) for row in rows]
        if all(lo <= size <= hi for size, (lo, hi) in zip(sizes, kept, strict=True)):
            out.append(engine)
    return out, undecided


def _filled(ref) -> np.ndarray:
    """A whole row for a sampler: a TopN's tail spread evenly over its unknown tokens (each at most the
    N-th; a decided order keeps the same tokens among the N, and more than N where the truth does)."""
    if not isinstance(ref, TopN):
        return ref
    lp = ref.logprobs.copy()
    unknown = np.isnan(lp)
    mass = 1.0 - float(np.exp(lp[~unknown]).sum())
    lp[unknown] = np.log(mass / unknown.sum()) if mass > 0 and unknown.any() else -np.inf
    return lp


def explain_cuts(refs: list, kept: list[tuple[int, int]], t: float) -> list[dict]:
    """Each lone cut (top-k, top-p, min-p) with the interval of its setting that gives the kept sizes at
    every position, in the orders that judge it after temperature and in llama.cpp's (at T = 1). With a
    `TopN` reference the intervals hold every setting that may give those sizes (the normaliser's bounds)."""
    out = []
    low = max(k[0] for k in kept)
    high = min(k[1] for k in kept)
    if low <= high:
        out.append({"setting": "top_k", "low": float(low), "high": float(high), "engines": list(_AFTER_T + _AT_T1)})
    for temp, engines in ((t, _AFTER_T), (1.0, _AT_T1)):
        for setting, bound in (("top_p", _top_p_interval), ("min_p", _min_p_interval)):
            lo, hi = 0.0, 1.0
            for ref, (n_lo, n_hi) in zip(refs, kept, strict=True):
                a, b = bound(ref, temp, n_lo, n_hi)
                lo, hi = max(lo, a), min(hi, b)
            if lo < hi:
                out.append({"setting": setting, "low": lo, "high": hi, "engines": list(engines)})
    return out


def _top_p_interval(ref, t: float, n_lo: int, n_hi: int) -> tuple[float, float]:
    """Top-p keeps n tokens for p in (P_{n-1}, P_n], P_m = Z_m / Z the m most likely tokens' mass at T."""
    _, cumulative = _prefix(ref, t)
    z_lo, z_hi = log_z_bounds(ref, t)
    below = float(np.exp(cumulative[n_lo - 2] - z_hi)) if n_lo >= 2 else 0.0
    above = float(np.exp(cumulative[n_hi - 1] - z_lo)) if n_hi <= len(cumulative) else 1.0
    return below, min(above, 1.0)


def _min_p_interval(ref, t: float, n_lo: int, n_hi: int) -> tuple[float, float]:
    """Min-p keeps n tokens for m in (r_{n+1}, r_n], r the ratio to the most likely token at T."""
    order, _ = _prefix(ref, t)
    scaled = _values(ref)[order] / t
    ratios = np.exp(scaled - scaled[0])
    below = float(ratios[n_hi]) if n_hi < len(ratios) else 0.0  # beyond the known ranks: as low as 0
    return below, float(ratios[min(n_lo, len(ratios)) - 1])
