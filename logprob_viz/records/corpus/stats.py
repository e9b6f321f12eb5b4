"""Per-trace statistics of a corpus, reduced over each trace's run of its flat per-token arrays.

`trace_stats(corpus)` gives what `Corpus.to_pandas` and the corpus view's table show (tokens,
perplexity, mean/min logprob, max surprisal, mean entropy). A column-backed corpus (`read_parquet`)
whose files store the per-trace summaries (`run_stats.SUMMARIES`, written with every file since
they were added) reads them as they are: 1M traces' worth of reductions over 16M tokens took ~1.2 s
at open. Other corpora, and files written before, reduce three flat arrays (from the Arrow columns
where there are some, without the token table) with `run_stats.summaries`, the function the writer
used: each statistic one ufunc ``reduceat`` over the traces' runs, in the order the tokens are
stored, as a loop per trace would sum them.
"""

from __future__ import annotations

import numpy as np

from ..run_stats import SUMMARIES, run_starts, summaries
from .columns import TraceColumns

__all__ = ["per_token", "trace_stats", "run_starts", "stored_summaries"]


def per_token(corpus, name: str, dtype=np.float32) -> np.ndarray:
    """A per-token field ("logprobs", "entropy", ...) of every trace, trace after trace (a new array)."""
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


def stored_summaries(corpus) -> dict[str, np.ndarray] | None:
    """The summaries the corpus's files store (float64, this corpus's rows), or None unless every part
    has every one of them with no null (a file written before they were, or by another writer)."""
    traces = corpus.traces
    if not isinstance(traces, TraceColumns) or not traces.blocks:
        return None
    for block in traces.blocks:
        for name in SUMMARIES:
            column = block.column(name)
            if column is None or column.null_count:
                return None
    return {name: traces.scalars(name, np.float64, np.nan) for name in SUMMARIES}


def trace_stats(corpus) -> dict[str, np.ndarray]:
    """{tokens, perplexity, mean_logprob, min_logprob, max_surprisal, mean_entropy}, one value per trace,
    over the tokens whose logprob (entropy) is known; NaN where none is."""
    lengths = lengths_of(corpus)
    stored = stored_summaries(corpus)
    if stored is None:
        stored = summaries(run_starts(lengths), per_token(corpus, "logprobs"), per_token(corpus, "entropy"))
    mean, lowest = stored["mean_logprob"], stored["min_logprob"]
    return {
        "tokens": lengths,
        "perplexity": np.exp(-mean),
        "mean_logprob": mean,
        "min_logprob": lowest,
        "max_surprisal": -lowest,
        "mean_entropy": stored["mean_entropy"],
    }
