"""The reliability diagram of a `Calibration` (plotly), and the widget whose bins open their items.

`reliability_figure(cal)`: a bar per bin at its accuracy (bins without items draw none), the bins'
mean confidence as points, and the diagonal of perfect calibration; the title carries ECE, MCE
and the Brier score. Bar ``b`` of the first trace is bin ``b`` (``customdata``: count, mean
confidence, lower, upper edge).

`ReliabilityDiagram` (``cal.plot(widget=True)``): the figure as a plotly ``FigureWidget`` above the
items of the clicked bin. When the items are choices (`choices.calibration()`), they open in a
`ChoicesView` of those prompts (each bar opening its tokens); otherwise they are listed (item,
confidence, right or wrong). The link lives here, as `plot_link.Link` does for a trace's figure:
the figure's click callback sets ``selected_bin``, which shows the bin's items.
"""

from __future__ import annotations

import html

import ipywidgets
import numpy as np
import traitlets as t

from .bundled import Bundled, HtmlFallback
from .choices.view import ChoicesView
from .plots import figure_html, plotly_go

__all__ = ["reliability_figure", "reliability_diagram", "ReliabilityDiagram", "PlotFit", "ITEMS_LISTED"]

ITEMS_LISTED = 200  # items of a bin listed as a table (the widget's own list; cal.items_in(b) has all)


def reliability_figure(cal, *, widget: bool = False, title: str | None = None):
    """The reliability diagram of `cal` (see the module docstring)."""
    go = plotly_go()
    width = 1.0 / cal.bins
    centres = (cal.edges[:-1] + cal.edges[1:]) / 2
    accuracy = [None if n == 0 else float(a) for n, a in zip(cal.count, cal.accuracy, strict=True)]
    confidence = [None if n == 0 else float(c) for n, c in zip(cal.count, cal.mean_confidence, strict=True)]
    # (None, not NaN, for an empty bin: a FigureWidget's state is JSON, which has no NaN)
    custom = [[int(n), c, float(lo), float(hi)]
              for n, c, lo, hi in zip(cal.count, confidence, cal.edges[:-1], cal.edges[1:], strict=True)]
    fig = go.Figure()
    fig.add_bar(x=centres.tolist(), y=accuracy, width=width * 0.94, customdata=custom, name="accuracy",
                marker={"color": "#0072b2"},
                hovertemplate=("confidence %{customdata[2]:.2f}–%{customdata[3]:.2f}: %{customdata[0]} items<br>"
                               "accuracy %{y:.1%} · mean confidence %{customdata[1]:.1%}<extra></extra>"))
    fig.add_scatter(x=centres.tolist(), y=confidence, mode="markers", name="mean confidence", hoverinfo="skip",
                    marker={"color": "#d55e00", "size": 8, "symbol": "diamond"})
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", name="perfectly calibrated", hoverinfo="skip",
                    line={"color": "#999999", "dash": "dash"})
    heading = title or (f"Reliability of {len(cal.probs)} items: ECE {cal.ece:.3f} · MCE {cal.mce:.3f} · "
                        f"Brier {cal.brier:.3f}")
    fig.update_layout(title=html.escape(heading), height=340, margin={"l": 60, "r": 20, "t": 50, "b": 50},
                      clickmode="event", hovermode="closest", bargap=0,
                      legend={"orientation": "h", "y": -0.25, "x": 0})
    fig.update_xaxes(title="confidence", range=[0, 1])
    fig.update_yaxes(title="accuracy", range=[0, 1.02])
    return go.FigureWidget(fig) if widget else fig


def reliability_diagram(cal, *, title: str | None = None) -> ReliabilityDiagram:
    return ReliabilityDiagram(cal, title=title)


class PlotFit(Bundled, bundle="plot_fit"):
    """Invisible, in the diagram's box: the box's width in px, measured in the page whenever it changes
    (``width``; 0 until then). Plotly draws a FigureWidget at 700 px before it is in the page and never
    fits it afterwards; the diagram sets its figure's width to this one."""

    width = t.Int(0).tag(sync=True)


