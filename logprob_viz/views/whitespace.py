"""The one visible-whitespace mapping, for labels that are plain text (buttons, lists, titles).

The same marks as every view in the browser (``js/toolkit/whitespace.js``; a test checks that the
two tables are equal): a space reads ``·``, a tab ``→``, a newline ``↵``, a carriage return ``␍``,
an empty token ``∅``.
"""

from __future__ import annotations

__all__ = ["WHITESPACE_MARKS", "EMPTY_MARK", "visible"]

WHITESPACE_MARKS = {
    " ": "\u00b7",  # ·
    "\u00a0": "\u00b7",  # a no-break space reads as a space
    "\t": "\u2192",  # →
    "\n": "\u21b5",  # ↵
    "\r": "\u240d",  # ␍
}
EMPTY_MARK = "\u2205"  # ∅

_TABLE = str.maketrans(WHITESPACE_MARKS)


def visible(text: str) -> str:
    """`text` with each whitespace character replaced by its mark; an empty text as EMPTY_MARK."""
    return text.translate(_TABLE) if text else EMPTY_MARK
