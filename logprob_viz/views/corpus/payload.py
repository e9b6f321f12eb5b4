"""What the corpus view sends to the browser: its table, sparklines and surprise index, through the codec.

`encode_corpus(corpus)` is the table widget's ``_payload`` trait: one column per table column,
each a codec array (``{"dtype", "shape", "buffer"}``) or a texts field (``{"blob", "offsets"}``),
so 10,000 rows cross as a dozen binary buffers, never as per-row JSON::

    {"version": 1, "n": N,
     "label", "text", "flags": texts [N]            # text: the whole text (the filter reads it)
     "text_rank": uint32 [N]                         # each text's place in code-point order (equal texts, equal ranks)
     "label_rank": uint32 [N]                        # each label's place in natural order (absent: the browser ranks)
     "tokens": int32 [N], "perplexity", "mean_logprob", "min_logprob", "max_surprisal",
     "mean_entropy": float32 [N]                     # NaN where unknown (Corpus.to_pandas)
     "spark": float32 [S], "spark_offsets": uint32 [N + 1]   # row i's points: spark[off[i]:off[i+1]]
     "spark_max": float,                             # the corpus's largest point, the common scale
     "answers": {"predicted", "gold": texts [N], "correct": uint8 [N]},   # only for a corpus of choices
     "extra": {"columns": [[name, title], ...], name: float32 [N], ...}}  # only with meta["table_columns"]

The surprise index is the table's ``_index`` trait, `encode_indexes(corpus)` =
``{"token": GROUPS, "class": GROUPS}`` (`Corpus.surprise_index`), made when the tab is opened for a
large corpus (a payload before it moved there held it as ``"index"``)::

    GROUPS = {"group": texts [G], "count": int32 [G], "mean_surprisal", "max_surprisal",
              "mean_rank", "share_rank_over_10": float32 [G]}

``answers`` is there when items carry a predicted option in their metadata (`Choices.to_corpus`):
each item's predicted and gold option ("" where unknown) and ``correct`` (1 right, 0 wrong, 255
unknown), so the table sorts and filters by them. ``extra`` is there when ``corpus.meta["table_columns"]``
({name: title}) names per-item figures in the items' metadata (NaN where an item has none): a
corpus of divergences or rollouts (`Divergences.to_corpus`) shows mean KLD, flips, reward... so.

A sparkline is the surprisal (−logprob, nats) of each token, or for a trace longer than
``SPARK_POINTS`` the largest surprisal in each of that many equal bins, so a spike stays visible
and a row costs at most ``SPARK_POINTS`` floats whatever the trace's length. Unknown
logprobs are NaN (a gap).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ...records.corpus.columns import TextColumn, TraceColumns, any_has, flag_summaries, texts_of
from ...records.corpus.stats import lengths_of, per_token, run_starts, trace_stats
from ...records.trace_fields import is_int
from ..codec import array, arrow_strings, texts
from .string_ranks import natural_keys, string_ranks

__all__ = ["SPARK_POINTS", "NUMBER_COLUMNS", "encode_corpus", "sparklines", "binned", "encode_index", "encode_answers",
           "encode_extra", "extra_columns", "extra_values", "occurrence_rows"]

SPARK_POINTS = 64  # the most points a row's sparkline has: ~60 px wide, a point per pixel
NUMBER_COLUMNS = ("perplexity", "mean_logprob", "min_logprob", "max_surprisal", "mean_entropy")
INDEX_COLUMNS = ("mean_surprisal", "max_surprisal", "mean_rank", "share_rank_over_10")


def sparklines(corpus, points: int = SPARK_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(values float32 [S], offsets int64 [N + 1]): each trace's surprisal, binned by max beyond `points`."""
    surprisal = per_token(corpus, "logprobs")  # (T,) NaN where unknown; a new array: negated in place (16M at 1M)
    surprisal = np.negative(surprisal, out=surprisal) if surprisal.flags.writeable else -surprisal
    return binned(lengths_of(corpus), surprisal, points)


