"""A trace's heatmap as SVG text, for slides and papers: no browser needed.

`to_svg(trace)` lays the tokens out in lines of a monospace font (so a width in characters is a
width in pixels, without measuring text), paints each token as the view does (`pictures`), adds
a legend, and optionally the pinned token's alternatives as a bar chart beside the text. Token
text is always the content of a ``<text>`` or ``<title>`` element, XML-escaped; see `pictures`
for how whitespace and invisible characters are shown.
"""

from __future__ import annotations

import math
import unicodedata
from xml.sax.saxutils import escape, quoteattr

from ..records.trace import Trace
from ..records.trace_fields import is_int
from . import toolkit
from .pictures import MODES, RANK_BUCKETS, check_mode, color_of, shown_text, token_colors
from .toolkit import hex_color, percent, readable_on

__all__ = ["to_svg"]

FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
BAR_W = 110  # the pinned token's chart: its bars' full length (the chart is as wide as its texts need)
MARGIN = 8


def _columns(text: str) -> int:
    """Monospace cells `text` takes: wide (East Asian) characters two, combining marks none."""
    cells = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        cells += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return cells


def _check_pinned(pinned, n: int) -> None:
    """`pinned` is None or a token index: a whole number (not a bool: True is no token's index) below `n`."""
    if pinned is None:
        return
    if not is_int(pinned):
        raise TypeError(f"pinned must be None or a token index (a whole number), got {pinned!r} "
                        f"({type(pinned).__name__})")
    if not 0 <= pinned < n:
        raise ValueError(f"pinned must be None or a token index between 0 and {n - 1}, got {pinned!r}")


def to_svg(trace: Trace, color_mode: str = "probability", palette: str = "viridis", width: int = 720,
           pinned: int | None = None, color_range=None, show_whitespace: bool = True, font_size: int = 14,
           legend: bool = True) -> str:
    """The heatmap of `trace` as one SVG document (a str), in the view's colours.

    Parameters
    ----------
    color_mode, palette, color_range
        As `LogprobView`'s traits: what colours a token, with which palette, over which range.
    width : int
        The picture's width in pixels; with ``pinned`` the chart takes what its names and percents
        need (whole), the text the rest.
    pinned : int or None
        A token index: that token is outlined and its alternatives drawn as bars beside the text.
    show_whitespace : bool
        Draw spaces, tabs and newlines as the view's glyphs (``·`` ``→`` ``↵``), or as blank space.
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"to_svg draws a logprob_viz.Trace, got {type(trace).__name__}")
    mode = check_mode(color_mode, palette)
    _check_pinned(pinned, len(trace))
    chart_w = math.ceil(_chart_width(trace, int(pinned), font_size)) if pinned is not None else 0
    text_w = width - 2 * MARGIN - (chart_w + 16 if pinned is not None else 0)
    if text_w < 120:
        raise ValueError(f"width={width} leaves {text_w} px for the text; give at least {width - text_w + 120}")
    char_w, line_h = 0.6 * font_size, round(1.5 * font_size)
    tokens_svg, text_h = _tokens(trace, token_colors(trace, mode, palette, color_range), pinned, show_whitespace,
                                 text_w, char_w, line_h, font_size)
    parts = [tokens_svg]
    height = MARGIN + text_h
    if legend:
        legend_svg, legend_h = _legend(mode, palette, color_range, MARGIN + text_h + 8, font_size)
        parts.append(legend_svg)
        height += 8 + legend_h
    if pinned is not None:
        chart_svg, chart_h = _chart(trace, int(pinned), palette, MARGIN + text_w + 16, font_size)
        parts.append(chart_svg)
        height = max(height, MARGIN + chart_h)
    height += MARGIN
    # (max-width: in a narrower place, a notebook's output on a projector, the picture scales down
    # whole rather than losing its right side, the chart's percents)
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" style="max-width: 100%; height: auto" '
            f'font-family={quoteattr(FONT)} font-size="{font_size}">')
    return "\n".join([head, f'<rect width="{width}" height="{height}" fill="#fff"/>', *parts, "</svg>"]) + "\n"


def _tokens(trace, colors, pinned, show_whitespace, text_w, char_w, line_h, font_size) -> tuple[str, int]:
    """The tokens' rects and texts, laid out in lines of `text_w` px; (svg, height used)."""
    out, x, y = ['<g class="lv-text">'], 0.0, 0
    for i, (token, painted) in enumerate(zip(trace.tokens, colors, strict=True)):
        shown, breaks = shown_text(token, show_whitespace)
        w = _columns(shown) * char_w + 4
        if x > 0 and x + w > text_w:
            x, y = 0.0, y + line_h
        left, top = MARGIN + x, MARGIN + y
        if painted is None:
            fill, ink, stroke = "none", "#555", ' stroke="#bbb" stroke-dasharray="2 2"'
        else:
            fill, ink, stroke = hex_color(painted[0]), painted[1], ""
        if i == pinned:
            stroke = ' stroke="#000" stroke-width="2"'
        p = math.exp(trace.logprobs[i])
        title = f"token {i + 1}: {toolkit.shown(token)} p {percent(p)} rank {trace.ranks[i] or '?'}"
        out.append(
            f'<g class="lv-token" data-index="{i}"><title>{escape(title)}</title>'
            f'<rect x="{left:.1f}" y="{top}" width="{w:.1f}" height="{line_h - 2}" rx="2" fill="{fill}"{stroke}/>'
            f'<text x="{left + 2:.1f}" y="{top + round(line_h * 0.7)}" fill="{ink}" xml:space="preserve">'
            f"{escape(shown)}</text></g>"
        )
        x += w + 1
        if breaks:
            x, y = 0.0, y + breaks * line_h
    out.append("</g>")
    return "\n".join(out), y + line_h


