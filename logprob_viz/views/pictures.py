"""Pictures for slides and papers, without a browser: a trace's heatmap as SVG text and as LaTeX.

The colours are the view's: the palettes, rank buckets and text-on-colour rule of the Python
toolkit (`logprob_viz.views.toolkit`, the twin of ``js/toolkit/colors.js``) and the view's colour
modes (``js/logprob/modes.js``; ``tests/views/test_pictures_colors.py`` checks them against the JS
modules themselves, in node).

How token text is written: it is always data. In SVG every token is a ``<text>`` element whose
content is XML-escaped (``& < >``); characters XML cannot hold (control characters) and
characters that draw nothing or reorder the text (zero-width, bidi) are written as the views
show them (``\\x07``, ``[RLO]``). With ``show_whitespace=True`` (the default, as in the view) a
space is drawn as ``·``, a tab as ``→``, a return as ``␍``, a newline as ``↵`` followed by a line
break and an empty token as ``∅``: the views' one mapping, `logprob_viz.views.whitespace`; with
False, spaces and tabs are kept as spaces (``xml:space="preserve"``) and a newline still breaks
the line. In LaTeX the specials ``\\ { } $ & # ^ _ % ~`` are escaped (and ``< > |``, which the
default font encoding would misprint); see `latex_escape`.
"""

from __future__ import annotations

import math

import numpy as np

from ..records.trace import Trace
from .toolkit import PALETTES, RANK_BUCKETS, palette_color, readable_on
from .whitespace import EMPTY_MARK, WHITESPACE_MARKS, control_glyph

__all__ = ["PALETTES", "RANK_BUCKETS", "MODES", "token_colors", "readable_on", "shown_text", "latex_escape",
           "to_latex"]

# ---- the view's colours: the toolkit's palettes and rank buckets, and js/logprob/modes.js's modes ----

# mode -> (legend label, default range or None for rank buckets, which end is confident (bright))
MODES = {
    "probability": ("probability", (0.0, 1.0), "high"),
    "logprob": ("surprisal (−logprob, nats)", (0.0, 10.0), "low"),
    "entropy": ("entropy (nats)", (0.0, 5.0), "low"),
    "rank": ("rank (GLTR buckets)", None, None),
    "ratio": ("p / p(top-1)", (0.0, 1.0), "high"),
}
_ALIASES = {"surprisal": "logprob", "prob": "probability"}


def check_mode(color_mode: str, palette: str) -> str:
    mode = _ALIASES.get(color_mode, color_mode)
    if mode not in MODES:
        raise ValueError(f"color_mode must be one of {', '.join(MODES)} (or 'surprisal'), got {color_mode!r}")
    if palette not in PALETTES:
        raise ValueError(f"palette must be one of {', '.join(PALETTES)}, got {palette!r}")
    return mode


def mode_values(trace: Trace, mode: str) -> np.ndarray:
    """The number each token is coloured by under `mode` (NaN where unknown), as the view computes it."""
    lp = trace.logprobs.astype(np.float64)
    if mode == "probability":
        return np.exp(lp)
    if mode == "logprob":
        return -lp
    if mode == "entropy":
        return trace.entropy.astype(np.float64)
    if mode == "rank":
        return np.where(trace.ranks > 0, trace.ranks, np.nan).astype(np.float64)
    counts = np.array([len(row) for row in trace.top_tokens]) if len(trace) else np.zeros(0, int)
    top = np.where(counts > 0, trace.top_logprobs[:, 0], np.nan) if trace.k else np.full(len(trace), np.nan)
    with np.errstate(invalid="ignore"):
        ratio = np.minimum(1.0, np.exp(lp - np.fmax(top.astype(np.float64), lp)))
    ratio = np.where(np.isnan(top), np.nan, ratio)
    return np.where(np.isnan(lp), np.nan, np.where(trace.ranks == 1, 1.0, ratio))


def color_of(value: float, mode: str, palette: str, color_range=None) -> tuple[int, int, int] | None:
    """A token's background for its `value` under `mode`; None when the value is unknown."""
    if value is None or math.isnan(value):
        return None
    _, default, confident = MODES[mode]
    if default is None:
        return next(rgb for _, top, rgb in RANK_BUCKETS if value <= top)
    lo, hi = _valid_range(color_range) or default
    t = (value - lo) / (hi - lo)
    return palette_color(palette, 1 - t if confident == "low" else t)


def _valid_range(color_range):
    if color_range is None or len(color_range) != 2:
        return None
    lo, hi = (float(x) for x in color_range)
    return (lo, hi) if math.isfinite(lo) and math.isfinite(hi) and hi > lo else None


def token_colors(trace: Trace, color_mode: str = "probability", palette: str = "viridis", color_range=None):
    """Per token, ``(background rgb, text colour)`` as the view paints it, or None (unknown: no colour)."""
    mode = check_mode(color_mode, palette)
    out = []
    for value in mode_values(trace, mode).tolist():
        rgb = color_of(value, mode, palette, color_range)
        out.append(None if rgb is None else (rgb, readable_on(rgb)))
    return out


# ---- how token text is shown: the views' marks (logprob_viz.views.whitespace) -------------------

PLAIN_WHITESPACE = {" ": " ", "\u00a0": " ", "\t": "    ", "\n": "", "\r": ""}


