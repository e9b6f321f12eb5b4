"""The shared intermediate form: one position of a trace, as every format's parser gives it.

A parser turns its format into a list of `Token` (the chosen token at each position, with its
`Alternative` list); `assemble.build_trace` turns those lists into a `Trace`. A parser says
what the source gave (the string as written, bytes where given, ids, logprobs) and what it
lost (``flags``, codes from `logprob_viz.records.flags.TOKEN_FLAGS`); turning strings into exact bytes
and readable text happens once, in the assembler.
"""

from __future__ import annotations

import gc
import math
from contextlib import contextmanager
from typing import NamedTuple

__all__ = ["Token", "Alternative", "LN_HALF", "same_logprob", "rank_by_id", "no_gc_pauses"]

LN_HALF = math.log(0.5)


class Alternative(NamedTuple):
    """One of the most likely tokens at a position (a tuple: there are N*K of them)."""

    raw: str | None  # the string as the source wrote it
    logprob: float
    id: int = -1
    given: bytes | None = None  # a `bytes` field, where the source gave one
    rank: int = 0
    processed: float = math.nan  # its logprob after the samplers, where the source gave that instead


class Token:
    """The chosen token at one position.

    ``logprob`` is the model's (NaN where unknown); ``processed`` the logprob under the
    distribution that was sampled from, where the source gave that (llama.cpp's
    ``post_sampling_probs``; a parser that gives processed values sets them on the chosen
    token, so the assembler knows to keep them). ``alternatives`` holds tuples in
    `Alternative`'s field order (hot parsers build plain tuples; the assembler reads by index).
    ``flags`` starts as an empty tuple shared by all tokens: add codes with `flag`.
    """

    __slots__ = ("raw", "given", "id", "logprob", "rank", "alternatives", "flags", "processed")

    def __init__(self, raw: str | None, given: bytes | None = None, id: int = -1, logprob: float = math.nan,
                 rank: int = 0, alternatives: list | tuple = (), processed: float = math.nan):
        self.raw = raw
        self.given = given
        self.id = id
        self.logprob = logprob
        self.rank = rank
        self.alternatives = alternatives
        self.flags: tuple | list = ()
        self.processed = processed

    def flag(self, code: str) -> None:
        """Record what the source lost at this position (a code from `TOKEN_FLAGS`)."""
        if code not in self.flags:
            self.flags = [*self.flags, code]

    def __repr__(self) -> str:
        return (f"Token({self.raw!r}, id={self.id}, logprob={self.logprob}, rank={self.rank}, "
                f"k={len(self.alternatives)})")


def same_logprob(a: float, b: float) -> bool:
    """Equal up to float32 rounding (a server may write float32 values through float64)."""
    if a == b:
        return True
    if math.isinf(a) or math.isinf(b):
        return False
    return abs(a - b) <= 1e-6 * max(1.0, abs(a))


def rank_by_id(tok: Token, k: int, *, processed: bool = False) -> None:
    """Sort a position's alternatives (most likely first), find the chosen token among them by id.

    For sources that give ids with every alternative (llama.cpp, TGI, SGLang). ``processed``
    sorts by the processed values (post-sampling probabilities), where the model's are unknown;
    the rank then stays unknown (0): it would be a rank in another distribution.
    """
    column = 5 if processed else 1
    ranked = sorted(tok.alternatives, key=lambda a: a[column], reverse=True)
    where = next((j for j, a in enumerate(ranked) if a[2] == tok.id and tok.id >= 0), -1)
    if where < 0:
        if ranked and len(ranked) >= k:
            tok.flag("outside_top_k")
    elif where < k:
        if not processed:
            tok.rank = where + 1
    else:
        tok.flag("outside_top_k")
        del ranked[where]
    tok.alternatives = ranked[:k]


@contextmanager
def no_gc_pauses():
    """Pause the cyclic garbage collector while a response is read.

    Reading creates a few objects per token while the parsed JSON (millions of objects) is
    alive; every collection of the oldest generation walks all of them, which made reading a
    large response several times slower. Nothing read here forms reference cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
