"""A large corpus's table, sorted and filtered in the kernel and sent a window of rows at a time.

Up to `WINDOWED_TRACES` traces the table's whole payload goes to the browser (`payload.encode_corpus`),
which sorts and filters by itself and works without a kernel. Beyond that, the payload for 1M traces
is ~190 MB: building it, sending it through the kernel's websocket and decoding it took ~14 s in
JupyterLab (benchmarks/corpus_lab.py). So a larger corpus's view sends only the rows in sight:

- ``_payload`` says ``{"version": 1, "windowed": true, "n", "spark_max", "answers": bool, "extra":
  {"columns": [[name, title]]}}`` (what the table's columns are, not their values);
- the browser asks for rows through ``_view_rows`` ``{"start", "count"}`` (positions in the sorted,
  filtered order) as the table scrolls; `RowOrder` answers in ``_rows`` ``{"start", "total", "rows"}``,
  ``rows`` being an `encode_corpus` payload of those traces plus their ``items`` (int32);
- sort and filters are the table's traits as before; the kernel orders the rows by the browser's own
  rules: stable, unknown numbers last both ways, labels and flags in natural order (`natural_ranks`),
  whole texts in code-point order (`text_ranks`), "contains" in any case.

A saved notebook keeps the last window: it reopens with the rows that were in sight.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ...records.corpus.columns import TraceColumns, any_has, flag_summaries
from ...records.corpus.stats import per_token, run_starts, trace_stats
from ..codec import array, arrow_strings, texts
from .payload import (
    NUMBER_COLUMNS,
    binned,
    encode_answers,
    encode_extra,
    extra_columns,
    extra_values,
    natural_ranks,
    text_ranks,
    whole_text_column,
)

__all__ = ["WINDOWED_TRACES", "WINDOW_ROWS", "LONGEST_LABELS", "RowOrder", "windowed_payload"]

WINDOWED_TRACES = 100_000  # beyond this many traces, the table's rows travel a window at a time
WINDOW_ROWS = 120  # the most rows in one window: 12 in sight, the rest for scrolling without a wait


LONGEST_LABELS = 200  # labels the browser measures for the label column: those within 4 characters of the longest


def windowed_payload(order: RowOrder) -> dict:
    """The table's ``_payload`` for a large corpus: its columns, not their values (the module docstring),
    the labels whose width the label column takes, and the columns with nothing known in any row."""
    corpus = order.corpus
    extra = extra_columns(corpus)
    return {"version": 1, "windowed": True, "n": len(corpus), "spark_max": order.spark_max,
            "answers": _has_answers(corpus), "longest_labels": _longest(corpus.labels), "empty": order.empty(),
            "extra": {"columns": [[name, title] for name, title in extra.items()]}}


def _longest(labels) -> list[str]:
    import pyarrow.compute as pc

    column = arrow_strings(labels)
    if column is None:
        most = max(map(len, labels), default=0)
        return [s for s in labels if len(s) >= most - 4][:LONGEST_LABELS]
    lengths = pc.utf8_length(column).to_numpy(zero_copy_only=False)
    near = np.flatnonzero(lengths >= (lengths.max() if len(lengths) else 0) - 4)[:LONGEST_LABELS]
    return column.take(near).to_pylist()


def _has_answers(corpus) -> bool:
    return any_has(corpus.metadata, "predicted")


def _contains(strings, needle: str) -> np.ndarray:
    """Which `strings` contain `needle` in any case (the browser's case-insensitive "contains")."""
    import pyarrow.compute as pc

    column = arrow_strings(strings)
    if column is not None:
        return pc.match_substring(column, needle, ignore_case=True).to_numpy(zero_copy_only=False).astype(bool)
    lowered = needle.casefold()
    return np.fromiter((lowered in str(s).casefold() for s in strings), dtype=bool, count=len(strings))


class RowOrder:
    """The sort keys and filter columns of a corpus, made when first needed, and its windows of rows."""

    def __init__(self, corpus):
        self.corpus = corpus
        self.stats = trace_stats(corpus)
        highest = self.stats["max_surprisal"]
        known = highest[~np.isnan(highest)]
        self.spark_max = float(known.max()) if len(known) and math.isfinite(float(known.max())) else 1.0
        self._keys: dict[str, np.ndarray] = {}
        self._texts = {}
        self._order = (None, None)
        self._flat = None  # (every token's logprob, each trace's first token): the windows' sparklines
        self._lock = threading.Lock()  # guards `_locks`: one lock per key made (some in a thread: `warm`)
        self._locks: dict[str, threading.Lock] = {}

    def warm(self) -> threading.Thread:
        """Make the text columns' sort keys in a thread, while the person reads the first rows: ranking
        1M whole texts takes ~1-3 s, which the first sort by text would otherwise wait for. (Arrow's
        and numpy's sorts let go of the GIL: the kernel keeps answering meanwhile.)"""
        def run():
            for name in ("label", "text"):
                self.key(name)
            self.sorted_items("perplexity", True)  # (the first sort a person asks for, most often)
            self._logprobs_of(np.zeros(0, np.int64), whole=True)
            self.texts("flags")
        thread = threading.Thread(target=run, name="lv-corpus-keys", daemon=True)
        thread.start()
        return thread

    # -- columns ----------------------------------------------------------------------------------

    def empty(self) -> list[str]:
        """The table's columns with nothing known in any row (not drawn): entropy where no trace has it,
        flags where no token of any trace lost anything."""
        out = [] if np.any(~np.isnan(self.stats["mean_entropy"])) else ["mean_entropy"]
        return out + ([] if _any_flags(self.corpus.traces) else ["flags"])

    def texts(self, name: str):
        """The strings of a text column ("label", "text", "flags", "predicted", "gold"): Arrow where it can."""
        with self._lock:
            lock = self._locks.setdefault(f"texts {name}", threading.Lock())
        with lock:
            if name not in self._texts:
                self._texts[name] = self._make_texts(name)
        return self._texts[name]

    def _make_texts(self, name: str):
        corpus = self.corpus
        if name == "label":
            strings = corpus.labels
        elif name == "text":
            strings = whole_text_column(corpus.traces)
        elif name == "flags":  # (no flag anywhere, the usual case: no pass over every trace's flags)
            strings = flag_summaries(corpus.traces) if _any_flags(corpus.traces) else [""] * len(corpus)
        else:
            strings = [str(m.get(name, "")) for m in corpus.metadata]
        column = arrow_strings(strings)
        return strings if column is None else column

    def key(self, name: str) -> np.ndarray:
        """The numbers `name` sorts by, one per item (NaN: unknown); made once, by one thread (a sort by
        another column does not wait for it)."""
        with self._lock:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            if name not in self._keys:
                self._keys[name] = self._make_key(name)
        return self._keys[name]

    def _make_key(self, name: str) -> np.ndarray:
        if name == "item":
            return np.arange(len(self.corpus), dtype=np.int64)
        if name == "tokens" or name in NUMBER_COLUMNS:
            # the values as the table holds them (float32): equal where they look equal, as a whole payload sorts
            return np.asarray(self.stats[name], dtype=np.float32).astype(np.float64)
        if name == "text":
            return text_ranks(self.texts("text")).astype(np.int64)
        if name in ("label", "flags", "predicted", "gold"):
            ranks = natural_ranks(self.texts(name))
            return (ranks if ranks is not None else text_ranks(self.texts(name))).astype(np.int64)
        if name == "correct":
            # the browser's codes (payload.encode_answers): 1 right, 0 wrong, 255 unknown
            return np.array([255.0 if m.get("correct") is None else float(bool(m["correct"]))
                             for m in self.corpus.metadata])
        if name in extra_columns(self.corpus):
            return extra_values(self.corpus, name).astype(np.float32).astype(np.float64)
        raise ValueError(f"the corpus table has no column {name!r} to sort by")

    # -- order and windows ------------------------------------------------------------------------

    def keep(self, filters: dict) -> np.ndarray | None:
        """Which items pass `filters` (bool [N]; None: no filter), as js/corpus/data.js `filterRows` reads them."""
        mask = np.ones(len(self.corpus), dtype=bool)
        ppl = self.stats["perplexity"]
        lo, hi = _number(filters.get("ppl_min")), _number(filters.get("ppl_max"))
        with np.errstate(invalid="ignore"):
            if lo is not None:
                mask &= ppl >= lo
            if hi is not None:
                mask &= ppl <= hi
        for name in ("label", "text", "predicted"):
            needle = filters.get(name) or ""
            if needle:
                mask &= _contains(self.texts(name), needle)
        want = {"right": 1.0, "wrong": 0.0}.get(filters.get("correct") or "")
        if want is not None:
            mask &= self.key("correct") == want
        return None if mask.all() else mask

    def sorted_items(self, column: str, descending: bool) -> np.ndarray:
        """Every item sorted by `column`, stably (unknown numbers last both ways); made once per column
        and direction, so a filter or a second click reuses it."""
        name = f"order {column} {'descending' if descending else 'ascending'}"
        with self._lock:
            lock = self._locks.setdefault(name, threading.Lock())
        with lock:
            if name not in self._keys:
                keys = self.key(column)
                keys = -keys if descending else keys  # (NaN stays NaN: argsort puts it last)
                self._keys[name] = np.argsort(keys, kind="stable")
        return self._keys[name]

    def order(self, sort: dict, filters: dict) -> np.ndarray:
        """The items shown, in order: filtered, then sorted stably (unknown numbers last both ways)."""
        token = (repr(sorted((sort or {}).items())), repr(sorted((filters or {}).items())))
        if self._order[0] == token:
            return self._order[1]
        mask = self.keep(filters or {})
        column = (sort or {}).get("column") or ""
        rows = self.sorted_items(column, bool(sort.get("descending"))) if column else np.arange(len(self.corpus))
        rows = rows if mask is None else rows[mask[rows]]
        self._order = (token, rows)
        return rows

    def window(self, sort: dict, filters: dict, start: int, count: int) -> dict:
        """The ``_rows`` trait: the rows at positions [start, start + count) of the order, with its length."""
        rows = self.order(sort, filters)
        count = max(0, min(int(count), WINDOW_ROWS))
        start = max(0, min(int(start), max(0, len(rows) - count)))
        items = rows[start : start + count]
        return {"start": start, "total": int(len(rows)), "rows": self.encode_rows(items) if len(items) else None}

    def encode_rows(self, items: np.ndarray) -> dict:
        """The rows `items` as `encode_corpus` encodes a corpus (no ranks: the kernel sorts), plus their
        ``items``: taken from the whole corpus's columns, so a window costs its rows, not the corpus."""
        items = np.asarray(items, dtype=np.int64)
        lengths = self.stats["tokens"][items]
        spark, offsets = binned(lengths, -self._logprobs_of(items))
        sub = self.corpus[items]  # (the metadata of these rows: a corpus of choices, divergence figures)
        payload = {"version": 1, "n": len(items), "items": array("items", items, "int32"),
                   "spark": array("spark", spark, "float32"),
                   "spark_offsets": array("spark_offsets", offsets, "uint32"),
                   "spark_max": self.spark_max, "tokens": array("tokens", lengths, "int32"),
                   **encode_answers(sub), **encode_extra(sub)}
        for name in ("label", "text", "flags"):
            whole = self._texts.get(name)
            payload[name] = texts(name, _take(whole, items) if whole is not None else self._window_texts(sub, name,
                                                                                                        items))
        for name in NUMBER_COLUMNS:
            payload[name] = array(name, self.stats[name][items], "float32")
        return payload

    def _window_texts(self, sub, name: str, items: np.ndarray):
        """A window's labels, texts or flags from its own rows (the open's first window, before `warm`
        has read the whole columns); flags from the whole corpus's (none at all, the usual case, is cheap)."""
        if name == "label":
            return sub.labels
        if name == "text":
            return whole_text_column(sub.traces)
        return _take(self.texts(name), items)

    def _logprobs_of(self, items: np.ndarray, whole: bool = False) -> np.ndarray:
        """The logprobs of the traces `items`, trace after trace (float32): from the whole corpus's
        flat array once `warm` (or `whole`) has read it, else those rows' own (`TraceColumns.flat`)."""
        if self._flat is None and not whole:
            return per_token(self.corpus[items], "logprobs")
        with self._lock:
            lock = self._locks.setdefault("flat", threading.Lock())
        with lock:
            if self._flat is None:
                self._flat = (per_token(self.corpus, "logprobs"), run_starts(self.stats["tokens"]))
        flat, starts = self._flat
        parts = [flat[starts[i] : starts[i + 1]] for i in items]
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)


def _take(strings, items: np.ndarray):
    """`strings` at `items` (an Arrow column's take, else a list)."""
    if hasattr(strings, "take") and not isinstance(strings, (list, tuple)):
        import pyarrow as pa

        return strings.take(pa.array(items))
    return [strings[int(i)] for i in items]


def _any_flags(traces) -> bool:
    """Whether any token of any trace carries a flag (a column-backed corpus: from its Arrow columns)."""
    if isinstance(traces, TraceColumns):
        import pyarrow.compute as pc

        columns = [b.column("flags") for b in traces.blocks]
        return any(c is not None and len(pc.list_flatten(pc.list_flatten(c))) for c in columns)
    return any(any(row for row in t.flags) for t in traces)


def _number(value) -> float | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