class ReliabilityDiagram(HtmlFallback, ipywidgets.VBox):
    """The diagram as a widget; clicking a bin shows its items below (``selected_bin``; -1: none).

    Attributes
    ----------
    calibration : Calibration
    figure : plotly.graph_objects.FigureWidget
    items_view : ChoicesView or ipywidgets.HTML or None
        What shows the selected bin's items.
    fit : PlotFit
        The output area's width, measured in the page: the figure's width follows it.
    """

    selected_bin = t.Int(-1)

    def __init__(self, cal, *, title: str | None = None, **kwargs):
        self.calibration = cal
        self.figure = reliability_figure(cal, widget=True, title=title)
        self.caption = ipywidgets.HTML(_caption(cal, -1))
        self.items_view = None
        self.fit = PlotFit()  # the figure's width follows its box, measured in the page
        super().__init__(children=[self.figure, self.caption, self.fit], **kwargs)
        self.fit.observe(self._fit_width, names="width")
        self.figure.data[0].on_click(self._clicked, append=True)
        self.observe(self._show_bin, names="selected_bin")

    def select(self, b: int) -> None:
        """Show bin `b`'s items, as a click on its bar does (-1: none)."""
        if not -1 <= int(b) < self.calibration.bins:
            raise ValueError(f"bin must be -1 (none) or between 0 and {self.calibration.bins - 1}, got {b}")
        self.selected_bin = int(b)

    def _fit_width(self, change) -> None:
        if change["new"] > 0:
            self.figure.layout.width = change["new"]

    def _clicked(self, trace, points, state) -> None:
        if points.point_inds:
            self.selected_bin = int(points.point_inds[0])

    def _show_bin(self, change) -> None:
        b = change["new"]
        cal = self.calibration
        self.caption.value = _caption(cal, b)
        rows = cal.items_in(b) if b >= 0 else np.zeros(0, dtype=np.int64)
        view = None
        if len(rows) and cal.items is not None and hasattr(cal.items, "options"):
            view = ChoicesView(cal.items[rows.tolist()])
        elif len(rows):
            view = ipywidgets.HTML(_items_table(cal, rows))
        self.items_view = view
        self.children = [self.figure, self.caption, self.fit] + ([view] if view is not None else [])

    def fallback_html(self) -> str:
        """Where no widget manager renders the diagram (nbconvert, viewers): the figure as HTML."""
        return figure_html(self.figure)


def _caption(cal, b: int) -> str:
    if b < 0:
        return '<span class="lvcal-caption">Click a bar to see the items in its bin.</span>'
    lo, hi = cal.edges[b], cal.edges[b + 1]
    n = int(cal.count[b])
    if not n:
        return f'<span class="lvcal-caption">No item has a confidence from {lo:.2f} to {hi:.2f}.</span>'
    return (f'<span class="lvcal-caption">Bin {b} (confidence {lo:.2f}–{hi:.2f}): {n} items, '
            f"accuracy {cal.accuracy[b]:.1%}, mean confidence {cal.mean_confidence[b]:.1%}.</span>")


def _items_table(cal, rows: np.ndarray) -> str:
    shown = rows[:ITEMS_LISTED]
    body = "".join(f"<tr><td>{int(i)}</td><td>{cal.probs[i]:.3f}</td><td>{'right' if cal.correct[i] else 'wrong'}"
                   "</td></tr>" for i in shown)
    more = f"<p>{len(rows) - len(shown)} more: calibration.items_in({int(cal.bin_index[rows[0]])})</p>" \
        if len(rows) > len(shown) else ""
    return (f'<table class="lvcal-items"><thead><tr><th>item</th><th>confidence</th><th>answer</th></tr></thead>'
            f"<tbody>{body}</tbody></table>{more}")