def binned(lengths: np.ndarray, surprisal: np.ndarray, points: int = SPARK_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The sparklines of traces of `lengths` tokens whose surprisals are `surprisal`, trace after trace.

    One ``fmax.reduceat`` over every trace's bins at once (a loop per trace took ~1 s at 1M): a trace
    of n <= `points` tokens has a bin per token, a longer one `points` equal bins (fmax skips NaN)."""
    bins = np.minimum(lengths, points)
    offsets = run_starts(bins)
    if not np.any(lengths > points):
        return surprisal, offsets  # a bin per token everywhere: the surprisals as they are
    row = np.repeat(np.arange(len(lengths)), bins)
    j = np.arange(int(offsets[-1]), dtype=np.int64) - offsets[:-1][row]  # the bin's number in its row
    edges = run_starts(lengths)[:-1][row] + (j * lengths[row]) // bins[row]
    return np.fmax.reduceat(surprisal, edges).astype(np.float32, copy=False), offsets


def encode_index(frame) -> dict:
    """A surprise-index DataFrame (`Corpus.surprise_index`) as codec columns."""
    out = {"group": texts("group", [str(g) for g in frame["group"].tolist()]),
           "count": array("count", frame["count"].to_numpy(), "int32")}
    for name in INDEX_COLUMNS:
        out[name] = array(name, frame[name].to_numpy(dtype=np.float64), "float32")
    return out


def encode_corpus(corpus, ranks: bool = True) -> dict:
    """The table widget's ``_payload`` (see the module docstring); without the ranks for a window of
    rows (window.py: the kernel sorts those)."""
    whole_texts = whole_text_column(corpus.traces)
    # The two ranks (sorts in Arrow and numpy, which let go of the GIL) run beside the rest: on two
    # cores the open of 1M traces waits for the longer of them instead of for both (~0.3 s less).
    with ThreadPoolExecutor(2, thread_name_prefix="lv-ranks") as pool:
        label_ranks = pool.submit(natural_ranks, corpus.labels) if ranks else None
        whole_ranks = pool.submit(text_ranks, whole_texts) if ranks else None
        spark, offsets = sparklines(corpus)
        stats = trace_stats(corpus)
        # the largest point: the largest max surprisal (every point is one), not a pass over 16M points
        highest = float(np.nanmax(stats["max_surprisal"])) if np.any(~np.isnan(stats["max_surprisal"])) else math.nan
        payload = {
            "version": 1,
            "n": len(corpus),
            "label": texts("label", corpus.labels),
            "text": texts("text", whole_texts),
            "flags": texts("flags", flag_summaries(corpus.traces)),
            "spark": array("spark", spark, "float32"),
            "spark_offsets": array("spark_offsets", offsets, "uint32"),
            "spark_max": highest if math.isfinite(highest) else 1.0,
            **encode_answers(corpus),
            **encode_extra(corpus),
        }
        payload["tokens"] = array("tokens", stats["tokens"], "int32")
        for name in NUMBER_COLUMNS:
            payload[name] = array(name, stats[name], "float32")
        if ranks:
            payload.update(_ranks("label_rank", label_ranks.result()))
            payload["text_rank"] = array("text_rank", whole_ranks.result(), "uint32")
    return payload


def _ranks(name: str, ranks) -> dict:
    return {} if ranks is None else {name: array(name, ranks, "uint32")}


def encode_indexes(corpus) -> dict:
    """Both surprise indexes (by token text and by class) as the payload's ``index`` holds them."""
    return {by: encode_index(corpus.surprise_index(by=by)) for by in ("token", "class")}


def whole_text_column(traces):
    """Each trace's whole text: a column-backed corpus's own Arrow column (no Python string per trace),
    else a list."""
    column = traces.text_column() if isinstance(traces, TraceColumns) else None
    return TextColumn(column) if column is not None else texts_of(traces)


def text_ranks(strings) -> np.ndarray:
    """Each text's rank in code-point order, equal texts sharing one (dense), for the table's sort
    by text: ranked here (the browser's sort took 4.5 s), over Arrow's bytes where it can
    (`string_ranks`: 1M texts of ~80 bytes ~0.3 s)."""
    column = arrow_strings(strings)
    if column is not None and not column.null_count:
        return string_ranks(column)
    if column is not None:  # (nulls: Arrow's rank puts them last)
        import pyarrow.compute as pc

        return (pc.rank(column, sort_keys="ascending", tiebreaker="dense").to_numpy() - 1).astype(np.uint32)
    strings = list(strings)
    order = sorted(range(len(strings)), key=strings.__getitem__)
    changes = [strings[a] != strings[b] for a, b in zip(order[1:], order[:-1], strict=True)]
    ranks = np.empty(len(order), np.uint32)
    ranks[order] = np.concatenate([[0], np.cumsum(changes)]).astype(np.uint32)[: len(order)]
    return ranks


def natural_ranks(labels) -> np.ndarray | None:
    """Each label's dense rank in the table's natural order (js/corpus/data.js `naturalKey`: case
    folded, digit runs zero-padded to 16 digits: "doc 9" < "doc 10"), ranked here: the browser made a
    key per distinct label, 0.75 s for 1M distinct ones. None (the browser ranks them itself) without
    Arrow or for a null label.

    The keys are the browser's own (`natural_keys`), ranked by Arrow in code-point order: 1M labels
    ~0.25 s, where splitting them by a regex into (text, number) pairs and sorting by those took ~1.2 s."""
    column = arrow_strings(labels)
    if column is None or column.null_count:
        return None
    import pyarrow.compute as pc

    keys = natural_keys(pc.utf8_lower(column))
    return (pc.rank(keys, sort_keys="ascending", tiebreaker="dense").to_numpy() - 1).astype(np.uint32)


def encode_answers(corpus) -> dict:
    """``{"answers": ...}`` for a corpus whose items carry a predicted option (see the module docstring); else {}."""
    metadata = corpus.metadata
    if not any_has(metadata, "predicted"):
        return {}
    correct = [255 if m.get("correct") is None else int(bool(m["correct"])) for m in metadata]
    return {"answers": {"predicted": texts("predicted", [str(m.get("predicted", "")) for m in metadata]),
                        "gold": texts("gold", [str(m.get("gold", "")) for m in metadata]),
                        "correct": array("correct", correct, "uint8")}}


def extra_columns(corpus) -> dict[str, str]:
    """{name: title} of the per-item figures the table shows as columns (``corpus.meta["table_columns"]``)."""
    spec = (corpus.meta or {}).get("table_columns") or {}
    if not isinstance(spec, dict):
        raise TypeError(f"corpus.meta['table_columns'] must be a dict {{metadata key: column title}}, got "
                        f"{type(spec).__name__}")
    taken = {"item", "label", "text", "tokens", *NUMBER_COLUMNS, "flags", "spark", "predicted", "gold", "correct"}
    if clash := sorted(taken & set(map(str, spec))):
        raise ValueError(f"corpus.meta['table_columns'] names {clash}, which the table shows already: give "
                         "the figures other names")
    return {str(name): str(title) for name, title in spec.items()}


def extra_values(corpus, name: str) -> np.ndarray:
    """One per-item figure from the items' metadata (float64; NaN where missing or not a number)."""
    def number(m):
        v = m.get(name)
        return float(v) if is_int(v) or isinstance(v, float) else math.nan
    return np.fromiter((number(m) for m in corpus.metadata), dtype=np.float64, count=len(corpus))


def encode_extra(corpus) -> dict:
    """``{"extra": ...}`` for a corpus whose meta names per-item figures (see the module docstring); else {}."""
    spec = extra_columns(corpus)
    if not spec:
        return {}
    extra = {"columns": [[name, title] for name, title in spec.items()]}
    for name in spec:
        extra[name] = array(name, extra_values(corpus, name), "float32")
    return {"extra": extra}


def occurrence_rows(corpus, by: str, group: str, limit: int) -> dict:
    """The ``_occurrences`` trait: a group's occurrences in context, most surprising first.

    ``{"by", "group", "rows": [{item, label, position, left, token, right, logprob, rank}], "shown",
    "error"}``; JSON (a few hundred short rows); an unknown group gives ``error`` instead of rows.
    """
    try:
        frame = corpus.occurrences(group, by=by, limit=limit)
    except (KeyError, ValueError) as error:
        return {"by": by, "group": group, "rows": [], "error": str(error.args[0] if error.args else error)}
    rows = [
        {"item": int(r.item), "label": str(r.label), "position": int(r.position), "left": r.left,
         "token": r.token, "right": r.right, "logprob": _finite(r.logprob), "rank": int(r.rank)}
        for r in frame.itertuples(index=False)
    ]
    return {"by": by, "group": group, "rows": rows, "error": None}


def _finite(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None
