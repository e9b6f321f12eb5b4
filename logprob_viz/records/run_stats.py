"""Reductions over runs of a flat array (a trace's tokens, trace after trace), in numpy alone.

`summaries(offsets, logprobs, entropy)` is each trace's mean and lowest logprob and mean entropy:
what `corpus.parquet` stores per row when it writes a file (the SUMMARIES columns of
docs/scale.md) and what `corpus.stats.trace_stats` computes when a file has no such columns.
Both go through this one function, so a stored value and a computed one are the same float.
A leaf module (numpy only): the writer and the statistics both import it without importing
each other.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SUMMARIES", "run_starts", "per_run", "mean_known", "summaries"]

# The per-trace columns a file stores (docs/scale.md): tokens, perplexity and max surprisal follow
# from them exactly (the offsets, exp(-mean_logprob), -min_logprob).
SUMMARIES = {"mean_logprob": np.float64, "min_logprob": np.float32, "mean_entropy": np.float64}


def run_starts(lengths: np.ndarray) -> np.ndarray:
    """(N + 1,) int64 offsets of each trace's run in the flat arrays."""
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])


def per_run(ufunc, values: np.ndarray, offsets: np.ndarray, empty: float, dtype=None) -> np.ndarray:
    """`ufunc` reduced over each run (`empty` for a run of no values), accumulated in `dtype`:
    ``reduceat`` at the starts of the non-empty runs, each of which then ends where the next one starts."""
    n = len(offsets) - 1
    out = np.full(n, empty, dtype=np.float64)
    filled = offsets[1:] > offsets[:-1]
    if values.size:
        out[filled] = ufunc.reduceat(values, offsets[:-1][filled], dtype=dtype)
    return out


def mean_known(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each run's mean over its known (not NaN) values, summed in float64; NaN where none is known."""
    known = ~np.isnan(values)
    total = per_run(np.add, np.where(known, values, 0), offsets, 0.0, np.float64)
    count = per_run(np.add, known, offsets, 0.0, np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


def summaries(offsets: np.ndarray, logprobs: np.ndarray, entropy: np.ndarray) -> dict[str, np.ndarray]:
    """{mean_logprob, min_logprob, mean_entropy} per run (float64), over the known values; NaN where none is."""
    return {
        "mean_logprob": mean_known(logprobs, offsets),
        "min_logprob": per_run(np.fmin, logprobs, offsets, np.nan),  # fmin skips NaN
        "mean_entropy": mean_known(entropy, offsets),
    }
