"""Divergences and rollouts as a corpus: one row per text or rollout, its divergence figures as table columns.

`divergence_corpus(divergences)` (`Divergences.to_corpus`) and `rollouts_corpus(rollouts)`
(`Rollouts.to_corpus`) give an `lv.Corpus` whose item i is text (or rollout) i as a trace, and whose
``metadata[i]`` holds that item's figures; ``corpus.meta["table_columns"]`` ({name: title}) names
the metadata keys the corpus view shows as sortable columns. Both live in the corpus's own storage:
`to_parquet` / `read_parquet` and `save` / `load` keep the metadata and the meta, so a corpus read
back shows the same columns.

Per text of a `Divergences` (over its scored positions; NaN where none):

- ``mean_kld``, ``max_kld``: the mean and the largest KL(base ‖ candidate), nats. Where a side gave
  only its top-K the KL is a range, and the columns are ``mean_kld_low``, ``mean_kld_high`` and
  ``max_kld_high`` instead (no single number pretends to be exact);
- ``flips``: positions where the two top tokens differ; ``same_top``: the share where they agree;
- ``max_abs_delta_p``: the largest |q(y) − p(y)|; ``mean_ln_ppl_ratio``: ln(PPL(candidate)/PPL(base)).

The trace is the candidate's: its logprob of each token and its alternatives (`Divergence`'s
``cand_logprob`` and ``cand_alt_*``), so the table's perplexity columns are the candidate's.

Per rollout of a `Rollouts` (`Rollouts.table`): ``mean_abs_delta``, ``max_abs_delta`` (|Δ| = |log π_b −
log π_a|), ``share_outside`` (ratios outside [1/clip, clip]), ``mean_k3`` (Schulman's k3 estimate of
KL(π_a ‖ π_b)) and ``reward`` where given. The trace is side a's (the engine the tokens were sampled
from); token texts come from ``vocab`` (the id's text), else read ``<id>``.
"""

from __future__ import annotations

import math

import numpy as np

from ..trace import Trace
from ..trace_fields import is_int

__all__ = ["divergence_corpus", "rollouts_corpus", "EXACT_COLUMNS", "RANGE_COLUMNS", "ROLLOUT_COLUMNS"]

EXACT_COLUMNS = {"mean_kld": "mean KLD", "max_kld": "max KLD", "flips": "flips", "same_top": "same top",
                 "max_abs_delta_p": "max |Δp|", "mean_ln_ppl_ratio": "ln PPL ratio"}
RANGE_COLUMNS = {"mean_kld_low": "mean KLD ≥", "mean_kld_high": "mean KLD ≤", "max_kld_high": "max KLD ≤",
                 "flips": "flips", "same_top": "same top", "max_abs_delta_p": "max |Δp|",
                 "mean_ln_ppl_ratio": "ln PPL ratio"}
ROLLOUT_COLUMNS = {"mean_abs_delta": "mean |Δ|", "max_abs_delta": "max |Δ|", "share_outside": "outside",
                   "mean_k3": "KL k3", "reward": "reward"}


def _number(x) -> float | None:
    """A JSON-safe figure: None where unknown (NaN), so the metadata reads the same in every format."""
    if is_int(x):
        return int(x)
    x = float(x)
    return x if math.isfinite(x) else None


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else math.nan


def _max(values: np.ndarray) -> float:
    return float(values.max()) if len(values) else math.nan


def divergence_figures(d, exact: bool) -> dict:
    """One text's figures (the module docstring), from its per-position arrays."""
    a, scored = d.arrays, d.scored
    low, high = a["kld_low"][scored], a["kld_high"][scored]
    same = a["same_top"][scored]
    same = same[~np.isnan(same)]
    figures = {"mean_kld": _mean(low), "max_kld": _max(low)} if exact else {
        "mean_kld_low": _mean(low), "mean_kld_high": _mean(high), "max_kld_high": _max(high)}
    figures.update(flips=int(np.sum(same == 0.0)), same_top=_mean(same),
                   max_abs_delta_p=_max(np.abs(a["delta_p"][scored])),
                   mean_ln_ppl_ratio=_mean(a["base_logprob"][scored] - a["cand_logprob"][scored]))
    return {name: _number(value) for name, value in figures.items()}


def _candidate_trace(d) -> Trace:
    a = d.arrays
    alternatives = {}
    if d.vocab is not None and a["cand_alt_ids"].shape[1]:
        alternatives = {"top_ids": a["cand_alt_ids"], "top_logprobs": a["cand_alt_logprobs"], "vocab": d.vocab}
    side = d.meta.get("candidate")  # (a runner's description: {"source", "model", ...})
    meta = {key: side[key] for key in ("model", "source", "dtype") if key in side} if isinstance(side, dict) else {}
    return Trace(tokens=list(d.tokens), token_bytes=list(d.token_bytes), token_ids=d.token_ids,
                 logprobs=a["cand_logprob"], meta={**meta, "side": "candidate"}, **alternatives)


def divergence_corpus(divergences, labels=None):
    """A corpus of `divergences` (a `Divergences`, or a list of `Divergence`): see the module docstring."""
    from .record import Corpus  # (record.py, the façade, imports the modules below it: not this one at the top)

    items = list(divergences)
    if not items:
        raise ValueError("these divergences hold no text, so there is no row to show; give lv.divergence a text")
    exact = all(d.exact for d in items)
    columns = EXACT_COLUMNS if exact else RANGE_COLUMNS
    metadata = [divergence_figures(d, exact) for d in items]
    meta = {**dict(getattr(divergences, "meta", {}) or {}), "table_columns": dict(columns), "kind": "divergences"}
    return Corpus([_candidate_trace(d) for d in items], labels=labels, metadata=metadata, meta=meta)


def rollouts_corpus(rollouts, vocab=None):
    """A corpus of `rollouts` (a `Rollouts`), a row per rollout: see the module docstring."""
    from .record import Corpus  # (record.py, the façade, imports the modules below it: not this one at the top)

    if not len(rollouts):
        raise ValueError("these rollouts hold no rollout, so there is no row to show")
    table = rollouts.table()
    names = [n for n in ROLLOUT_COLUMNS if n in table]
    metadata = [{name: _number(table[name][i]) for name in names} for i in range(len(rollouts))]
    traces = []
    for i in range(len(rollouts)):
        span = slice(int(rollouts.offsets[i]), int(rollouts.offsets[i + 1]))
        ids = rollouts.token_ids[span]
        tokens = [str(vocab[int(t)]) if vocab is not None else f"<{int(t)}>" for t in ids]
        traces.append(Trace(tokens=tokens, token_ids=ids, logprobs=rollouts.logprobs_a[span],
                            meta={"side": "a (the engine the tokens were sampled from)"}))
    meta = {"table_columns": {n: ROLLOUT_COLUMNS[n] for n in names}, "kind": "rollouts", "clip": rollouts.clip}
    return Corpus(traces, labels=[str(x) for x in rollouts.labels], metadata=metadata, meta=meta)
