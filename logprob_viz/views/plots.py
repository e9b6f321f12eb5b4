"""plotly figures of a trace and of a comparison (`trace.plot(kind)`, `cmp.plot()`).

plotly is an optional extra (``pip install logprob-viz[plot]``) and is imported only inside the
functions here, so ``import logprob_viz`` never loads it. Figures carry plotly's own bundled
plotly.js when exported (`figure_html`), so they work offline. In the per-token figures point
``i`` of the first trace is token ``i``: that is what `logprob_viz.link` relies on to pin tokens.
"""

from __future__ import annotations

import html
import math

import numpy as np

from ..records.trace import Trace
from . import toolkit
from .toolkit import hex_color, percent, percent_of_logprob

__all__ = ["KINDS", "figure_html", "plot", "plot_comparison", "rank_buckets"]

KINDS = ("surprisal", "entropy", "rank", "cumulative")
# GLTR's buckets, coloured like the view's rank mode (the toolkit's table)
RANK_BUCKETS = tuple((label, top, hex_color(rgb)) for label, top, rgb in toolkit.RANK_BUCKETS)
UNKNOWN = "unknown"
ALTERNATIVES_ON_HOVER = 5  # more makes the hover box taller than most figures
PIN_NAME = "pinned"  # the highlight trace that `link` moves to the pinned token

_MISSING = (
    "plots need plotly, an optional extra: pip install 'logprob-viz[plot]' (or pip install plotly), "
    "then restart the kernel"
)


def plotly_go():
    try:
        import plotly.graph_objects as go
    except ImportError as error:
        raise ImportError(_MISSING) from error
    return go


def shown(text: str) -> str:
    """A token's text for a hover box, as the views show it (`toolkit.shown`: ``·`` for a space,
    ``[RLO]`` for a bidi override), HTML-escaped.

    plotly reads a few tags in hover text (<b>, <br>, <a href>...); token text is data, so every
    ``<``, ``>`` and ``&`` is escaped and plotly shows it literally.
    """
    return html.escape(toolkit.shown(text), quote=False)


def rank_buckets(ranks) -> list[str]:
    """Each rank's GLTR bucket label ("top 1" ... "> 1000"), ``"unknown"`` where the rank is 0."""
    out = []
    for r in np.asarray(ranks).tolist():
        out.append(UNKNOWN if r <= 0 else next(label for label, top, _ in RANK_BUCKETS if r <= top))
    return out


def _fmt(x: float, digits: int = 3) -> str:
    return "?" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def hover_texts(trace, extra=None) -> list[str]:
    """Per token: its index, text, logprob, probability, rank and top alternatives (escaped)."""
    lps, ranks = trace.logprobs.tolist(), trace.ranks.tolist()
    out = []
    for i, token in enumerate(trace.tokens):
        lp = lps[i]
        lines = [f"<b>#{i}</b> {shown(token)}" + (" (prompt)" if i < trace.prompt_len else "")]
        lines.append(f"logprob {_fmt(lp)} · p {percent_of_logprob(lp)} · rank {ranks[i] or '?'}")
        if extra is not None:
            lines.append(extra[i])
        alts = trace.top_tokens[i][:ALTERNATIVES_ON_HOVER]
        for text, alp in zip(alts, trace.top_logprobs[i].tolist(), strict=False):
            lines.append(f"   {shown(text)}  {percent(math.exp(alp))}")
        out.append("<br>".join(lines))
    return out


def plot(trace, kind: str = "surprisal", *, widget: bool = False, title: str | None = None):
    """A plotly figure of one trace.

    Parameters
    ----------
    trace : Trace
    kind : str
        ``"surprisal"``: −logprob (nats) per position; ``"entropy"``: the distribution's entropy
        (nats) per position; ``"rank"``: how many tokens fall in each GLTR rank bucket (top 1 / 10
        / 100 / 1000 / more; a histogram of one entry per token, ``"unknown"`` where the source
        gave no rank); ``"cumulative"``: the running sum of −logprob (unknown logprobs add 0).
    widget : bool
        Return a ``plotly.graph_objects.FigureWidget`` (needed for clicks, see `logprob_viz.link`).
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure or FigureWidget
        For the per-position kinds, point ``i`` of ``fig.data[0]`` is token ``i`` (its index in
        ``customdata``), and ``fig.data[1]`` (named "pinned") marks the pinned token when linked.
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"plot draws a logprob_viz.Trace, got {type(trace).__name__}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    go = plotly_go()
    name = str(trace.meta.get("model") or trace.meta.get("source") or "trace")
    fig = go.Figure()
    if kind == "rank":
        _rank_histogram(fig, trace, name)
    else:
        _per_position(fig, trace, kind, name)
    fig.update_layout(
        title=title or f"{kind}: {name}", hovermode="closest", showlegend=False,
        margin={"l": 60, "r": 20, "t": 50, "b": 50}, height=320, clickmode="event",
    )
    return go.FigureWidget(fig) if widget else fig


def _rank_histogram(fig, trace, name: str) -> None:
    """How many tokens fall in each GLTR bucket (one entry per token, "unknown" without a rank)."""
    order = [label for label, _, _ in RANK_BUCKETS] + [UNKNOWN]
    fig.add_histogram(
        x=rank_buckets(trace.ranks), name=name, customdata=np.arange(len(trace)), marker_color="#56b4e9",
        hovertemplate="%{x}: %{y} tokens<extra></extra>",
    )
    fig.update_xaxes(categoryorder="array", categoryarray=order, title="rank of the chosen token (GLTR buckets)")
    fig.update_yaxes(title="tokens")


def _per_position(fig, trace, kind: str, name: str) -> None:
    """One point per token (point i is token i, which `link` relies on) and the pinned token's marker."""
    x = np.arange(len(trace))
    lp = trace.logprobs.astype(np.float64)
    if kind == "surprisal":
        y, label, extra = -lp, "surprisal (−logprob, nats)", None
    elif kind == "entropy":
        y, label = trace.entropy.astype(np.float64), "entropy (nats)"
        extra = [f"entropy {_fmt(v)} nats" for v in y.tolist()]
    else:
        y, label = np.cumsum(np.nan_to_num(-lp, nan=0.0)), "cumulative −logprob (nats)"
        extra = [f"running −logprob {_fmt(v)} nats" for v in y.tolist()]
    fig.add_scatter(
        x=x, y=y, mode="lines+markers", name=name, customdata=x,
        hovertext=hover_texts(trace, extra), hovertemplate="%{hovertext}<extra></extra>",
        marker={"size": 5, "color": "#0072b2"}, line={"width": 1, "color": "#0072b2"},
    )
    fig.add_scatter(
        x=[], y=[], mode="markers", name=PIN_NAME, hoverinfo="skip", showlegend=False,
        marker={"size": 14, "symbol": "circle-open", "color": "#d55e00", "line": {"width": 3}},
    )
    fig.update_xaxes(title="token position")
    fig.update_yaxes(title=label)


