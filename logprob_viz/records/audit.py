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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .samplers import ENGINES, sampled_from

__all__ = ["Audit", "Listed", "classify", "explain_cuts", "engines_with", "DEFAULT_TOLERANCE", "KINDS", "verdict"]

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
class Audit:
    """What a served trace's numbers are (see the module docstring).

    ``kind``: one of ``KINDS``. ``settings``: the inferred ``temperature``; for processed numbers
    ``kept`` (per position, the kept set's size or its range) and ``engines`` (whose orders explain
    the cuts, with each setting's interval under ``cuts``); where the request's settings are known,
    ``requested`` and ``engines_with_requested`` (whose order with exactly those keeps those sets).
    ``positions``: the positions whose numbers fit no explanation, each with ``served`` and
    ``reference`` ({token id: logprob}). ``tolerance``: nats per logprob. ``explanation``: one sentence a person reads.
    """

    kind: str
    settings: dict
    positions: list[dict]
    tolerance: float
    explanation: str
    checked: int = 0
    fits: dict = field(default_factory=dict, repr=False)  # explanation -> per position: fits?

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


def infer_temperature(listed: list[Listed], refs: list[np.ndarray]) -> float | None:
    """The median over positions of (ref_a - ref_b) / (served_a - served_b) for the two finite listed
    tokens furthest apart; None where no position lists two distinguishable tokens."""
    estimates = []
    for row, ref in zip(listed, refs, strict=True):
        finite = np.isfinite(row.values)
        if finite.sum() < 2:
            continue
        values, ids = row.values[finite], row.ids[finite]
        a, b = int(values.argmax()), int(values.argmin())
        if values[a] - values[b] >= _MIN_GAP:
            estimates.append((ref[ids[a]] - ref[ids[b]]) / (values[a] - values[b]))
    return float(np.median(estimates)) if estimates else None


def _fits_scaled(row: Listed, ref: np.ndarray, t: float, tol: float) -> bool:
    if not np.isfinite(row.values).all():
        return False  # a cut token: not a whole distribution
    expected = ref[row.ids] / t - _lse(ref / t)
    return bool(np.abs(row.values - expected).max() <= tol)


