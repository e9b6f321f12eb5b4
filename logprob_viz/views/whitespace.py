"""The one visible-whitespace mapping, for labels that are plain text (buttons, lists, titles) and
for pictures (SVG, LaTeX).

The same marks as every view in the browser (``js/toolkit/whitespace.js``; a test checks that the
two tables are equal): a space reads ``·``, a tab ``→``, a newline ``↵``, a carriage return ``␍``,
an empty token ``∅``. Characters that draw nothing or reorder the text (zero-width, bidi) and
other control characters are shown by name or code as ``js/toolkit/tokens.js`` shows them
(`INVISIBLE`, `control_glyph`; checked against it by the same test).
"""

from __future__ import annotations

__all__ = ["WHITESPACE_MARKS", "EMPTY_MARK", "INVISIBLE", "visible", "control_glyph", "shown"]

WHITESPACE_MARKS = {
    " ": "\u00b7",  # ·
    "\u00a0": "\u00b7",  # a no-break space reads as a space
    "\t": "\u2192",  # →
    "\n": "\u21b5",  # ↵
    "\r": "\u240d",  # ␍
}
EMPTY_MARK = "\u2205"  # ∅

# Characters that draw nothing or reorder the text: zero-width, bidi controls, BOM, soft hyphen.
INVISIBLE = {
    0x00AD: "SHY", 0x034F: "CGJ", 0x061C: "ALM", 0x180E: "MVS",
    0x200B: "ZWSP", 0x200C: "ZWNJ", 0x200D: "ZWJ", 0x200E: "LRM", 0x200F: "RLM",
    0x2028: "LSEP", 0x2029: "PSEP",
    0x202A: "LRE", 0x202B: "RLE", 0x202C: "PDF", 0x202D: "LRO", 0x202E: "RLO",
    0x2060: "WJ", 0x2061: "FA", 0x2062: "IT", 0x2063: "IS", 0x2064: "IP",
    0x2066: "LRI", 0x2067: "RLI", 0x2068: "FSI", 0x2069: "PDI", 0xFEFF: "BOM",
}

_TABLE = str.maketrans(WHITESPACE_MARKS)


def visible(text: str) -> str:
    """`text` with each whitespace character replaced by its mark; an empty text as EMPTY_MARK."""
    return text.translate(_TABLE) if text else EMPTY_MARK


def control_glyph(ch: str) -> str | None:
    """How the views show a control or invisible character: ``\\x07``, ``\\x85``, or its short name
    ``[RLO]``; None for any other character. (Tab, newline and return have marks: see `shown`.)"""
    code = ord(ch)
    if code in INVISIBLE:
        return f"[{INVISIBLE[code]}]"
    if code < 0x20 or 0x7F <= code <= 0x9F:
        return f"\\x{code:02x}"
    return None


def shown(text: str) -> str:
    """`text` as the views draw it: whitespace marked, control and invisible characters by their glyph,
    an empty text as EMPTY_MARK."""
    if not text:
        return EMPTY_MARK
    return "".join(WHITESPACE_MARKS.get(ch) or control_glyph(ch) or ch for ch in text)
