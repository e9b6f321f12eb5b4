"""A corpus as Parquet: a row per trace, a list column per per-token field (`Corpus.to_parquet`,
`Corpus.read_parquet`); the schema is in docs/scale.md.

The round trip is exact: numbers go in their own dtypes (float32 bits, NaN and -inf included),
token bytes as binary, meta and metadata as JSON text. A local trace reads its alternatives'
texts from the tokenizer's vocabulary (`Trace(vocab=...)`): the file keeps the part of that table
its rows use (the alternatives' ids and their bytes) once, in its key-value metadata, and the rows
only the ids (``vocab`` names the table; ``top_tokens`` is null); a file written with the whole
table (before issue 48) reads as before. Rows from elsewhere (Ray, vLLM rows) carry ``top_tokens`` themselves.

Reading keeps the columns (`columns`): nothing per trace is built until asked. A folder is
read part by part (``*.parquet`` files, sorted by name); a part that is truncated, corrupted or
not Parquet at all (a JSONL corpus) gives an error naming it and what is wrong, or with
``on_error="skip"`` a warning, the part left out and named in ``corpus.skipped``. A column read
later checks first that its file is still the one opened (`arrow.file_stamp`).
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..run_stats import SUMMARIES, summaries
from .arrow import ParquetPartError, file_stamp, unreadable_part
from .columns import Block, JsonColumn, TextColumn, TraceColumns
from .layout import note_used_ids, null_everywhere, vocab_entry, vocab_of, write_options

__all__ = ["SCHEMA_KEY", "trace_table", "corpus_table", "write_parquet", "read_parquet", "ParquetColumns",
           "parquet_parts", "read_part", "column_token_table"]

SCHEMA_KEY = b"logprob_viz.corpus"  # key-value metadata: {"version", "meta"} of the corpus
VOCABS_KEY = b"logprob_viz.vocabs"  # key-value metadata: the vocabulary tables the rows' `vocab` names
VERSION = 1
ROW_GROUP = 10_000  # traces per row group: a reader can stream a file a row group at a time
REQUIRED = ("token_bytes", "logprobs", "prompt_len")
# Read when first asked for (`LaterColumns`): what the table view and the statistics never read.
LATER = ("tokens", "token_bytes", "token_ids", "ranks", "top_ids", "top_logprobs", "top_tokens", "processed_logprobs",
         "processed_top_logprobs")
# Read when first asked for in a part that stores the summaries (`SUMMARIES`): the table reads those instead.
LATER_WITH_SUMMARIES = ("entropy",)
PER_TOKEN_LISTS = ("tokens", "token_ids", "logprobs", "ranks", "entropy", "top_ids", "top_logprobs", "top_tokens",
                   "processed_logprobs", "processed_top_logprobs", "flags")


def _pa():
    try:
        import pyarrow as pa
    except ImportError:
        raise ImportError("Parquet needs pyarrow: pip install pyarrow (or logprob-viz[parquet])") from None
    return pa


# -- writing --------------------------------------------------------------------------------


def _lists(pa, offsets, values, mask=None):
    return pa.ListArray.from_arrays(pa.array(np.asarray(offsets, dtype=np.int32)), values,
                                    mask=None if mask is None else pa.array(mask))


def _nested(pa, lengths, ks, values, kind, mask=None):
    """A list<list<kind>> column: trace i has lengths[i] rows of ks[i] values, `values` flat."""
    inner_sizes = np.repeat(ks, lengths)
    inner = _lists(pa, np.concatenate([[0], np.cumsum(inner_sizes)]), pa.array(values, kind))
    return _lists(pa, np.concatenate([[0], np.cumsum(lengths)]), inner, mask)


def trace_table(traces, labels, metadata, vocabs: dict | None = None):
    """A pyarrow Table of traces in the corpus schema.

    ``vocabs`` ({id(vocab): (number, vocab, [arrays of the ids used])}, filled here; the writer stores
    the used part of each in the file's metadata): a trace with a vocabulary then names it in ``vocab``
    instead of writing its alternatives' texts. None (rows that travel without the file's metadata, as
    a Ray block does): every trace writes ``top_tokens``.
    """
    pa = _pa()
    traces = list(traces)
    lengths = np.array([len(t) for t in traces], dtype=np.int64)
    ks = np.array([t.k for t in traces], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    vocab_of = [-1 if t.vocab is None or vocabs is None
                else vocabs.setdefault(id(t.vocab), (len(vocabs), t.vocab, []))[0] for t in traces]
    if vocabs:
        note_used_ids(traces, vocab_of, vocabs)
    processed = np.array([t.processed_logprobs is not None for t in traces], dtype=bool)

    def flat(name, dtype, which=None):
        parts = [getattr(t, name).reshape(-1) for t, keep in zip(traces, processed if which is None else which,
                                                                 strict=True) if which is None or keep]
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

    def per_token(name, dtype):
        return _lists(pa, offsets, pa.array(flat(name, dtype)))

    def strings(rows_of):  # list<list<string>> with a null row where rows_of gives None
        return pa.array([rows_of(t, v) for t, v in zip(traces, vocab_of, strict=True)],
                        pa.list_(pa.list_(pa.string())))

    kept = lengths * processed  # rows without sampled-from logprobs are null, with no entries
    columns = {
        "label": pa.array([str(x) for x in labels], pa.string()),
        "text": pa.array([t.text for t in traces], pa.string()),
        "prompt_len": pa.array([t.prompt_len for t in traces], pa.int32()),
        "tokens": _lists(pa, offsets, pa.array([s for t in traces for s in t.tokens], pa.string())),
        "token_bytes": _lists(pa, offsets, pa.array([b for t in traces for b in t.token_bytes], pa.binary())),
        "token_ids": per_token("token_ids", np.int32),
        "logprobs": per_token("logprobs", np.float32),
        "ranks": per_token("ranks", np.int32),
        "entropy": per_token("entropy", np.float32),
        "k": pa.array(ks, pa.int32()),
        "top_ids": _nested(pa, lengths, ks, flat("top_ids", np.int32), pa.int32()),
        "top_logprobs": _nested(pa, lengths, ks, flat("top_logprobs", np.float32), pa.float32()),
        "top_tokens": strings(lambda t, v: None if v >= 0 else [list(row) for row in t.top_tokens]),
        "vocab": pa.array([v if v >= 0 else None for v in vocab_of], pa.int32()),
        "processed_logprobs": _lists(pa, np.concatenate([[0], np.cumsum(kept)]),
                                     pa.array(flat("processed_logprobs", np.float32, processed)), ~processed),
        "processed_top_logprobs": _nested(pa, kept, ks, flat("processed_top_logprobs", np.float32, processed),
                                          pa.float32(), ~processed),
        "flags": strings(lambda t, v: None if t.flags_if_any is None else [list(r) for r in t.flags_if_any]),
        "metadata": pa.array([json.dumps(m) for m in metadata], pa.string()),
        "meta": pa.array([json.dumps(t.meta) for t in traces], pa.string()),
    }
    return corpus_table(columns)


def _flat(column, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(offsets from 0, flat values) of a list array, its slice of the values only."""
    offsets = np.asarray(column.offsets, dtype=np.int64)
    values = column.values.to_numpy(zero_copy_only=False).astype(dtype, copy=False)[offsets[0] : offsets[-1]]
    return offsets - offsets[0], values


