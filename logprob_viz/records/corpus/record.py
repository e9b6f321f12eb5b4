"""The corpus record: many traces, each with a label and metadata, read as tables (`lv.Corpus`).

``runner.score([...])`` and ``runner.generate([...])`` return one; so do `Corpus.from_responses`
(server responses, each through `lv.read`), `Corpus.read_jsonl` and `Corpus.from_pandas`, read by
sources/readers/corpus.py (records/readable.py: a record imports no reader). Every
number across the corpus comes from one concatenated token table (`token_table`), built once,
so a table of 10,000 traces or a surprise index over 1M tokens is a few numpy/pandas passes.
The surprise index and the occurrences in context are in `index`; two models over the same
texts in `compare`; Parquet in `parquet` (and, streamed, `scan`); the per-trace statistics in `stats`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

import numpy as np

from ..readable import read_as
from ..trace import Trace
from ..trace_fields import is_int
from ..viewable import Viewable, show
from .columns import ColumnRows, flag_summaries, previews
from .compare import compare_corpora
from .index import occurrences, surprise_index
from .labels import labelled
from .parquet import column_token_table, read_parquet, write_parquet
from .scan import surprise_index_parquet
from .stats import trace_stats

__all__ = ["Corpus"]

FORMAT = "logprob_viz.corpus"  # the first line of a saved corpus says what the file is
FORMAT_VERSION = 1
PREVIEW_CHARS = 80


class Corpus(Viewable):
    """A sequence of traces with a label and a metadata dict per item.

    Parameters
    ----------
    traces : list of Trace
    labels : list of str, optional
        One per trace; default: ``metadata[i]["index"]`` when given, else the position.
    metadata : list of dict, optional
        Anything per item (its source, a gold answer, ...); kept through slicing and saving.
    meta : dict, optional
        About the whole corpus (how it was made, how long it took, whether it was interrupted).
    """

    def __init__(self, traces, labels=None, metadata=None, meta=None):
        if isinstance(traces, Trace):
            raise TypeError("a Corpus holds a list of traces; got one Trace: lv.Corpus([trace])")
        # Column-backed rows (Corpus.read_parquet) stay as they are: their items are built when asked for.
        self.traces: list[Trace] = traces if isinstance(traces, ColumnRows) else list(traces)
        for i, tr in enumerate(() if isinstance(traces, ColumnRows) else self.traces):
            if not isinstance(tr, Trace):
                raise TypeError(f"item {i} is a {type(tr).__name__}, not a Trace; build a corpus from server "
                                "responses with lv.Corpus.from_responses, or from saved dicts with read_jsonl")
        n = len(self.traces)
        self.metadata: list[dict] = (metadata if isinstance(metadata, ColumnRows) else [dict(m) for m in metadata]
                                     if metadata is not None else [{} for _ in range(n)])
        if len(self.metadata) != n:
            raise ValueError(f"give one metadata dict per trace: {n} traces, {len(self.metadata)} dicts")
        if labels is None:
            labels = [str(m.get("index", i)) for i, m in enumerate(self.metadata)]
        self.labels: list[str] = labels if isinstance(labels, ColumnRows) else [str(x) for x in labels]
        if len(self.labels) != n:
            raise ValueError(f"give one label per trace: {n} traces, {len(self.labels)} labels")
        self.meta: dict = dict(meta or {})
        self._table = None  # the token table, built on first use (token_table)

    # -- building ------------------------------------------------------------------------

    @classmethod
    def from_responses(cls, responses, labels=None, metadata=None, **read_options) -> Corpus:
        """A trace per server response (dict, JSON text, SDK object, stream), each read by `lv.read`.

        A response with several choices (``n=2``, two prompts) gives a trace per choice, in order.
        (Read by sources/readers/corpus.py: see records/readable.py.)
        """
        return read_as(cls, "from_responses", responses, labels, metadata, **read_options)

    @classmethod
    def from_pandas(cls, column, labels=None, **read_options) -> Corpus:
        """From a pandas Series of traces, trace dicts (`Trace.to_dict`) or server responses.

        The Series' index gives the labels unless ``labels`` is given (a list, or a Series).
        """
        return read_as(cls, "from_pandas", column, labels, **read_options)

    @classmethod
    def read_jsonl(cls, path, **read_options) -> Corpus:
        """A JSONL file of server responses, of trace dicts, or one written by `save`."""
        return read_as(cls, "read_jsonl", path, **read_options)

    # -- saving ----------------------------------------------------------------------------

    def save(self, path) -> Path:
        """Write the corpus losslessly as JSONL (a header line, then one line per item).

        JSONL of `Trace.to_dict` is exact (floats by repr, NaN/inf as strings); `Corpus.load` reads
        it back. For a large corpus, `to_parquet` (columnar, read back without a Python object per trace).
        """
        path = Path(path)
        if path.suffix.lower() in (".parquet", ".pq"):
            return self.to_parquet(path)
        with path.open("w", encoding="utf-8") as f:
            f.write(json.dumps({FORMAT: FORMAT_VERSION, "meta": self.meta, "items": len(self)}) + "\n")
            for label, metadata, trace in zip(self.labels, self.metadata, self.traces, strict=True):
                f.write(json.dumps({"label": label, "metadata": metadata, "trace": trace.to_dict()}) + "\n")
        return path

    @classmethod
    def load(cls, path) -> Corpus:
        """Read a corpus written by `save`."""
        path = Path(path)
        with path.open(encoding="utf-8") as f:
            header = json.loads(f.readline() or "{}")
            if FORMAT not in header:
                raise ValueError(f"{path} is not a saved corpus (its first line has no {FORMAT!r}); "
                                 "read responses or trace dicts with lv.Corpus.read_jsonl")
            if header[FORMAT] > FORMAT_VERSION:
                raise ValueError(f"{path} was written by a newer logprob_viz (format {header[FORMAT]}); upgrade")
            rows = [json.loads(line) for line in f if line.strip()]
        traces = [Trace.from_dict(r["trace"]) for r in rows]
        return cls(traces, [r["label"] for r in rows], [r["metadata"] for r in rows], header.get("meta"))

    def to_parquet(self, path, *, row_group_size: int = 10_000) -> Path:
        """Write the corpus as one Parquet file: a row per trace, exact (`parquet`, docs/scale.md)."""
        return write_parquet(self, path, row_group_size=row_group_size)

    @classmethod
    def read_parquet(cls, path, *, on_error: str = "raise") -> Corpus:
        """A corpus from a Parquet file or a folder of parts (`to_parquet`, Ray's ``write_parquet``).

        The traces stay columns until an item is asked for. ``on_error="skip"`` leaves out the parts
        that cannot be read, with a warning; ``corpus.skipped`` lists them (path, what was wrong).
        """
        read = read_parquet(path, on_error=on_error)
        corpus = cls(read.traces, read.labels, read.metadata, read.meta)
        corpus.skipped = read.skipped
        return corpus

    @staticmethod
    def surprise_index_parquet(path, by: str = "token", *, prompt: bool = True, on_error: str = "raise"):
        """`surprise_index` of a Parquet corpus streamed part by part, never loaded whole (`scan`)."""
        return surprise_index_parquet(path, by=by, prompt=prompt, on_error=on_error)

    # -- sequence --------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.traces)

    def __iter__(self):
        return iter(self.traces)

    def __getitem__(self, index):
        """``corpus[i]`` is a Trace; a slice, a list of positions or a boolean mask gives a Corpus."""
        if is_int(index):
            return self.traces[index]
        if isinstance(index, slice):
            return self._subset(range(len(self))[index])
        if isinstance(index, str):
            if index not in self.labels:
                raise KeyError(f"no item labelled {index!r}; labels look like {self.labels[:5]}")
            return self.traces[self.labels.index(index)]
        picked = np.asarray(index)
        if picked.dtype == bool:
            if picked.shape != (len(self),):
                raise IndexError(f"a boolean mask needs one value per item ({len(self)}), got shape {picked.shape}")
            picked = np.flatnonzero(picked)
        elif picked.dtype.kind not in "iu":
            raise TypeError(f"index a corpus with an int, a slice, a label, positions or a boolean mask; "
                            f"got {type(index).__name__}")
        return self._subset(picked.tolist())

    def filter(self, keep: Callable[[Trace], bool] | object) -> Corpus:
        """The items for which ``keep(trace)`` is true, or where a boolean mask/Series is true.

        ``corpus.filter(corpus.to_pandas()["perplexity"] > 20)`` keeps the surprising ones.
        """
        if callable(keep):
            return self._subset([i for i, tr in enumerate(self.traces) if keep(tr)])
        return self[np.asarray(keep, dtype=bool)]

    def labelled(self, labels=None, metadata=None) -> Corpus:
        """This corpus with `labels` (one per item) and/or `metadata` (a dict per item, added to each
        item's own) given; itself when neither is (`labels.labelled`)."""
        return labelled(self, labels, metadata)

    def _subset(self, positions) -> Corpus:
        positions = list(positions)
        if isinstance(self.traces, ColumnRows):
            return Corpus(self.traces.take(positions), self.labels.take(positions), self.metadata.take(positions),
                          self.meta)
        return Corpus([self.traces[i] for i in positions], [self.labels[i] for i in positions],
                      [self.metadata[i] for i in positions], self.meta)

    # -- tables ----------------------------------------------------------------------------

    def token_table(self) -> dict[str, np.ndarray]:
        """Every token of every trace as concatenated numpy columns (built once, then kept).

        Columns: item, position, token (object: display text), token_id, logprob, rank,
        entropy, is_prompt, first (True on each trace's first token).
        """
        if self._table is None and isinstance(self.traces, ColumnRows):
            self._table = column_token_table(self)
        if self._table is None:
            lengths = np.array([len(t) for t in self.traces], dtype=np.int64)
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(lengths) else lengths
            total = int(lengths.sum())
            item = np.repeat(np.arange(len(self), dtype=np.int32), lengths)
            position = (np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)).astype(np.int32)
            tokens = np.empty(total, dtype=object)
            tokens[:] = [tok for t in self.traces for tok in t.tokens] if total else []

            def joined(name, dtype):
                parts = [getattr(t, name) for t in self.traces]
                return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

            prompt_lens = np.array([t.prompt_len for t in self.traces], dtype=np.int64)
            self._table = {
                "item": item, "position": position, "token": tokens,
                "token_id": joined("token_ids", np.int32), "logprob": joined("logprobs", np.float32),
                "rank": joined("ranks", np.int32), "entropy": joined("entropy", np.float32),
                "is_prompt": position < np.repeat(prompt_lens, lengths), "first": position == 0,
            }
        return self._table

    @cached_property
    def token_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """(int code per token of `token_table`, object array of the distinct token texts), computed once:
        the surprise index's groups. A column-backed corpus numbers its texts from Arrow's dictionary
        encoding (no Python string per token); others factorise the token table's texts."""
        if isinstance(self.traces, ColumnRows):
            return self.traces.token_codes()
        import pandas as pd  # optional dependency: only the corpus's tables need it

        codes, uniques = pd.factorize(self.token_table()["token"])
        return codes, np.asarray(uniques, dtype=object)

    def tokens(self):
        """A pandas table, one row per token: item, label, position, token, token_id, logprob, rank, entropy."""
        import pandas as pd  # optional dependency: only the corpus's tables need it

        table = self.token_table()
        frame = pd.DataFrame({name: table[name] for name in
                              ("item", "position", "token", "token_id", "logprob", "rank", "entropy", "is_prompt")})
        frame.insert(1, "label", np.asarray(self.labels, dtype=object)[table["item"]])
        return frame

    def to_pandas(self):
        """A pandas table, one row per trace.

        Columns: label, text (a preview), tokens, perplexity, mean_logprob, min_logprob,
        max_surprisal (nats), mean_entropy, flags (the codes any token carries, comma-separated).
        The statistics are over the tokens whose logprob (entropy) is known.
        """
        import pandas as pd  # optional dependency: only the corpus's tables need it

        stats = trace_stats(self)  # from the flat per-token arrays: no token table needed
        return pd.DataFrame({
            "label": self.labels,
            "text": previews(self.traces, PREVIEW_CHARS),
            **stats,
            "flags": flag_summaries(self.traces),
        }).rename_axis("item")

    # -- the surprise index and two models (index, compare) --------------------

    def surprise_index(self, by: str = "token", *, prompt: bool = True):
        """Per token text (``by="token"``) or token class (``by="class"``): how surprising it is.

        A DataFrame with columns group, count, mean_surprisal, max_surprisal (nats), mean_rank,
        share_rank_over_10, over every token whose logprob is known (``prompt=False``: only
        generated tokens). Classes: see `logprob_viz.records.corpus.index.CLASSES`.
        """
        return surprise_index(self, by=by, prompt=prompt)

    def occurrences(self, group: str, by: str | None = None, *, width: int = 30, limit: int | None = 1000):
        """Every occurrence of a token text or class in context (keyword in context).

        A DataFrame with columns item, label, position, left, token, right, logprob, rank;
        ``by`` defaults to "class" when `group` is a class name, else "token".
        """
        return occurrences(self, group, by=by, width=width, limit=limit)

    def compare(self, other: Corpus, labels=("a", "b"), *, n_boot: int = 1000, seed: int = 0):
        """This corpus against another over the same texts: see `lv.compare_corpora`."""
        return compare_corpora(self, other, labels=labels, n_boot=n_boot, seed=seed)

    def view(self, item=None, position: int | None = None):
        """The corpus view (`lv.CorpusView`); with an `item` (an int or a label), that item's
        LogprobView alone, pinned at ``position`` when given."""
        if item is None:
            return show(self, "view") if position is None else show(self, "view", pinned=int(position))
        trace = self[item]
        return trace.view() if position is None else trace.view(selected=int(position))

    def to_html(self, path=None, *, selected_item: int = 0, pinned: int = -1, title: str | None = None):
        """A standalone, offline page of the corpus view (the table, the index, one trace's view)."""
        return show(self, "to_html", path, selected_item=selected_item, pinned=pinned, title=title)

    # -- display ---------------------------------------------------------------------------

    def __repr__(self) -> str:
        if isinstance(self.traces, ColumnRows):
            tokens, models = int(self.traces.lengths().sum()), self.traces.models()
        else:
            tokens = sum(len(t) for t in self.traces)
            models = sorted({str(t.meta.get("model", t.meta.get("source", "?"))) for t in self.traces})
        return f"<Corpus of {len(self)} traces, {tokens} tokens, model={', '.join(models[:3]) or '?'}>"

    def _repr_mimebundle_(self, **kwargs):
        # The corpus view; where it cannot be made (no traces, the frontend not built), the table.
        try:
            bundle = self.view()._repr_mimebundle_(**kwargs)
        except (ValueError, FileNotFoundError, ImportError):
            bundle = None
        if bundle is not None:
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            data["text/plain"] = repr(self)  # what a plain-text frontend shows: the corpus, not the widget
            return bundle
        try:
            return {"text/plain": repr(self), "text/html": self.to_pandas()._repr_html_()}
        except ImportError:
            return {"text/plain": repr(self)}

