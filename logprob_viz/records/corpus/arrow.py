"""What the column-backed corpus, its Parquet reader and its streamed scan share, apart from each:
the error of a part that cannot be read, and token texts numbered from Arrow's dictionary encoding.

(A module of its own so that columns.py and parquet.py, which build on each other's
results, need not import each other.)
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

__all__ = ["ParquetPartError", "factorize_tokens", "unreadable_part", "file_stamp"]


class ParquetPartError(ValueError):
    """A Parquet part that cannot be read as corpus rows (truncated, corrupted, or another schema)."""


def _not_parquet(path: Path) -> str | None:
    """What a file that does not start as Parquet does (b"PAR1") is, in words (a JSONL corpus most
    often); None when it starts as Parquet, is empty or cannot be opened: its damage says more."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return None
    if not head or head.startswith(b"PAR1"):
        return None
    if head.lstrip()[:1] in (b"{", b"["):
        saved = b'"logprob_viz.corpus"' in head.split(b"\n", 1)[0]  # the first line corpus.save writes
        opens = "lv.Corpus.load" if saved else "lv.Corpus.read_jsonl (server responses or trace dicts, a line each)"
        return f"not a Parquet file but JSON lines; a JSONL corpus opens with {opens}"
    return f"not a Parquet file (it starts with {head[:8]!r}, where Parquet starts with b'PAR1')"


def unreadable_part(path, error) -> str:
    """The message of a part that pyarrow cannot read: what the file is instead, or that it is damaged."""
    path = Path(path)
    other = _not_parquet(path)
    if other:
        return f"{path}: {other}"
    size = path.stat().st_size if path.exists() else 0
    return (f"{path}: not a readable Parquet file ({size} bytes: {error}). It may be truncated (a write that was "
            "interrupted) or corrupted; write it again")


def file_stamp(path) -> tuple[int, int] | None:
    """(size, modification time in ns) of a file, None when it is gone: whether it changed since."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def factorize_tokens(arrays):
    """(int64 code per token, object array of distinct texts) of Arrow string arrays, in order.

    Each array is dictionary-encoded by Arrow; only its distinct texts pass through Python, to be
    numbered across arrays, so 100M tokens of a 50k vocabulary cost 100M ints, not 100M strings.
    """
    import pyarrow.compute as pc

    numbers: dict[str, int] = {}
    parts = []
    for array in arrays:
        encoded = pc.dictionary_encode(array)
        local = encoded.dictionary.to_pylist()
        mapping = np.array([numbers.setdefault(s, len(numbers)) for s in local] or [0], dtype=np.int64)
        parts.append(mapping[encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)])
    uniques = np.empty(len(numbers), dtype=object)
    uniques[:] = list(numbers)
    return (np.concatenate(parts) if parts else np.zeros(0, np.int64)), uniques