def kept_range(row: Listed, ref: np.ndarray, t: float, tol: float) -> tuple[int, int] | None:
    """(lo, hi): the kept sizes n for which ``served = ref / T - log Z_n`` at every listed token; None: none."""
    finite = np.isfinite(row.values)
    if not finite.any():
        return None
    offsets = ref[row.ids[finite]] / t - row.values[finite]  # each listed kept token's log Z_n
    if offsets.max() - offsets.min() > 2 * tol:
        return None  # the kept tokens do not share one normaliser
    scaled = ref / t
    order = np.argsort(-scaled, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(1, len(order) + 1)
    cumulative = np.logaddexp.accumulate(scaled[order])  # (V,): log Z_n for n = 1..V
    need = int(rank[row.ids[finite]].max())  # every listed kept token is inside the kept prefix
    cut = rank[row.ids[~finite]]
    limit = int(cut.min()) - 1 if cut.size else len(order)  # every listed cut token is outside it
    fitting = np.nonzero(np.abs(cumulative - offsets.mean()) <= tol)[0] + 1
    fitting = fitting[(fitting >= need) & (fitting <= limit)]
    return (int(fitting.min()), int(fitting.max())) if fitting.size else None


def classify(listed: list[Listed], refs: list[np.ndarray], tol: float = DEFAULT_TOLERANCE,
             requested: dict | None = None) -> Audit:
    """The simplest explanation that fits every position (raw, then scaled, then processed), else a
    mismatch at the positions that fit none. `requested`: the sampling settings the request sent
    (temperature, top_k, top_p, min_p), when known: processed numbers then also name the engines whose
    order, with exactly those settings, keeps the kept sets found."""
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
        return Audit("scaled", settings, [], tol, f"softmax(logits / {t_best:.3g}), nothing cut", len(listed), fits)
    for temp in reversed(temps):
        if all(fits[("processed", temp)]):
            return _processed(listed, refs, temp, kept[temp], tol, fits, requested)
    bad = [i for i in range(len(listed)) if not any(per[i] for per in fits.values())]
    positions = [_side_by_side(listed[i], refs[i]) for i in bad]
    sentence = (f"{len(bad)} of {len(listed)} tokens disagree with every explanation (raw, scaled at T = "
                f"{t_best:.3g}, processed) by more than {tol} nats")
    return Audit("mismatch", settings, positions, tol, sentence, len(listed), fits)


def _side_by_side(row: Listed, ref: np.ndarray) -> dict:
    return {"index": row.index, "token": row.token,
            "served": {int(i): float(v) for i, v in zip(row.ids, row.values, strict=True)},
            "reference": {int(i): float(ref[i]) for i in row.ids}}


def _processed(listed, refs, t, kept, tol, fits, requested) -> Audit:
    cuts = explain_cuts(refs, kept, t)
    engines = sorted({engine for c in cuts for engine in c["engines"]})
    settings = {"temperature": round(t, 4), "kept": [k if k[0] != k[1] else k[0] for k in kept],
                "engines": engines, "cuts": cuts}
    if requested:
        settings["requested"] = dict(requested)
        settings["engines_with_requested"] = engines_with(refs, kept, requested)
    named = "; ".join(f"{c['setting']} in [{c['low']:.4g}, {c['high']:.4g}] ({', '.join(c['engines'])})" for c in cuts)
    sentence = f"scaled at T = {t:.3g} and cut to the most likely tokens: " + (
        named or "no single top-k, top-p or min-p explains every position")
    return Audit("processed", settings, [], tol, sentence, len(listed), fits)


def engines_with(refs: list[np.ndarray], kept: list[tuple[int, int]], requested: dict) -> list[str]:
    """The engines whose order, with the requested settings, keeps a set of the found size everywhere."""
    names = ("temperature", "top_k", "top_p", "min_p")
    settings = {name: requested[name] for name in names if requested.get(name) is not None}
    out = []
    for engine in ENGINES:
        sizes = [int(np.isfinite(sampled_from(ref, engine=engine, **settings)).sum()) for ref in refs]
        if all(lo <= n <= hi for n, (lo, hi) in zip(sizes, kept, strict=True)):
            out.append(engine)
    return out


def explain_cuts(refs: list[np.ndarray], kept: list[tuple[int, int]], t: float) -> list[dict]:
    """Each lone cut (top-k, top-p, min-p) with the interval of its setting that gives the kept sizes at
    every position, in the orders that judge it after temperature and in llama.cpp's (at T = 1)."""
    out = []
    low = max(k[0] for k in kept)
    high = min(k[1] for k in kept)
    if low <= high:
        out.append({"setting": "top_k", "low": float(low), "high": float(high), "engines": list(_AFTER_T + _AT_T1)})
    for temp, engines in ((t, _AFTER_T), (1.0, _AT_T1)):
        probs = [_sorted_probs(ref, temp) for ref in refs]
        for setting, bound in (("top_p", _top_p_interval), ("min_p", _min_p_interval)):
            lo, hi = 0.0, 1.0
            for p, (n_lo, n_hi) in zip(probs, kept, strict=True):
                a, b = bound(p, n_lo, n_hi)
                lo, hi = max(lo, a), min(hi, b)
            if lo < hi:
                out.append({"setting": setting, "low": lo, "high": hi, "engines": list(engines)})
    return out


def _sorted_probs(ref: np.ndarray, t: float) -> np.ndarray:
    scaled = np.sort(ref / t)[::-1]
    weights = np.exp(scaled - scaled[0])
    return weights / weights.sum()


def _top_p_interval(probs: np.ndarray, n_lo: int, n_hi: int) -> tuple[float, float]:
    """Top-p keeps n tokens for p in (P_{n-1}, P_n], P_m the m most likely tokens' mass."""
    prefix = np.concatenate([[0.0], np.cumsum(probs)])
    return float(prefix[n_lo - 1]), float(prefix[n_hi])


def _min_p_interval(probs: np.ndarray, n_lo: int, n_hi: int) -> tuple[float, float]:
    """Min-p keeps n tokens for m in (r_{n+1}, r_n], r the ratio to the most likely token."""
    ratios = probs / probs[0]
    below = float(ratios[n_hi]) if n_hi < len(ratios) else 0.0
    return below, float(ratios[n_lo - 1])