def corpus_table(columns: dict):
    """A pyarrow Table in the corpus schema from its columns (`trace_table`'s, or any writer's with at
    least ``logprobs``), the per-trace summaries (`SUMMARIES`) added from its ``logprobs`` and ``entropy``
    lists: every file is written through here, so every file stores them the same way."""
    pa = _pa()
    offsets, logprobs = _flat(columns["logprobs"], np.float32)
    entropy = _flat(columns["entropy"], np.float32)[1] if "entropy" in columns else np.full(len(logprobs), np.nan,
                                                                                            np.float32)
    per_trace = summaries(offsets, logprobs, entropy)
    stored = {name: pa.array(per_trace[name].astype(dtype)) for name, dtype in SUMMARIES.items()}
    return pa.table({**{k: v for k, v in columns.items() if k not in SUMMARIES}, **stored})


def write_parquet(corpus, path, *, row_group_size: int = ROW_GROUP) -> Path:
    """Write `corpus` to one Parquet file at `path` (see the module docstring); returns the path."""
    _pa()
    import pyarrow.parquet as pq

    path = Path(path)
    vocabs: dict = {}
    writer = None
    empty = null_everywhere(corpus.traces)
    try:
        for i in range(0, max(len(corpus), 1), row_group_size):
            part = slice(i, i + row_group_size)
            table = trace_table(corpus.traces[part], corpus.labels[part], corpus.metadata[part], vocabs)
            table = table.drop_columns(empty if writer is None else [n for n in empty if n in table.column_names])
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema, **write_options(table.schema))
            writer.write_table(table, row_group_size=row_group_size)
    finally:
        if writer is not None:
            writer.add_key_value_metadata({
                SCHEMA_KEY: json.dumps({"version": VERSION, "meta": corpus.meta, "items": len(corpus)}),
                VOCABS_KEY: json.dumps([vocab_entry(v, used) for _, v, used in sorted(vocabs.values(),
                                                                                    key=lambda e: e[0])]),
            })
            writer.close()
    return path