def _legend(mode, palette, color_range, top, font_size) -> tuple[str, int]:
    """A gradient with five ticks (or the rank buckets' swatches) under the text."""
    small = max(9, font_size - 3)
    label, default, _ = MODES[mode]
    out = [f'<g class="lv-legend" font-size="{small}">',
           f'<text x="{MARGIN}" y="{top + small}" fill="#444">colour: {escape(label)}</text>']
    bar_y = top + small + 6
    if default is None:
        x = MARGIN
        for name, _, rgb in RANK_BUCKETS:
            out.append(f'<rect x="{x}" y="{bar_y}" width="70" height="{small + 6}" fill="{hex_color(rgb)}"/>'
                       f'<text x="{x + 4}" y="{bar_y + small + 1}" fill="{readable_on(rgb)}">{escape(name)}</text>')
            x += 74
        out.append("</g>")
        return "\n".join(out), bar_y + small + 6 - top
    lo, hi = color_range if color_range is not None else default
    colors = [hex_color(color_of(lo + (hi - lo) * s / 10, mode, palette, (lo, hi))) for s in range(11)]
    stops = "".join(f'<stop offset="{s / 10:.1f}" stop-color="{c}"/>' for s, c in enumerate(colors))
    out.append(f'<defs><linearGradient id="lv-gradient">{stops}</linearGradient></defs>')
    out.append(f'<rect x="{MARGIN}" y="{bar_y}" width="240" height="10" fill="url(#lv-gradient)"/>')
    for f in (0, 0.25, 0.5, 0.75, 1):
        v = lo + (hi - lo) * f
        tick = f"{round(v * 100)}%" if mode == "probability" else f"{v:g}"
        out.append(f'<text x="{MARGIN + 240 * f:.0f}" y="{bar_y + 10 + small + 2}" fill="#444" '
                   f'text-anchor="{"start" if f == 0 else "end" if f == 1 else "middle"}">{escape(tick)}</text>')
    out.append("</g>")
    return "\n".join(out), 10 + 2 * small + 8


