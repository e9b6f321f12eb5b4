"""The Python view toolkit: what every output without the browser shows the same way as the widgets.

The widgets draw with ``js/toolkit/`` (``colors.js``, ``format.js``, ``tokens.js``); the static HTML
pages, the SVG and LaTeX pictures, the plotly figures and the explorer's plain-text labels draw
with this module, its twin, so that a token reads the same and a probability is the same string
in every picture of it (``tests/views/test_toolkit.py`` checks both sides against a hand-made
expectation, the JS side in node):

- `PALETTES`, `palette_color`: the perceptually uniform palettes, sampled linearly (colors.js);
- `readable_on`: black or white text on a colour (WCAG contrast);
- `percent`, `percent_of_logprob`: "41.3%", "<0.1%" below 0.05 %, "0%" for zero, "?" unknown
  (format.js ``formatPercent``: never "0.0%" for a probability that is not zero);
- `shown`: a token's text as the views draw it: whitespace marked, control, zero-width and bidi
  characters by their glyph (``[RLO]``, ``\\x07``), an empty token ``∅`` (`whitespace`).
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal

from .whitespace import shown

__all__ = ["PALETTES", "RANK_BUCKETS", "palette_color", "readable_on", "hex_color", "percent",
           "percent_of_logprob", "shown", "rank_bucket"]

# dark to bright; a copy of js/toolkit/colors.js PALETTES (tests/views/test_pictures_colors.py compares them)
PALETTES = {
    "viridis": [
        (68, 1, 84), (72, 40, 120), (62, 74, 137), (49, 104, 142), (38, 130, 142),
        (31, 158, 137), (53, 183, 121), (109, 205, 89), (180, 222, 44), (253, 231, 37),
    ],
    "cividis": [(0, 34, 78), (64, 77, 107), (124, 123, 120), (188, 175, 111), (254, 232, 56)],
    "magma": [(0, 0, 4), (81, 18, 124), (183, 55, 121), (252, 137, 97), (252, 253, 191)],
}

# GLTR's rank buckets (Gehrmann et al. 2019): (label, largest rank, colour), Okabe–Ito colours, as
# js/logprob/modes.js colours the rank mode
RANK_BUCKETS = [
    ("top 1", 1, (86, 180, 233)),
    ("top 10", 10, (0, 158, 115)),
    ("top 100", 100, (240, 228, 66)),
    ("top 1000", 1000, (230, 159, 0)),
    ("> 1000", math.inf, (204, 121, 167)),
]


def rank_bucket(rank: float) -> tuple[str, tuple[int, int, int]]:
    """(label, colour) of the GLTR bucket a 1-based `rank` falls in."""
    return next((label, rgb) for label, top, rgb in RANK_BUCKETS if rank <= top)


def _js_round(x: float) -> int:
    return math.floor(x + 0.5)  # JS Math.round: halves up (Python's round() halves to even)


def palette_color(palette: str, t: float) -> tuple[int, int, int]:
    """The palette's colour at t in [0, 1] (clamped; NaN as 0), interpolated linearly between its samples."""
    stops = PALETTES.get(palette, PALETTES["viridis"])
    x = min(1.0, max(0.0, t if math.isfinite(t) else 0.0)) * (len(stops) - 1)
    lo = math.floor(x)
    hi = min(lo + 1, len(stops) - 1)
    f = x - lo
    return tuple(_js_round(c + (stops[hi][ch] - c) * f) for ch, c in enumerate(stops[lo]))


def readable_on(rgb) -> str:
    """Black or white, whichever contrasts more with the background (WCAG relative luminance)."""
    def lin(c):
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = rgb
    lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    return "#000" if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) else "#fff"


def hex_color(rgb) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def percent(p) -> str:
    """A probability as every view writes it: one decimal ("41.3%"), "<0.1%" for what would read
    0.0 % but is not zero, "0%" for zero, "?" when unknown (None, NaN).

    The digits are JS ``toFixed(1)``'s: the exact binary value of ``p * 100`` rounded half up
    (Python's format would round an exact half such as 0.25 to even, "0.2%" where the view says "0.3%").
    """
    if p is None or math.isnan(p):
        return "?"
    pct = float(p) * 100
    if pct == 0:
        return "0%"
    if pct < 0.05:
        return "<0.1%"
    return f"{Decimal(pct).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)}%"


def percent_of_logprob(lp) -> str:
    """The probability of a logprob as `percent` writes it ("?" when unknown)."""
    return "?" if lp is None or math.isnan(lp) else percent(math.exp(lp))