# -- reading --------------------------------------------------------------------------------


def parquet_parts(path) -> list[Path]:
    """The Parquet files of `path`: itself, or a folder's ``*.parquet`` files (nested too), sorted."""
    path = Path(path)
    if path.is_dir():
        parts = sorted(p for p in path.rglob("*.parquet") if p.is_file() and not p.name.startswith((".", "_")))
        if not parts:
            raise FileNotFoundError(f"{path} holds no *.parquet files; write a corpus with corpus.to_parquet(path) "
                                    "or a Ray dataset with dataset.write_parquet(folder)")
        return parts
    if not path.exists():
        raise FileNotFoundError(f"no file or folder {path}")
    return [path]


def read_part(path: Path, columns=None):
    """(pyarrow Table with one chunk per column, vocabularies, header) of one part; a
    `ParquetPartError` naming the file and what is wrong when it is not readable corpus rows."""
    _pa()
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path, page_checksum_verification=True)
        meta = file.metadata.metadata or {}  # where the writer's key-value metadata is (not the Arrow schema's)
        table = file.read(columns=columns)
    except (pa.ArrowException, OSError) as error:
        raise ParquetPartError(unreadable_part(path, error)) from None
    missing = [c for c in REQUIRED if c not in table.column_names and (columns is None or c in columns)]
    if missing:
        raise ParquetPartError(f"{path}: not corpus rows: no column {', '.join(missing)} (it has "
                               f"{', '.join(table.column_names[:12])}); see docs/scale.md for the schema")
    table = table.combine_chunks()
    table = pa.table({name: (col.chunk(0) if col.num_chunks else pa.array([], col.type))
                      for name, col in zip(table.column_names, table.columns, strict=True)})
    _check_lengths(path, table)
    try:
        header = json.loads(meta.get(SCHEMA_KEY, b"{}"))
        vocabs = [vocab_of(e) for e in json.loads(meta.get(VOCABS_KEY, b"[]"))]
    except (ValueError, KeyError, TypeError) as error:
        raise ParquetPartError(f"{path}: its logprob_viz metadata is not readable JSON ({error})") from None
    if header.get("version", VERSION) > VERSION:
        raise ParquetPartError(f"{path} was written by a newer logprob_viz (format {header['version']}); upgrade")
    return table, vocabs, header


def _check_lengths(path, table, lengths=None, against: str = "token_bytes") -> None:
    """Every per-token list column has one entry per token on every row (`lengths`, else token_bytes')."""
    if lengths is None:
        if "token_bytes" not in table.column_names:
            return
        lengths = np.diff(np.asarray(table.column("token_bytes").chunk(0).offsets, dtype=np.int64))
    for name in PER_TOKEN_LISTS:
        if name not in table.column_names:
            continue
        column = table.column(name).chunk(0)
        got = np.diff(np.asarray(column.offsets, dtype=np.int64))
        valid = column.is_valid().to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(valid & (got != lengths))
        if bad.size:
            r = int(bad[0])
            raise ParquetPartError(f"{path}: row {r}: {name} has {got[r]} entries but {against} has {lengths[r]} "
                                   f"tokens ({bad.size} such rows); every per-token list needs one entry per token")


