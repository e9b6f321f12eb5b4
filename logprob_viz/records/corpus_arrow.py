"""What the column-backed corpus, its Parquet reader and its streamed scan share, apart from each:
the error of a part that cannot be read, and token texts numbered from Arrow's dictionary encoding.

(A module of its own so that corpus_columns.py and corpus_parquet.py, which build on each other's
results, need not import each other.)
"""

from __future__ import annotations

import numpy as np

__all__ = ["ParquetPartError", "factorize_tokens"]


class ParquetPartError(ValueError):
    """A Parquet part that cannot be read as corpus rows (truncated, corrupted, or another schema)."""


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
