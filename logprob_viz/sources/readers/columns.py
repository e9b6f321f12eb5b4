"""One section of a trace as columns: what `assemble.build_trace` reads, from any parser.

A parser gives either a list of `position.Token` (one object per position: the general path,
every quirk of every format) or, for the common well-formed body, `Columns` built in one pass
over all positions' items without an object per token (`openai_completions`, `ranking`). The
assembler turns a Token list into Columns first (`Columns.from_tokens`), so there is one
assembler for both.

Alternatives are flat, row after row: row ``i`` holds ``counts[i]`` of them, most likely first.

A parser that already numbered the distinct strings (to compare them as ints) may hand that
numbering on: ``strings`` (each distinct string once) and ``codes`` / ``alt_codes`` (an index
into it per token and per alternative). The assembler then resolves each distinct string once
and looks the rest up by index, without hashing every token's string again.
"""

from __future__ import annotations

import math
from itertools import chain

import numpy as np

from .position import Token

__all__ = ["Columns"]

NAN = math.nan


class Columns:
    """The chosen tokens ([N]) and their alternatives (flat, [M] = ``counts.sum()``) of one section.

    ``raw`` / ``alt_raw`` are the strings as the source wrote them (None where unknown);
    ``given`` / ``alt_given`` the ``bytes`` fields, or None when the source gave none at all;
    ``ids`` / ``alt_ids`` lists of ints (-1 unknown: kept as Python ints until the assembler has
    checked their range); ``logprobs``, ``ranks``, ``processed`` per token; ``flags`` a sparse
    {position: codes}. ``strings`` / ``codes`` / ``alt_codes``: the parser's numbering of the
    strings (see the module's docstring), only where no string is None and no bytes were given;
    ``alt_raw`` is then derived from it when not given. ``checked``: the parser has checked that
    its ids and ranks fit the trace's int32 (`ranking.int32_safe`; ranks it computed itself), so
    the assembler need not look at every one again.
    """

    __slots__ = ("raw", "given", "ids", "logprobs", "ranks", "processed", "flags",
                 "counts", "alt_raw", "alt_lp", "alt_ids", "alt_given", "alt_processed",
                 "strings", "codes", "alt_codes", "checked")

    def __init__(self, raw: list, logprobs, *, given: list | None = None, ids: list | None = None, ranks=None,
                 processed=None, flags: dict | None = None, counts=None, alt_raw: list | None = None, alt_lp=None,
                 alt_ids: list | None = None, alt_given: list | None = None, alt_processed=None,
                 strings: list[str] | None = None, codes=None, alt_codes=None, checked: bool = False):
        n = len(raw)
        self.checked = checked
        self.strings, self.codes, self.alt_codes = strings, codes, alt_codes
        if alt_raw is None and strings is not None and alt_codes is not None:
            alt_raw = np.array(strings, dtype=object)[alt_codes].tolist() if len(alt_codes) else []
        self.raw = raw
        self.given = given
        self.ids = [-1] * n if ids is None else ids
        self.logprobs = np.asarray(logprobs, dtype=np.float64)
        self.ranks = [0] * n if ranks is None else ranks
        self.processed = None if processed is None else np.asarray(processed, dtype=np.float64)
        self.flags = flags or {}
        self.counts = np.zeros(n, np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
        self.alt_raw = [] if alt_raw is None else alt_raw
        m = len(self.alt_raw)
        self.alt_lp = np.empty(0) if alt_lp is None else np.asarray(alt_lp, dtype=np.float64)
        self.alt_ids = [-1] * m if alt_ids is None else alt_ids
        self.alt_given = alt_given
        self.alt_processed = None if alt_processed is None else np.asarray(alt_processed, dtype=np.float64)

    def __len__(self) -> int:
        return len(self.raw)

    @classmethod
    def from_tokens(cls, tokens: list[Token]) -> Columns:
        """A Token list (the general path) as columns."""
        flat = list(chain.from_iterable(t.alternatives for t in tokens))
        given = [t.given for t in tokens]
        alt_given = [a[3] for a in flat]
        processed = [t.processed for t in tokens]
        alt_processed = [a[5] for a in flat]
        return cls(
            [t.raw for t in tokens], [t.logprob for t in tokens],
            given=given if any(g is not None for g in given) else None,
            ids=[t.id for t in tokens], ranks=[t.rank for t in tokens],
            processed=processed if any(p == p for p in processed) else None,
            flags={i: t.flags for i, t in enumerate(tokens) if t.flags},
            counts=[len(t.alternatives) for t in tokens],
            alt_raw=[a[0] for a in flat], alt_lp=[a[1] for a in flat], alt_ids=[a[2] for a in flat],
            alt_given=alt_given if any(g is not None for g in alt_given) else None,
            alt_processed=alt_processed if any(p == p for p in alt_processed) else None,
        )

    def interned(self) -> bool:
        """Whether the parser's numbering of the strings can stand for them (see the module's docstring)."""
        return self.strings is not None and self.given is None and self.alt_given is None

    def used(self) -> np.ndarray:
        """Per entry of ``strings``, whether a token or a kept alternative is that string."""
        used = np.zeros(len(self.strings), bool)
        used[self.codes] = True
        used[self.alt_codes] = True
        return used

    def distinct(self) -> list[str]:
        """Every distinct string (chosen and kept alternatives), for `tokens.detect_encoding`."""
        if self.strings is not None:
            return [s for s, used in zip(self.strings, self.used().tolist(), strict=True) if used]
        out = dict.fromkeys(self.raw)
        out.update(dict.fromkeys(self.alt_raw))
        out.pop(None, None)
        return list(out)