class LaterColumns:
    """A part's columns read when first asked for (`Block.later`), each checked as `read_part` checks
    the others; a part unreadable by then raises `ParquetPartError` (``on_error="skip"`` only skips
    what `read_parquet` itself reads: every column but `LATER`)."""

    def __init__(self, path: Path, names, lengths: np.ndarray):
        self.path, self.names, self.lengths = path, set(names), lengths
        self.stamp = file_stamp(path)  # (size, mtime) when the corpus was opened

    def read(self, name: str):
        pa = _pa()
        import pyarrow.parquet as pq

        now = file_stamp(self.path)
        if now != self.stamp:
            what = "is gone" if now is None else "changed (its size or time differs)"
            raise ParquetPartError(f"{self.path}: the file {what} since the corpus was opened, and its column {name} "
                                   "is read only when first needed; keep the files as they are while the corpus is "
                                   "in use, or open it again with lv.Corpus.read_parquet")
        try:
            column = pq.ParquetFile(self.path, page_checksum_verification=True).read(columns=[name]).column(0)
        except (pa.ArrowException, OSError) as error:
            raise ParquetPartError(f"{self.path}: its column {name}, read when first needed, is not readable "
                                   f"({error}); the file is corrupted: write it again") from None
        column = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
        _check_lengths(self.path, pa.table({name: column}), self.lengths, "the part's logprobs")
        return column

    def read_group(self, r: int, names: list[str]):
        """(the columns `names` of the row group that holds row `r`, that group's first row), checked as
        `read` checks a whole column (one_row.py: one trace without reading the whole part's columns)."""
        pa = _pa()
        import pyarrow.parquet as pq

        if file_stamp(self.path) != self.stamp:
            self.read(names[0])  # (raises the error that says the file changed or is gone)
        try:
            file = pq.ParquetFile(self.path, page_checksum_verification=True)
            sizes = np.array([file.metadata.row_group(g).num_rows for g in range(file.metadata.num_row_groups)])
            group = int(np.searchsorted(np.cumsum(sizes), r, side="right"))
            table = file.read_row_group(group, columns=names).combine_chunks()
        except (pa.ArrowException, OSError) as error:
            raise ParquetPartError(f"{self.path}: its columns {', '.join(names)} (the row group of row {r}), read "
                                   f"when first needed, are not readable ({error}); the file is corrupted: write "
                                   "it again") from None
        first = int(sizes[:group].sum())
        _check_lengths(self.path, table, self.lengths[first : first + table.num_rows], "the part's logprobs")
        return table, first


def _read_block(path: Path):
    """(`Block`, header) of one part: every column but `LATER` read now (and checked), those on access."""
    pa = _pa()
    import pyarrow.parquet as pq

    try:
        names = pq.ParquetFile(path).schema_arrow.names
    except (pa.ArrowException, OSError):
        names = None  # read_part says what is wrong
    if names is None or "token_bytes" not in names:
        table, vocabs, header = read_part(path)
        return Block(table, vocabs, str(path)), header
    later_names = LATER + (LATER_WITH_SUMMARIES if all(n in names for n in SUMMARIES) else ())
    table, vocabs, header = read_part(path, columns=[n for n in names if n not in later_names])
    logprobs = table.column("logprobs").chunk(0) if "logprobs" in table.column_names else None
    if logprobs is None or logprobs.null_count:  # lengths from the token bytes, read now
        table, vocabs, header = read_part(path)
        return Block(table, vocabs, str(path)), header
    lengths = np.diff(np.asarray(logprobs.offsets, dtype=np.int64))
    _check_lengths(path, table, lengths, "logprobs")
    later = LaterColumns(path, [n for n in names if n in later_names], lengths)
    return Block(table, vocabs, str(path), later), header


