"""The surprise index of a corpus too large to load: streamed from its Parquet parts
(`Corpus.surprise_index_parquet`).

Each part is read a batch of rows at a time, only the columns the index needs (the token texts,
logprobs, ranks, prompt_len); each batch's token texts are dictionary-encoded by Arrow, so only
its distinct texts pass through Python, numbered across batches; the per-group sums
(`index.group_sums`) of the batches add up. Memory is one batch's columns plus a few
numbers per distinct token text, whatever the corpus's size. The result equals
``Corpus.read_parquet(path).surprise_index(...)``.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tokens import display_token
from .arrow import ParquetPartError, unreadable_part
from .index import CLASSES, group_sums, index_frame, token_classes
from .parquet import parquet_parts

__all__ = ["surprise_index_parquet", "BATCH_ROWS"]

BATCH_ROWS = 65_536  # rows per batch read: ~6M tokens of 100-token traces, a few hundred MB of columns
_SUMS = ("count", "surprisal", "highest", "rank_count", "rank_sum", "over_10")


def _add(total: dict | None, part: dict) -> dict:
    if total is None:
        return part
    n = len(part["count"])
    out = {}
    for name in _SUMS:
        mine = total[name]
        if len(mine) < n:  # new groups since the last batch
            mine = np.concatenate([mine, np.full(n - len(mine), -np.inf if name == "highest" else 0, mine.dtype)])
        out[name] = np.maximum(mine, part[name]) if name == "highest" else mine + part[name]
    return out


def _batches(path, on_error: str, batch_rows: int):
    import pyarrow as pa
    import pyarrow.parquet as pq

    for part in parquet_parts(path):
        try:
            file = pq.ParquetFile(part, page_checksum_verification=True)
            names = file.schema_arrow.names
            text = "tokens" if "tokens" in names else "token_bytes"
            columns = [c for c in (text, "logprobs", "ranks", "prompt_len") if c in names]
            yield from file.iter_batches(batch_size=batch_rows, columns=columns)
        except (pa.ArrowException, OSError) as error:
            message = unreadable_part(part, error)
            if on_error == "raise":
                raise ParquetPartError(message + "; read the other parts with on_error='skip'") from None
            warnings.warn(f"surprise_index_parquet skipped {message}", stacklevel=3)


def _token_texts(batch):
    import pyarrow as pa
    if "tokens" in batch.schema.names:
        return batch.column("tokens").flatten()
    return pa.array([display_token(b) for b in batch.column("token_bytes").flatten().to_pylist()], pa.string())


def surprise_index_parquet(path, by: str = "token", *, prompt: bool = True, on_error: str = "raise",
                           batch_rows: int = BATCH_ROWS):
    """`Corpus.surprise_index` of the corpus in a Parquet file or folder, streamed (see the module docstring)."""
    import pyarrow.compute as pc

    if by not in ("token", "class"):
        raise ValueError(f'by must be "token" or "class", got {by!r}')
    numbers: dict[str, int] = {}  # token text -> group number, across batches
    total = None
    for batch in _batches(path, on_error, batch_rows):
        texts = _token_texts(batch)
        offsets = np.asarray(batch.column(0).offsets, dtype=np.int64)
        lengths = np.diff(offsets)
        position = np.arange(int(offsets[-1] - offsets[0]), dtype=np.int64) - np.repeat(offsets[:-1] - offsets[0],
                                                                                        lengths)
        prompt_len = batch.column("prompt_len").to_numpy(zero_copy_only=False).astype(np.int64)
        is_prompt = position < np.repeat(prompt_len, lengths)
        encoded = pc.dictionary_encode(texts)
        local = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        uniques = encoded.dictionary.to_pylist()
        if by == "token":
            mapping = np.array([numbers.setdefault(s, len(numbers)) for s in uniques] or [0], dtype=np.int64)
            codes, n = mapping[local], len(numbers)
        else:
            names = np.empty(len(uniques), dtype=object)
            names[:] = uniques
            codes, n = token_classes(None, position == 0, (local, names)).astype(np.int64), len(CLASSES)
        logprob = _flat(batch, "logprobs", np.float32, np.nan, len(position))
        rank = _flat(batch, "ranks", np.int32, 0, len(position))
        total = _add(total, group_sums(codes, logprob, rank, is_prompt, n, prompt=prompt))
    if by == "token":
        names = np.empty(len(numbers), dtype=object)
        names[:] = list(numbers)
    else:
        names = np.asarray(CLASSES, dtype=object)
    if total is None:
        total = {name: np.zeros(len(names)) for name in _SUMS}
    return index_frame(names, total)


def _flat(batch, name: str, dtype, fill, n: int) -> np.ndarray:
    if name not in batch.schema.names:
        return np.full(n, fill, dtype=dtype)
    column = batch.column(name)
    offsets = np.asarray(column.offsets, dtype=np.int64)
    return column.values.to_numpy(zero_copy_only=False)[offsets[0] : offsets[-1]].astype(dtype, copy=False)
