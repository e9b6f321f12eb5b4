"""The guessing game's final chart: class bits and model bits per position.

A plotly figure when plotly is installed (grouped bars, the token under each pair), otherwise
`BitsTable`, a small SVG table that a notebook shows as an image (``_repr_svg_``). Token text
is data in both: plotly draws it as text; the SVG escapes it (`export_svg` conventions).
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from .pictures import shown_text

__all__ = ["chart", "BitsTable"]


def _finite(value) -> float:
    return value if value is not None and math.isfinite(value) else 0.0


def _label(row: dict) -> str:
    return shown_text(row["token"])[0]  # the views' marks; an empty token as ∅


def _title(summary: dict) -> str:
    def bits(x):
        return "?" if x is None or not math.isfinite(x) else f"{x:.2f}"

    return (f"class: {bits(summary['class_bits_upper'])} bits/token (Shannon's upper bound, {summary['found']} found, "
            f"{summary['revealed']} revealed) · model: {bits(summary['model_bits'])} bits/token")


def chart(rows: list[dict], summary: dict):
    try:
        import plotly.graph_objects as go
    except ImportError:
        return BitsTable(rows, summary)
    x = [f"{r['position']}: {_label(r)}" for r in rows]
    fig = go.Figure()
    fig.add_bar(x=x, y=[r["class_bits"] for r in rows], name="class: -log2 q(guesses)",
                customdata=[[r["n_guesses"], "revealed" if r["revealed"] else "found"] for r in rows],
                hovertemplate="%{x}<br>%{customdata[0]} guesses (%{customdata[1]})<br>%{y:.2f} bits<extra></extra>")
    fig.add_bar(x=x, y=[r["model_bits"] for r in rows], name="model: -log2 p(token)",
                customdata=[[r["model_rank"], r["model_prob"]] for r in rows],
                hovertemplate="%{x}<br>rank %{customdata[0]}, p %{customdata[1]:.1%}<br>%{y:.2f} bits<extra></extra>")
    fig.update_layout(barmode="group", title=_title(summary), yaxis_title="bits", xaxis_title="position: token",
                      height=360, margin=dict(t=60, b=40, l=50, r=20))
    return fig


class BitsTable:
    """The chart without plotly: one SVG row per position (token, guesses, class bits, model bits)."""

    ROW = 20

    def __init__(self, rows: list[dict], summary: dict):
        self.rows, self.summary = rows, summary

    def to_svg(self) -> str:
        width, row_h = 640, self.ROW
        height = 44 + row_h * (len(self.rows) + 1)
        top = max([_finite(r["class_bits"]) for r in self.rows] + [_finite(r["model_bits"]) for r in self.rows] + [1.0])
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-size="12" '
               'font-family="DejaVu Sans Mono, monospace">',
               f'<rect width="{width}" height="{height}" fill="#fff"/>',
               f'<text x="6" y="16" fill="#222">{escape(_title(self.summary))}</text>']
        y = 40
        for label, x in (("token", 6), ("guesses", 170), ("class bits", 250), ("model bits", 440)):
            out.append(f'<text x="{x}" y="{y}" fill="#555">{label}</text>')
        for r in self.rows:
            y += row_h
            out.append(f'<text x="6" y="{y}" fill="#222" xml:space="preserve">{escape(_label(r)[:20])}</text>')
            guesses = f"{r['n_guesses']}{' (revealed)' if r['revealed'] else ''}"
            out.append(f'<text x="170" y="{y}" fill="#222">{escape(guesses)}</text>')
            for x, value, color in ((250, r["class_bits"], "#0072b2"), (440, r["model_bits"], "#e69f00")):
                if value is None or not math.isfinite(value):
                    out.append(f'<text x="{x}" y="{y}" fill="#888">?</text>')
                    continue
                out.append(f'<rect x="{x}" y="{y - 11}" width="{max(1.0, 130 * value / top):.1f}" height="12" '
                           f'fill="{color}"/><text x="{x + 136}" y="{y}" fill="#222">{value:.2f}</text>')
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def _repr_svg_(self) -> str:
        return self.to_svg()
