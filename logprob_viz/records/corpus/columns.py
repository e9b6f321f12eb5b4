"""A corpus backed by Arrow columns: its items become Python objects only when asked for.

`Corpus.read_parquet` gives a `Corpus` whose ``traces``, ``labels`` and ``metadata`` are the
sequences here, over the Parquet parts' Arrow tables (one `Block` per part): ``corpus[i]`` builds
that one `Trace` from its slices of the columns; ``len``, the token table, the surprise index and
``to_pandas()`` read the columns as numpy arrays, so a million traces cost their arrays, not a
million objects. The schema is `parquet`'s (docs/scale.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from ..tokens import display_token
from ..trace import Trace
from ..trace_fields import FIELDS
from .arrow import ParquetPartError, factorize_tokens
from .one_row import row_block

__all__ = ["ColumnRows", "Block", "TraceColumns", "TextColumn", "JsonColumn", "any_has", "previews", "texts_of",
           "flag_summaries"]

PER_TOKEN_COLUMNS = {"token_ids": "token_ids", "logprobs": "logprobs", "ranks": "ranks", "entropy": "entropy"}
FEW_ROWS = 64  # a subset of fewer than 1/64 of the rows reads its per-token values row by row (`flat`)


class ColumnRows:
    """A read-only sequence of rows read from columns (`Corpus` keeps it as it is, not as a list)."""

    def __len__(self) -> int:
        raise NotImplementedError

    def row(self, i: int):
        raise NotImplementedError

    def take(self, positions) -> ColumnRows:
        """The rows at `positions` (a subset keeps its columns: nothing is materialised)."""
        raise NotImplementedError

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.take(range(len(self))[index])
        i = int(index)
        if not -len(self) <= i < len(self):
            raise IndexError(f"index {index} is out of range for {len(self)} rows")
        return self.row(i % len(self))

    def __iter__(self):
        for i in range(len(self)):
            yield self.row(i)


def _offsets(column) -> np.ndarray:
    """The int64 offsets of a list (or large_list) Arrow array."""
    return np.asarray(column.offsets, dtype=np.int64)


def _values(column, dtype) -> np.ndarray:
    """A list array's flat values as numpy (zero-copy where Arrow allows)."""
    return column.values.to_numpy(zero_copy_only=False).astype(dtype, copy=False)


@dataclass
class Block:
    """One Parquet part's table, its columns as single Arrow arrays; ``vocabs``: its vocabulary tables.

    ``later`` (`parquet.LaterColumns`, or None): the part's columns left out of ``table``,
    read from the file when first asked for (the token texts and alternatives of 1M traces are most
    of a read that the table view never needs)."""

    table: object  # pyarrow.Table (combined into one chunk per column)
    vocabs: list
    path: str
    later: object = None

    def column(self, name):
        if name in self.table.column_names:
            return self.table.column(name).chunk(0)
        if self.later is None or name not in self.later.names:
            return None
        self.table = self.table.append_column(name, [self.later.read(name)])
        return self.table.column(name).chunk(0)

    def lengths(self) -> np.ndarray:
        """Tokens per row: the offsets of the logprobs where every row has them (read with the part),
        else of the token bytes."""
        logprobs = self.column("logprobs")
        column = logprobs if logprobs is not None and logprobs.null_count == 0 else self.column("token_bytes")
        return np.diff(_offsets(column))

    def __len__(self) -> int:
        return self.table.num_rows