def glyph(ch: str) -> str | None:
    """How a picture shows a control or invisible character: as the views (``\\x07``, ``[RLO]``,
    `whitespace.control_glyph`), and a character XML cannot hold as its code; None for others."""
    code = ord(ch)
    if 0xD800 <= code <= 0xDFFF or code in (0xFFFE, 0xFFFF):  # lone surrogates, non-characters: not text
        return f"\\u{code:04x}"
    return control_glyph(ch)


def shown_text(token: str, show_whitespace: bool = True) -> tuple[str, int]:
    """(what a picture prints for `token`, how many line breaks it ends with).

    With `show_whitespace`, the views' marks (an empty token too: ``∅``); without, blank space."""
    if not token:
        return (EMPTY_MARK if show_whitespace else ""), 0
    out, breaks = [], 0
    for ch in token:
        if ch in WHITESPACE_MARKS:
            out.append(WHITESPACE_MARKS[ch] if show_whitespace else PLAIN_WHITESPACE[ch])
            breaks += ch == "\n"
        else:
            out.append(glyph(ch) or ch)
    return "".join(out), breaks


# ---- LaTeX --------------------------------------------------------------------------------------

_LATEX_SPECIALS = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
    "^": r"\^{}", "_": r"\_", "%": r"\%", "~": r"\~{}",
    # not specials, but misprinted by the default OT1 encoding (as ¡ ¿ —)
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
    " ": r"\ ",  # a control space: kept after a command and at a box's start, never collapsed
}


def latex_escape(text: str) -> str:
    """`text` as LaTeX that prints it: specials escaped, each space a control space (``\\ ``)."""
    return "".join(_LATEX_SPECIALS.get(ch, ch) for ch in text)


def to_latex(trace: Trace, color_mode: str = "probability", palette: str = "viridis", color_range=None,
             show_whitespace: bool = False, monospace: bool = True) -> str:
    """The trace as LaTeX: a ``\\definecolor`` per colour used, then one ``\\colorbox`` per token.

    Needs ``\\usepackage{xcolor}`` (and, for characters beyond ASCII under pdflatex,
    ``\\usepackage[T1]{fontenc}``; scripts pdflatex has no font for need xelatex or lualatex).
    Each token is ``\\colorbox{lvN}{\\strut\\textcolor{black|white}{...}}`` with its text
    escaped by `latex_escape`; a token with no known value is its plain text. Whitespace: spaces
    are kept (control spaces, a tab as four), a newline ends the line (``\\newline``); with
    ``show_whitespace=True`` they print the view's marks instead (``· → ↵ ␍ ∅`` as ``$\\cdot$``,
    ``$\\rightarrow$``, ``$\\hookleftarrow$``, ``{\\scriptsize CR}``, ``$\\emptyset$``: the
    base fonts' nearest; the newline still ends the line). Control and
    invisible characters print as the view's glyphs (``\\x07``, ``[RLO]``). Lines may break
    between any two tokens (``\\allowbreak``).
    """
    colors = token_colors(trace, color_mode, palette, color_range)
    names: dict[tuple, str] = {}
    defs, body = [], []
    for token, painted in zip(trace.tokens, colors, strict=True):
        text, breaks = _latex_token(token, show_whitespace)
        if painted is None:
            body.append(r"\strut{}" + text)
        else:
            rgb, ink = painted
            if rgb not in names:
                names[rgb] = f"lv{len(names)}"
                defs.append(r"\definecolor{" + names[rgb] + "}{RGB}{" + ",".join(map(str, rgb)) + "}")
            ink_name = "black" if ink == "#000" else "white"
            body.append(r"\colorbox{" + names[rgb] + r"}{\strut\textcolor{" + ink_name + "}{" + text + "}}")
        body.append(r"\newline" * breaks if breaks else r"\allowbreak")
    label = MODES[check_mode(color_mode, palette)][0]
    head = [f"% logprob_viz: {len(trace)} tokens coloured by {label}, palette {palette}; needs \\usepackage{{xcolor}}"]
    font = r"\ttfamily" if monospace else ""
    if body and body[-1] == r"\allowbreak":
        body.pop()  # nothing to break before at the end
    opening = r"{\setlength{\fboxsep}{0.5pt}" + font + r"\noindent"
    # each line ends with a comment: no newline becomes a space between two boxes
    return "\n".join([*head, *defs, opening, "%\n".join(body) + "%", "}"]) + "\n"


# The views' marks (`WHITESPACE_MARKS`, `EMPTY_MARK`) in LaTeX's base fonts, so no package is
# needed: ↵ as its nearest there, ↩; ␍ spelled out.
_LATEX_MARKS = {
    "\u00b7": r"$\cdot$", "\u2192": r"$\rightarrow$", "\u21b5": r"$\hookleftarrow$", "\u240d": r"{\scriptsize CR}",
    EMPTY_MARK: r"$\emptyset$",
}


def _latex_token(token: str, show_whitespace: bool) -> tuple[str, int]:
    """(the token as LaTeX, its line breaks): `shown_text`'s characters, marks as `_LATEX_MARKS`."""
    text, breaks = shown_text(token, show_whitespace)
    marks = _LATEX_MARKS if show_whitespace else {}
    return "".join(marks.get(ch) or latex_escape(ch) for ch in text), breaks
