"""The guessing game's final chart: per token, the class's guesses beside the model's.

The model's guesses at a token are its rank of the token (a model guessing in order of
probability needs that many), so the two bars count the same thing. A revealed token took more
than the guesses made there: its bar is hatched, at one more than those, labelled "> k" (never
an empty bar, which would read as no guesses at all). Shannon's bounds over the game are in the
title, with the number of tokens.

A plotly figure when plotly is installed (grouped bars on a log axis: ranks run into the
hundreds), otherwise `GuessTable`, a small SVG table that a notebook shows as an image
(``_repr_svg_``). Token text is data in both: plotly draws it as text; the SVG escapes it
(`export_svg` conventions).
"""

from __future__ import annotations

import math
import textwrap
from xml.sax.saxutils import escape

from ..pictures import shown_text
from .scoring import FEW_TOKENS

__all__ = ["chart", "GuessTable", "summary_line", "class_cell"]


def _label(row: dict) -> str:
    return shown_text(row["text"])[0]  # the views' marks; an empty token as ∅


def class_cell(row: dict) -> str:
    """The class's guesses at a token as a person reads them: "3", or "> 2" for revealed after 2 wrong."""
    return f"> {row['class_guesses']}" if row["revealed"] else str(row["class_guesses"])


def _model_cell(row: dict) -> str:
    return str(row["model_guesses"]) if row["model_guesses"] > 0 else "?"


def _known(x) -> bool:
    return x is not None and math.isfinite(x)


def _verdict(s: dict) -> str:
    """Who guessed better, by the score (fewer guesses, fewer bits)."""
    if not (_known(s.get("class_score")) and _known(s.get("model_score"))):
        return ""
    if s["class_score"] == s["model_score"]:
        return ": as well as each other"
    return ": the class guessed better" if s["class_score"] < s["model_score"] else ": the model guessed better"


def summary_line(s: dict) -> str:
    """The game's score for the class and the model (mean log2 guesses per token: fewer guesses,
    less) and who did better; then Shannon's bounds on the text's entropy, named as such, only
    where there are enough tokens for a bound (the words of the widget's summaryText)."""
    def bits(x):
        return f"{x:.2f} bits" if _known(x) else "? bits"

    def bounds(lower, upper):
        if not _known(upper):
            return "? bits/token"
        return f"{lower:.2f} to {upper:.2f} bits/token" if _known(lower) else f"at most {upper:.2f} bits/token"

    scored = s.get("model_scored", s["found"])
    ranks = "" if scored == s["found"] else f", {scored} of them with a rank"
    line = (f"Score over the {s['found']} tokens found ({s['revealed']} revealed, not scored), the mean of "
            f"log2(guesses) per token, 0 when every token takes 1 guess: class {bits(s.get('class_score'))}, "
            f"model {bits(s.get('model_score'))} (its ranks as guesses{ranks}){_verdict(s)}. "
            f"Shannon's bounds on the text's entropy over the {s['n']} tokens: ")
    if s["few"]:
        return line + f"too few tokens for a bound ({s['found']} found; play {FEW_TOKENS} or more)."
    line += f"class {bounds(s['class_lower'], s['class_upper'])}, model {bounds(s['model_lower'], s['model_upper'])}"
    if not (_known(s["class_lower"]) and _known(s["model_lower"])):
        line += "; a lower bound only where 1 guess was the most common, then 2, and so on"
    return line + "."


def chart(rows: list[dict], summary: dict):
    try:
        import plotly.graph_objects as go
    except ImportError:
        return GuessTable(rows, summary)
    x = [f"{r['token']}: {_label(r)}" for r in rows]
    fig = go.Figure()
    # a revealed token took more than its guesses: drawn at one more, hatched and labelled "> k"
    fig.add_bar(x=x, y=[r["class_guesses"] + (1 if r["revealed"] else 0) for r in rows], name="class: guesses",
                text=[class_cell(r) for r in rows], textposition="outside",
                marker_pattern_shape=["/" if r["revealed"] else "" for r in rows],
                customdata=[["revealed after" if r["revealed"] else "found in", r["class_guesses"]] for r in rows],
                hovertemplate="%{x}<br>%{customdata[0]} %{customdata[1]} guesses<extra></extra>")
    fig.add_bar(x=x, y=[r["model_guesses"] if r["model_guesses"] > 0 else None for r in rows],
                name="model: its rank of the token", text=[_model_cell(r) for r in rows], textposition="outside",
                customdata=[r["model_prob"] for r in rows],
                hovertemplate="%{x}<br>rank %{y}, p %{customdata:.1%}<extra></extra>")
    # the title in lines that fit a notebook's width (one line ran off the right edge at 1400x900);
    # its words hold numbers only, no token text, so the <br> are the only markup in it
    title = "<br>".join(textwrap.wrap(summary_line(summary), 95))
    fig.update_layout(barmode="group", title=dict(text=title, font_size=12),
                      yaxis=dict(title="guesses", type="log", rangemode="tozero"), xaxis_title="token",
                      height=420, margin=dict(t=110, b=40, l=50, r=20))
    return fig


class GuessTable:
    """The chart without plotly: one SVG row per token (number and text, class guesses, model guesses)."""

    ROW = 20

    def __init__(self, rows: list[dict], summary: dict):
        self.rows, self.summary = rows, summary

    def to_svg(self) -> str:
        width, row_h = 760, self.ROW
        title = textwrap.wrap(summary_line(self.summary), 100)  # (12 px monospace: 100 characters fit)
        y = 24 + 16 * len(title)
        height = y + row_h * (len(self.rows) + 1)
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-size="12" '
               'font-family="DejaVu Sans Mono, monospace">',
               f'<rect width="{width}" height="{height}" fill="#fff"/>']
        out += [f'<text x="6" y="{16 * (j + 1)}" fill="#222">{escape(line)}</text>' for j, line in enumerate(title)]
        for label, x in (("token", 6), ("text", 60), ("class guesses", 300), ("model guesses (rank)", 460)):
            out.append(f'<text x="{x}" y="{y}" fill="#555">{label}</text>')
        for r in self.rows:
            y += row_h
            out.append(f'<text x="6" y="{y}" fill="#222">{r["token"]}</text>')
            out.append(f'<text x="60" y="{y}" fill="#222" xml:space="preserve">{escape(_label(r))}</text>')
            out.append(f'<text x="300" y="{y}" fill="#222">{escape(class_cell(r))}</text>')
            out.append(f'<text x="460" y="{y}" fill="#222">{escape(_model_cell(r))}</text>')
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def _repr_svg_(self) -> str:
        return self.to_svg()
