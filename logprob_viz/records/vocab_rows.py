"""Compact per-token rows, so a trace of a million tokens stays near the size of its arrays.

A list of lists costs ~64 bytes per token even when empty, and a list of K strings per token
~8K bytes of pointers more. `NO_FLAGS` is the one shared empty flags row; `VocabRows` stands for
``top_tokens`` and reads the alternatives' texts from ``top_ids`` and the tokenizer's shared
vocabulary table only when asked.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NO_FLAGS", "VocabRows"]


class _NoFlags(list):
    """The one shared empty flags row: equal to ``[]``, but refuses in-place changes (assign a new list)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("this token's flags row is shared: assign a new list instead, trace.flags[i] = [...]")

    append = extend = insert = remove = pop = clear = sort = reverse = __setitem__ = __delitem__ = _refuse
    __iadd__ = __imul__ = _refuse


NO_FLAGS = _NoFlags()


class VocabRows:
    """``top_tokens`` read on demand from ``top_ids`` and a shared vocabulary table.

    Behaves as the list of lists it stands for (indexing, slicing, iteration, ``==``), but keeps
    no strings per token: a million-token trace at K=20 stays near its numeric arrays' size.
    """

    __slots__ = ("_ids", "_vocab")

    def __init__(self, ids: np.ndarray, vocab) -> None:
        self._ids, self._vocab = ids, vocab

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return VocabRows(self._ids[index], self._vocab)
        vocab = self._vocab
        return [vocab[i] for i in self._ids[index].tolist() if i >= 0]

    def __iter__(self):
        vocab = self._vocab
        for row in self._ids.tolist():
            yield [vocab[i] for i in row if i >= 0]

    def __eq__(self, other) -> bool:
        try:
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        except TypeError:
            return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"VocabRows({len(self)} rows)"