class TraceColumns(ColumnRows):
    """``corpus.traces`` of a column-backed corpus: blocks of rows; ``[i]`` builds one `Trace`."""

    def __init__(self, blocks: list[Block], rows: np.ndarray | None = None):
        self.blocks = blocks
        sizes = np.array([len(b) for b in blocks], dtype=np.int64)
        self._starts = np.concatenate([[0], np.cumsum(sizes)])
        total = int(self._starts[-1])
        self.rows = np.arange(total, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, positions) -> TraceColumns:
        return TraceColumns(self.blocks, self.rows[np.asarray(list(positions), dtype=np.int64)])

    def _locate(self, i: int) -> tuple[Block, int]:
        global_row = int(self.rows[i])
        b = int(np.searchsorted(self._starts, global_row, side="right") - 1)
        return self.blocks[b], global_row - int(self._starts[b])

    def row(self, i: int) -> Trace:
        block, r = row_block(*self._locate(i))  # (its row group, where its token columns are not read yet)
        try:
            return _trace_of(block, r)
        except ParquetPartError:
            raise  # (a column read on access: it names the file and what is wrong already)
        except (ValueError, TypeError, KeyError) as error:
            raise ValueError(f"{block.path}: row {r} is not a valid trace: {error}") from None

    # -- columns as numpy arrays, over every row (in this sequence's order) --------------

    def _all_lengths(self) -> np.ndarray:
        """(rows of every block,) tokens per trace, block after block."""
        parts = [b.lengths() for b in self.blocks]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def _is_whole(self) -> bool:
        """Whether the rows are every block's rows in order (no subset taken)."""
        return len(self.rows) == self._starts[-1] and bool(np.all(self.rows == np.arange(len(self.rows))))

    def _token_index(self) -> np.ndarray | None:
        """Positions in the blocks' flat token columns of this sequence's tokens (None: all, in order)."""
        if self._is_whole():
            return None
        every = self._all_lengths()
        starts = np.concatenate([[0], np.cumsum(every)])[:-1]
        lengths = every[self.rows]
        before = np.concatenate([[0], np.cumsum(lengths)])[:-1]
        return np.repeat(starts[self.rows] - before, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)

    def lengths(self) -> np.ndarray:
        """(N,) tokens per trace."""
        return self._all_lengths()[self.rows]

    def flat(self, name: str, dtype) -> np.ndarray:
        """A per-token list column's values, trace after trace (the fill where a part lacks the column)."""
        if len(self.rows) * FEW_ROWS < self._starts[-1]:
            return self._flat_rows(name, dtype)
        parts = []
        for b in self.blocks:
            column = b.column(name)
            if column is None:
                n = int(b.lengths().sum())
                parts.append(np.full(n, FIELDS[name].fill, dtype=dtype))
            else:
                off = _offsets(column)
                parts.append(_values(column, dtype)[off[0] : off[-1]])
        every = np.concatenate(parts) if parts else np.zeros(0, dtype)
        index = self._token_index()
        return every if index is None else every[index]

    def _flat_rows(self, name: str, dtype) -> np.ndarray:
        """`flat` of a few rows of many, row by row (the view's 120 rows of 1M: 0.5 s through whole columns)."""
        parts = []
        for block, r in map(self._locate, range(len(self.rows))):
            column = block.column(name)
            if column is None or not column[r].is_valid:
                parts.append(np.full(int(block.lengths()[r]), FIELDS[name].fill, dtype=dtype))
            else:
                parts.append(np.asarray(column[r].values.to_numpy(zero_copy_only=False), dtype=dtype))
        return np.concatenate(parts) if parts else np.zeros(0, dtype)

    def scalars(self, name: str, dtype, default) -> np.ndarray:
        """A per-trace column as numpy (`default` where a part lacks it)."""
        parts = []
        for b in self.blocks:
            column = b.column(name)
            parts.append(np.full(len(b), default, dtype=dtype) if column is None
                         else column.to_numpy(zero_copy_only=False).astype(dtype, copy=False))
        every = np.concatenate(parts) if parts else np.zeros(0, dtype)
        return every[self.rows]

    def token_codes(self):
        """(code per token, distinct token texts): what `Corpus.token_codes` holds, from Arrow's dictionary
        encoding of each block (no Python string per token)."""
        codes, uniques = factorize_tokens(_token_texts(b) for b in self.blocks)
        index = self._token_index()
        return (codes, uniques) if index is None else (codes[index], uniques)

    def _rows_of(self, every: list) -> list:
        return every if self._is_whole() else [every[r] for r in self.rows.tolist()]

    def previews(self, chars: int) -> list[str]:
        """Each trace's text cut to `chars` characters (an ellipsis where cut)."""
        import pyarrow.compute as pc

        out = []
        for b in self.blocks:
            text = b.column("text")
            if text is None:
                out.extend(_preview_of(_trace_of(b, r).text, chars) for r in range(len(b)))
                continue
            cut = pc.utf8_slice_codeunits(text, 0, chars - 1).to_pylist()
            long = pc.greater(pc.utf8_length(text), chars).to_numpy(zero_copy_only=False)
            whole = text.to_pylist()
            out.extend(c + "…" if is_long else w for c, w, is_long in zip(cut, whole, long, strict=True))
        return self._rows_of(out)

    def texts(self) -> list[str]:
        """Each trace's whole text, from the parts' "text" column (a Trace built only where one lacks it)."""
        out = []
        for b in self.blocks:
            text = b.column("text")
            out.extend(text.to_pylist() if text is not None else (_trace_of(b, r).text for r in range(len(b))))
        return self._rows_of(out)

    def text_column(self):
        """Each trace's whole text as one Arrow string array (this sequence's order), None where a part
        has no "text" column."""
        import pyarrow as pa

        columns = [b.column("text") for b in self.blocks]
        if any(c is None for c in columns):
            return None
        whole = pa.chunked_array(columns, pa.string()).combine_chunks() if columns else pa.array([], pa.string())
        return whole if self._is_whole() else whole.take(pa.array(self.rows))

    def flag_summaries(self) -> list[str]:
        """Per trace, the flag codes any of its tokens carries, comma-separated ('' for none)."""
        out = []
        for b in self.blocks:
            column = b.column("flags")
            if column is None:
                out.extend([""] * len(b))
                continue
            valid = column.is_valid().to_numpy(zero_copy_only=False)
            out.extend(", ".join(sorted({c for row in column[r].as_py() for c in row})) if valid[r] else ""
                       for r in range(len(b)))
        return self._rows_of(out)

    def models(self, limit: int = 1000) -> list[str]:
        import pyarrow.compute as pc

        names = set()
        for b in self.blocks:
            column = b.column("meta")
            for text in ([] if column is None else pc.unique(column).to_pylist()[:limit]):
                meta = json.loads(text) if text else {}
                names.add(str(meta.get("model", meta.get("source", "?"))))
        return sorted(names)