@dataclass(frozen=True)
class ParquetColumns:
    """What `read_parquet` read: a column-backed corpus's parts (`Corpus.read_parquet` makes the corpus)."""

    traces: TraceColumns
    labels: TextColumn  # one per trace (the position where a part stores none)
    metadata: JsonColumn  # a dict per trace, parsed when read
    meta: dict  # about the whole corpus: the first part's header
    skipped: list[tuple[str, str]]  # (path, what was wrong) of each part left out by on_error="skip"


def read_parquet(path, *, on_error: str = "raise") -> ParquetColumns:
    """The columns of the corpus in a Parquet file or folder (see the module docstring), nothing per
    trace built: the traces a `TraceColumns`, the labels and metadata over Arrow columns."""
    if on_error not in ("raise", "skip"):
        raise ValueError(f'on_error must be "raise" or "skip", got {on_error!r}')
    pa = _pa()
    blocks, skipped, meta = [], [], None
    parts = parquet_parts(path)
    for part in parts:
        try:
            block, header = _read_block(part)
        except ParquetPartError as error:
            if on_error == "raise":
                others = "; or read the other parts with read_parquet(folder, on_error='skip')"
                others = others if len(parts) > 1 else ""
                raise ParquetPartError(f"{error}{others}") from None
            skipped.append((str(part), str(error)))
            continue
        blocks.append(block)
        meta = header.get("meta", {}) if meta is None else meta
    if skipped:  # (what to do for each part is in its reason; on_error="skip" was already used)
        warnings.warn(f"read_parquet skipped {len(skipped)} unreadable part(s), listed in corpus.skipped: " + "; ".join(
            e for _, e in skipped), stacklevel=3)
    traces = TraceColumns(blocks)

    def joined(name, fill):  # `fill` in a part without the column, repeated by Arrow (a str per row took 0.2 s at 1M)
        arrays = [b.column(name) if b.column(name) is not None else pa.repeat(pa.scalar(fill, pa.string()), len(b))
                  for b in blocks]
        return pa.chunked_array(arrays, pa.string()) if arrays else pa.chunked_array([], pa.string())

    starts = np.concatenate([[0], np.cumsum([len(b) for b in blocks])]).tolist()
    labels = joined("label", "") if all(b.column("label") is not None for b in blocks) else pa.chunked_array(
        [pa.array([str(starts[j] + i) for i in range(len(b))], pa.string()) for j, b in enumerate(blocks)],
        pa.string())
    metadata = joined("metadata", "{}")
    return ParquetColumns(traces, TextColumn(labels), JsonColumn(metadata), dict(meta or {}), skipped)


class _TokenTable(dict):
    """`Corpus.token_table` of a column-backed corpus: the "token" texts are made only when read
    (the surprise index reads the codes, `Corpus.token_codes`, instead)."""

    def __init__(self, columns, token_codes):
        super().__init__(columns)
        self._token_codes = token_codes

    def __missing__(self, key):
        if key != "token":
            raise KeyError(key)
        codes, uniques = self._token_codes
        self["token"] = uniques[codes]  # references to the distinct strings, no new string per token
        return self["token"]


def column_token_table(corpus) -> dict:
    """The token table (`Corpus.token_table`) of a column-backed corpus, from its columns; its token
    texts from the corpus's `Corpus.token_codes`, made when first read."""
    traces = corpus.traces
    lengths = traces.lengths()
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(lengths) else lengths
    total = int(lengths.sum())
    item = np.repeat(np.arange(len(traces), dtype=np.int32), lengths)
    position = (np.arange(total, dtype=np.int64) - np.repeat(starts, lengths)).astype(np.int32)
    prompt_lens = traces.scalars("prompt_len", np.int64, 0)
    return _TokenTable({
        "item": item, "position": position,
        "token_id": traces.flat("token_ids", np.int32), "logprob": traces.flat("logprobs", np.float32),
        "rank": traces.flat("ranks", np.int32), "entropy": traces.flat("entropy", np.float32),
        "is_prompt": position < np.repeat(prompt_lens, lengths), "first": position == 0,
    }, corpus.token_codes)