def plot_comparison(cmp, kind: str = "difference", *, a=0, b=1, widget: bool = False, title: str | None = None):
    """A plotly figure of a `Comparison`.

    ``"difference"``: per aligned span, logprob of trace `a` minus that of `b` (nats; above 0:
    `a` found the span likelier), one bar per span along the text, hover shows the span text;
    point ``i`` is span ``i``. ``"bits_per_byte"``: one bar per label.
    """
    go = plotly_go()
    if kind == "difference":
        ia, ib = cmp.index_of(a), cmp.index_of(b)
        diff = cmp.difference(ia, ib)
        texts = cmp.span_texts
        hover = [
            f"<b>span {s}</b> bytes {cmp.span_starts[s]}–{cmp.span_ends[s]} {shown(texts[s])}<br>"
            f"{html.escape(cmp.labels[ia])}: {_fmt(cmp.span_logprobs[ia, s])} · "
            f"{html.escape(cmp.labels[ib])}: {_fmt(cmp.span_logprobs[ib, s])}<br>difference {_fmt(d)}"
            for s, d in enumerate(diff.tolist())
        ]
        colors = np.where(np.nan_to_num(diff) >= 0, "#e66101", "#5e3c99")  # PuOr ends: colour-blind safe
        fig = go.Figure()
        fig.add_bar(
            x=np.arange(len(diff)), y=diff, customdata=np.arange(len(diff)), marker_color=colors,
            hovertext=hover, hovertemplate="%{hovertext}<extra></extra>", name="difference",
        )
        fig.add_scatter(
            x=[], y=[], mode="markers", name=PIN_NAME, hoverinfo="skip", showlegend=False,
            marker={"size": 14, "symbol": "circle-open", "color": "#000000", "line": {"width": 3}},
        )
        fig.update_xaxes(title="aligned span (along the text)")
        fig.update_yaxes(title=f"logprob {cmp.labels[ia]} − {cmp.labels[ib]} (nats)")
        default_title = f"per-span difference: {cmp.labels[ia]} − {cmp.labels[ib]}"
    elif kind == "bits_per_byte":
        bpb = cmp.bits_per_byte(over="aligned")  # (the axis says over which bytes)
        fig = go.Figure()
        fig.add_bar(
            x=list(bpb), y=list(bpb.values()), marker_color="#0072b2", name="bits per byte",
            hovertemplate="%{x}: %{y:.4f} bits/byte<extra></extra>",
        )
        fig.update_yaxes(title=f"bits per byte (over {cmp.known_bytes()} shared bytes)")
        default_title = "bits per byte"
    else:
        raise ValueError(f"kind must be 'difference' or 'bits_per_byte', got {kind!r}")
    fig.update_layout(
        title=title or default_title, showlegend=False, height=320, hovermode="closest",
        margin={"l": 60, "r": 20, "t": 50, "b": 50}, clickmode="event",
    )
    return go.FigureWidget(fig) if widget else fig


def figure_html(fig, *, include_plotlyjs: bool | str = True, div_id: str | None = None) -> str:
    """A figure as an HTML fragment that works offline: plotly.js from plotly's Python package, no CDN.

    ``include_plotlyjs=True`` inlines plotly.js (≈4.5 MB) in the fragment; a page holding several
    figures passes True for the first and False for the rest.
    """
    if include_plotlyjs not in (True, False):
        raise ValueError("include_plotlyjs must be True or False: figures must not load plotly.js from a CDN")
    return fig.to_html(full_html=False, include_plotlyjs=include_plotlyjs, div_id=div_id,
                       config={"displaylogo": False})