def _preview_of(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def previews(traces, chars: int) -> list[str]:
    """Each trace's text cut to `chars` characters (from the first `chars` tokens' bytes; an ellipsis where cut)."""
    if isinstance(traces, TraceColumns):
        return traces.previews(chars)
    return [_preview_of(display_token(b"".join(t.token_bytes[:chars])), chars) for t in traces]


def texts_of(traces) -> list[str]:
    """Each trace's whole text (from the columns of a column-backed corpus: no Trace per item)."""
    return traces.texts() if isinstance(traces, TraceColumns) else [t.text for t in traces]


def flag_summaries(traces) -> list[str]:
    """Per trace, the flag codes any of its tokens carries, comma-separated ('' for none)."""
    if isinstance(traces, TraceColumns):
        return traces.flag_summaries()
    return [", ".join(sorted({c for row in t.flags for c in row})) for t in traces]


def _token_texts(block: Block):
    """The block's flat token texts (an Arrow string array), made from the bytes when no `tokens` column."""
    import pyarrow as pa
    column = block.column("tokens")
    if column is not None:
        return column.flatten()
    return pa.array([display_token(b) for b in block.column("token_bytes").flatten().to_pylist()], pa.string())


def _trace_of(block: Block, r: int) -> Trace:
    """Row `r` of `block` as a Trace (the inverse of `parquet.trace_table`)."""
    def list_row(name, dtype):
        column = block.column(name)
        if column is None or not column[r].is_valid:
            return None
        off = _offsets(column)
        return np.array(_values(column, dtype)[off[r] : off[r + 1]], dtype=dtype)

    def nested_row(name, dtype, n, k):
        column = block.column(name)
        if column is None or not column[r].is_valid:
            return None
        inner = column.values
        off, ioff = _offsets(column), _offsets(inner)
        lo, hi = ioff[off[r]], ioff[off[r + 1]]
        return np.array(_values(inner, dtype)[lo:hi], dtype=dtype).reshape(n, k)

    token_bytes = block.column("token_bytes")[r].as_py()
    n = len(token_bytes)
    tokens_column = block.column("tokens")
    k = int(block.column("k")[r].as_py()) if block.column("k") is not None else 0
    vocab_column = block.column("vocab")
    vocab_index = -1 if vocab_column is None or not vocab_column[r].is_valid else int(vocab_column[r].as_py())
    top_tokens = block.column("top_tokens")
    flags = block.column("flags")
    processed = nested_row("processed_top_logprobs", np.float32, n, k)
    meta = block.column("meta")
    return Trace(
        tokens=tokens_column[r].as_py() if tokens_column is not None else None,
        token_bytes=token_bytes,
        **{name: list_row(name, FIELDS[name].dtype) for name in PER_TOKEN_COLUMNS},
        top_logprobs=nested_row("top_logprobs", np.float32, n, k),
        top_ids=nested_row("top_ids", np.int32, n, k),
        top_tokens=None if vocab_index >= 0 or top_tokens is None or not top_tokens[r].is_valid
        else top_tokens[r].as_py(),
        vocab=block.vocabs[vocab_index] if vocab_index >= 0 else None,
        processed_logprobs=None if processed is None else list_row("processed_logprobs", np.float32),
        processed_top_logprobs=processed,
        flags=None if flags is None or not flags[r].is_valid else flags[r].as_py(),
        prompt_len=int(block.column("prompt_len")[r].as_py()),
        meta=json.loads(meta[r].as_py() or "{}") if meta is not None else {},
    )


class TextColumn(ColumnRows):
    """``corpus.labels`` of a column-backed corpus: a string per row, read on access."""

    def __init__(self, values):
        self.values = values  # a pyarrow string array (or ChunkedArray)

    def __len__(self) -> int:
        return len(self.values)

    def row(self, i: int) -> str:
        return self.values[i].as_py()

    def take(self, positions) -> TextColumn:
        return TextColumn(self.values.take(np.asarray(list(positions), dtype=np.int64)))

    def __iter__(self):
        return iter(self.values.to_pylist())

    def __array__(self, dtype=None, copy=None):
        return np.array(self.values.to_pylist(), dtype=object if dtype is None else dtype)

    def __contains__(self, label) -> bool:
        return self.index(label, missing=-1) >= 0

    def index(self, label, missing=None) -> int:
        import pyarrow.compute as pc

        found = pc.index(self.values, str(label)).as_py()
        if found < 0 and missing is None:
            raise ValueError(f"{label!r} is not a label")
        return found


class JsonColumn(ColumnRows):
    """``corpus.metadata`` of a column-backed corpus: a JSON text per row, parsed on access."""

    def __init__(self, values):
        self.values = values

    def __len__(self) -> int:
        return len(self.values)

    def row(self, i: int) -> dict:
        text = self.values[i].as_py()
        return json.loads(text) if text else {}

    def take(self, positions) -> JsonColumn:
        return JsonColumn(self.values.take(np.asarray(list(positions), dtype=np.int64)))

    def any_has(self, key: str) -> bool:
        """Whether a row's dict has `key`: only the rows whose text holds the quoted key are parsed."""
        import pyarrow.compute as pc

        holds = pc.match_substring(self.values, json.dumps(key)).to_numpy(zero_copy_only=False)
        return any(key in self.row(int(i)) for i in np.flatnonzero(holds))


def any_has(metadata, key: str) -> bool:
    """Whether any item's metadata dict has `key`; a column-backed corpus answers from its JSON
    texts, without a dict per row (1M rows took ~4 s that way)."""
    if isinstance(metadata, JsonColumn):
        return metadata.any_has(key)
    return any(key in m for m in metadata)