def _chart_entries(trace, i) -> list[tuple[str, float | None, bool, int | None]]:
    """Token i's chart rows: (label, logprob or None, chosen, rank shown or None); the chosen token outside
    the top K after a gap with its rank, and "other" (what the listed tokens leave)."""
    rows = list(zip(trace.top_tokens[i], trace.top_logprobs[i].tolist(), trace.top_ids[i].tolist(), strict=False))
    lp, chosen_id = float(trace.logprobs[i]), int(trace.token_ids[i])
    found, entries = False, []
    for text, alt_lp, alt_id in rows:
        chosen = not found and (alt_id == chosen_id if alt_id >= 0 and chosen_id >= 0 else text == trace.tokens[i])
        found = found or chosen
        entries.append((shown_text(text)[0], alt_lp, chosen, None))
    if not found and not math.isnan(lp):
        entries.append(("\u22ef", None, False, None))
        entries.append((shown_text(trace.tokens[i])[0], lp, True, int(trace.ranks[i])))
    if rows:
        other = 1 - sum(math.exp(a) for _, a, _, _ in entries[: len(rows)])
        entries.append(("other", math.log(other) if other > 0 else -math.inf, False, None))
    return entries


def _chart_lines(trace, i, entries) -> tuple[list[str], list[str], list[str]]:
    """The chart's texts: its two head lines, each row's label, each row's note (percent, rank)."""
    lp = float(trace.logprobs[i])
    head = [f"token {i + 1} of {len(trace)}: {shown_text(trace.tokens[i])[0]}",
            f"p {percent(math.exp(lp))} · rank {trace.ranks[i] or '?'}"]
    notes = ["" if alt_lp is None else percent(math.exp(alt_lp)) + (f" · rank {rank}" if rank else "")
             for _, alt_lp, _, rank in entries]
    return head, [label for label, _, _, _ in entries], notes


def _chart_width(trace, i, font_size) -> float:
    """The chart's width in px: as wide as its longest head line, and its widest label, bar and note
    side by side (a name is never cut; the text beside it gets what is left)."""
    small = max(9, font_size - 2)
    head, labels, notes = _chart_lines(trace, i, _chart_entries(trace, i))
    cells = lambda texts: max((_columns(t) for t in texts), default=0)  # noqa: E731
    rows = (cells(labels) + 1) * 0.6 * small + BAR_W + 4 + cells(notes) * 0.6 * small
    return max(cells(head) * 0.6 * small, rows)


def _chart(trace, i, palette, left, font_size) -> tuple[str, int]:
    """Token i's alternatives as bars: the chosen one marked, outside the top K with its rank, "other"."""
    small = max(9, font_size - 2)
    row_h = small + 8
    entries = _chart_entries(trace, i)
    head, labels, notes = _chart_lines(trace, i, entries)
    bar_x = left + (max(_columns(t) for t in labels) + 1) * 0.6 * small  # after the widest name, whole
    out = [f'<g class="lv-chart" font-size="{small}">',
           f'<text x="{left}" y="{MARGIN + small}" fill="#222" xml:space="preserve">{escape(head[0])}</text>',
           f'<text x="{left}" y="{MARGIN + 2 * small + 6}" fill="#444">{escape(head[1])}</text>']  # escaped: "<0.1%"
    y = MARGIN + 2 * small + 14
    for (_, alt_lp, chosen, _), label, note in zip(entries, labels, notes, strict=True):
        weight = ' font-weight="bold"' if chosen else ""
        out.append(f'<text x="{left}" y="{y + small}" fill="#222"{weight} xml:space="preserve">{escape(label)}</text>')
        if alt_lp is not None:
            p = math.exp(alt_lp)
            rgb = color_of(p, "probability", palette)  # bars in the palette, by their probability
            outline = ' stroke="#000"' if chosen else ""
            out.append(f'<rect x="{bar_x:.1f}" y="{y + 2}" width="{max(0.5, BAR_W * p):.1f}" height="{row_h - 6}" '
                       f'fill="{hex_color(rgb)}"{outline}/>')
            out.append(f'<text x="{bar_x + BAR_W + 4:.1f}" y="{y + small}" fill="#222"{weight}>{escape(note)}</text>')
        y += row_h
    out.append("</g>")
    return "\n".join(out), y - MARGIN
