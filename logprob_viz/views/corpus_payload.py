"""What the corpus view sends to the browser: its table, sparklines and surprise index, through the codec.

`encode_corpus(corpus)` is the table widget's ``_payload`` trait: one column per table column,
each a codec array (``{"dtype", "shape", "buffer"}``) or a texts field (``{"blob", "offsets"}``),
so 10,000 rows cross as a dozen binary buffers, never as per-row JSON::

    {"version": 1, "n": N,
     "label", "text", "flags": texts [N]            # text: the whole text (the filter reads it)
     "text_rank": uint32 [N]                         # each text's place in code-point order (equal texts, equal ranks)
     "tokens": int32 [N], "perplexity", "mean_logprob", "min_logprob", "max_surprisal",
     "mean_entropy": float32 [N]                     # NaN where unknown (Corpus.to_pandas)
     "spark": float32 [S], "spark_offsets": uint32 [N + 1]   # row i's points: spark[off[i]:off[i+1]]
     "spark_max": float,                             # the corpus's largest point, the common scale
     "index": {"token": GROUPS, "class": GROUPS},    # the surprise index (Corpus.surprise_index)
     "answers": {"predicted", "gold": texts [N], "correct": uint8 [N]}}   # only for a corpus of choices

    GROUPS = {"group": texts [G], "count": int32 [G], "mean_surprisal", "max_surprisal",
              "mean_rank", "share_rank_over_10": float32 [G]}

``answers`` is there when items carry a predicted option in their metadata (`Choices.to_corpus`):
each item's predicted and gold option ("" where unknown) and ``correct`` (1 right, 0 wrong, 255
unknown), so the table sorts and filters by them.

A sparkline is the surprisal (−logprob, nats) of each token, or for a trace longer than
``SPARK_POINTS`` the largest surprisal in each of that many equal bins, so a spike stays visible
and a row costs at most ``SPARK_POINTS`` floats whatever the trace's length. Unknown
logprobs are NaN (a gap).
"""

from __future__ import annotations

import math

import numpy as np

from ..records.corpus_columns import any_has, texts_of
from .codec import array, arrow_strings, texts

__all__ = ["SPARK_POINTS", "NUMBER_COLUMNS", "encode_corpus", "sparklines", "encode_index", "encode_answers",
           "occurrence_rows"]

SPARK_POINTS = 64  # the most points a row's sparkline has: ~60 px wide, a point per pixel
NUMBER_COLUMNS = ("perplexity", "mean_logprob", "min_logprob", "max_surprisal", "mean_entropy")
INDEX_COLUMNS = ("mean_surprisal", "max_surprisal", "mean_rank", "share_rank_over_10")


def sparklines(corpus, points: int = SPARK_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(values float32 [S], offsets int64 [N + 1]): each trace's surprisal, binned by max beyond `points`."""
    table = corpus.token_table()
    surprisal = -table["logprob"].astype(np.float32)  # (T,) NaN where unknown
    lengths = np.bincount(table["item"], minlength=len(corpus)).astype(np.int64)  # tokens per trace
    starts = np.concatenate([[0], np.cumsum(lengths)])
    parts = []
    for i, n in enumerate(lengths.tolist()):
        own = surprisal[starts[i] : starts[i] + n]
        if n > points:
            edges = (np.arange(points) * n) // points  # equal bins; fmax skips NaN inside a bin
            own = np.fmax.reduceat(own, edges)
        parts.append(own)
    values = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in parts], dtype=np.int64)])
    return values.astype(np.float32, copy=False), offsets


def encode_index(frame) -> dict:
    """A surprise-index DataFrame (`Corpus.surprise_index`) as codec columns."""
    out = {"group": texts("group", [str(g) for g in frame["group"].tolist()]),
           "count": array("count", frame["count"].to_numpy(), "int32")}
    for name in INDEX_COLUMNS:
        out[name] = array(name, frame[name].to_numpy(dtype=np.float64), "float32")
    return out


def encode_corpus(corpus) -> dict:
    """The table widget's ``_payload`` (see the module docstring)."""
    frame = corpus.to_pandas()
    whole_texts = texts_of(corpus.traces)
    spark, offsets = sparklines(corpus)
    known = spark[~np.isnan(spark)]
    payload = {
        "version": 1,
        "n": len(corpus),
        "label": texts("label", corpus.labels),
        "text": texts("text", whole_texts),
        "text_rank": array("text_rank", text_ranks(whole_texts), "uint32"),
        "flags": texts("flags", frame["flags"].tolist()),
        "tokens": array("tokens", frame["tokens"].to_numpy(), "int32"),
        "spark": array("spark", spark, "float32"),
        "spark_offsets": array("spark_offsets", offsets, "uint32"),
        "spark_max": float(known.max()) if known.size and math.isfinite(float(known.max())) else 1.0,
        "index": {by: encode_index(corpus.surprise_index(by=by)) for by in ("token", "class")},
        **encode_answers(corpus),
    }
    for name in NUMBER_COLUMNS:
        payload[name] = array(name, frame[name].to_numpy(dtype=np.float64), "float32")
    return payload


def text_ranks(strings) -> np.ndarray:
    """Each text's rank in code-point order, equal texts sharing one (dense), for the table's sort
    by text: sorted here, by Arrow in C where it can (1M texts: ~0.2 s; the browser's sort took 4.5 s)."""
    order, changes = _sorted_by_arrow(strings) or _sorted_by_python(list(strings))
    ranks = np.empty(len(order), np.uint32)
    ranks[order] = np.concatenate([[0], np.cumsum(changes)]).astype(np.uint32)[: len(order)]
    return ranks


def _sorted_by_python(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(the order, whether each text in that order differs from the one before it, from the second on)."""
    order = sorted(range(len(strings)), key=strings.__getitem__)
    changes = [strings[a] != strings[b] for a, b in zip(order[1:], order[:-1], strict=True)]
    return np.array(order, dtype=np.int64), np.array(changes, dtype=bool)


def _sorted_by_arrow(strings) -> tuple[np.ndarray, np.ndarray] | None:
    """As `_sorted_by_python`; None where `codec.arrow_strings` is (no pyarrow, a lone surrogate)."""
    column = arrow_strings(strings)
    if column is None:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    order = pc.sort_indices(column).to_numpy()
    ordered = column.take(pa.array(order))
    changes = pc.not_equal(ordered[1:], ordered[:-1]).to_numpy(zero_copy_only=False).astype(bool)
    return order, changes


def encode_answers(corpus) -> dict:
    """``{"answers": ...}`` for a corpus whose items carry a predicted option (see the module docstring); else {}."""
    metadata = corpus.metadata
    if not any_has(metadata, "predicted"):
        return {}
    correct = [255 if m.get("correct") is None else int(bool(m["correct"])) for m in metadata]
    return {"answers": {"predicted": texts("predicted", [str(m.get("predicted", "")) for m in metadata]),
                        "gold": texts("gold", [str(m.get("gold", "")) for m in metadata]),
                        "correct": array("correct", correct, "uint8")}}


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
