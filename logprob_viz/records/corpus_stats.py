"""Per-trace statistics of a corpus, reduced over each trace's run of its flat per-token arrays.

`trace_stats(corpus)` gives what `Corpus.to_pandas` and the corpus view's table show (tokens,
perplexity, mean/min logprob, max surprisal, mean entropy), from three flat arrays and the
traces' lengths: a column-backed corpus (`read_parquet`) hands them straight from its Arrow
columns, without the token table (whose token texts and item numbers cost ~5 s at 1M traces and
are not needed for these). Each statistic is one ufunc ``reduceat`` over the traces' runs, in
the order the tokens are stored, as a loop per trace would sum them.
"""

from __future__ import annotations

import numpy as np

from .corpus_columns import TraceColumns

__all__ = ["per_token", "trace_stats", "run_starts"]


def per_token(corpus, name: str, dtype=np.float32) -> np.ndarray:
    """A per-token field ("logprobs", "entropy", ...) of every trace, trace after trace."""
    traces = corpus.traces
    if isinstance(traces, TraceColumns):
        return traces.flat(name, dtype)
    parts = [np.asarray(getattr(t, name)) for t in traces]
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def lengths_of(corpus) -> np.ndarray:
    traces = corpus.traces
    if isinstance(traces, TraceColumns):
        return traces.lengths().astype(np.int64, copy=False)
    return np.array([len(t) for t in traces], dtype=np.int64)


def run_starts(lengths: np.ndarray) -> np.ndarray:
    """(N + 1,) int64 offsets of each trace's run in the flat arrays."""
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])


def _per_run(ufunc, values: np.ndarray, offsets: np.ndarray, empty: float, dtype=None) -> np.ndarray:
    """`ufunc` reduced over each run (`empty` for a run of no values), accumulated in `dtype`:
    ``reduceat`` at the starts of the non-empty runs, each of which then ends where the next one starts."""
    n = len(offsets) - 1
    out = np.full(n, empty, dtype=np.float64)
    filled = offsets[1:] > offsets[:-1]
    if values.size:
        out[filled] = ufunc.reduceat(values, offsets[:-1][filled], dtype=dtype)
    return out


def _mean_known(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each run's mean over its known (not NaN) values, summed in float64; NaN where none is known."""
    known = ~np.isnan(values)
    total = _per_run(np.add, np.where(known, values, 0), offsets, 0.0, np.float64)
    count = _per_run(np.add, known, offsets, 0.0, np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count


def trace_stats(corpus) -> dict[str, np.ndarray]:
    """{tokens, perplexity, mean_logprob, min_logprob, max_surprisal, mean_entropy}, one value per trace,
    over the tokens whose logprob (entropy) is known; NaN where none is."""
    lengths = lengths_of(corpus)
    offsets = run_starts(lengths)
    logprob = per_token(corpus, "logprobs")
    mean = _mean_known(logprob, offsets)
    lowest = _per_run(np.fmin, logprob, offsets, np.nan)  # fmin skips NaN
    return {
        "tokens": lengths,
        "perplexity": np.exp(-mean),
        "mean_logprob": mean,
        "min_logprob": lowest,
        "max_surprisal": -lowest,
        "mean_entropy": _mean_known(per_token(corpus, "entropy"), offsets),
    }
