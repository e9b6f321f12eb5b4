"""A plotly figure linked to a view: clicking a point pins its token, pinning a token marks its point.

`link(view, "surprisal")` (or a figure made by `logprob_viz.views.plots`) returns a `Link` that shows
the view above the figure. The link lives in this small object, which observes the view's
``selected`` trait (the pinned token's index) and the figure's click events; the view knows
nothing about the figure. Point ``i`` of the figure's first trace stands for item ``i`` of the view
(a token in a `LogprobView`, a span in a `CompareView`), which is how `plots` draws them.
"""

from __future__ import annotations

import math

import ipywidgets

from .bundled import HtmlFallback
from .page import fallback_html
from .plots import PIN_NAME, figure_html

__all__ = ["Link", "link"]

_PLOTLYJS_SENT = False  # whether a linked figure's HTML of this kernel session carried plotly.js


class Link(HtmlFallback):
    """A view and a plotly ``FigureWidget`` kept in step (made by `link`).

    Attributes
    ----------
    view : LogprobView or CompareView
    figure : plotly.graph_objects.FigureWidget
    """

    def __init__(self, view, figure):
        import plotly.graph_objects as go

        _check_linkable(view)
        if isinstance(figure, go.Figure):
            figure = go.FigureWidget(figure)
        if not isinstance(figure, go.FigureWidget):
            raise TypeError(
                f"link needs a plotly figure or a kind name such as 'surprisal', got {type(figure).__name__}"
            )
        if not figure.data:
            raise ValueError("the figure has no data to link")
        if figure.data[0].type == "histogram":
            raise ValueError("a histogram's bars hold many tokens, so it cannot pin one; link a per-position figure "
                             "('surprisal', 'entropy' or 'cumulative')")
        self.view, self.figure = view, figure
        self._points = figure.data[0]
        self._pin = next((d for d in figure.data[1:] if d.name == PIN_NAME), None)
        if self._pin is None:  # a figure made elsewhere: add the marker that shows the pinned point
            figure.add_scatter(x=[], y=[], mode="markers", name=PIN_NAME, hoverinfo="skip", showlegend=False,
                               marker={"size": 14, "symbol": "circle-open", "color": "#d55e00", "line": {"width": 3}})
            self._pin = figure.data[-1]
        self._points.on_click(self._clicked, append=True)
        view.observe(self._pinned, names="selected")
        self._pinned({"new": view.selected})

    def _clicked(self, trace, points, state) -> None:
        # plotly calls this for every trace of the figure; only a click on the points counts
        if not points.point_inds:
            return
        i = int(points.point_inds[0])
        if 0 <= i < self.view.pin_count:
            self.view.selected = i

    def _pinned(self, change) -> None:
        i = change["new"]
        xs, ys = self._points.x, self._points.y
        with self.figure.batch_update():
            if i is None or i < 0 or xs is None or i >= len(xs) or ys is None or _nan(ys[i]):
                self._pin.x, self._pin.y = [], []
            else:
                self._pin.x, self._pin.y = [xs[i]], [ys[i]]

    @property
    def pinned_point(self) -> int:
        """The index of the point marked as pinned, -1 for none."""
        xs = self._pin.x
        if not xs:
            return -1
        return int(list(self._points.x).index(xs[0]))

    def unlink(self) -> None:
        """Stop keeping the view and the figure in step."""
        self.view.unobserve(self._pinned, names="selected")
        # plotly has no way to remove one click callback; keep the others the user added
        callbacks = getattr(self._points, "_click_callbacks", [])
        if self._clicked in callbacks:
            callbacks.remove(self._clicked)

    def widget(self):
        """The view above the figure, as one ipywidgets box."""
        return ipywidgets.VBox([self.view, self.figure])

    def fallback_html(self) -> str:
        """The view's static HTML and the figure's: what nbconvert's HTML shows.

        plotly.js (≈4.5 MB, from plotly's package) is inlined in the first linked figure's HTML of a
        kernel session only, as plotly's own notebook renderer does: later figures on the same page
        use it from there.
        """
        global _PLOTLYJS_SENT
        view_html = fallback_html(self.view)
        figure = figure_html(self.figure, include_plotlyjs=not _PLOTLYJS_SENT)
        _PLOTLYJS_SENT = True
        return view_html + figure

    def live_mimebundle(self, **kwargs):
        """The live widgets where a widget manager renders them (`widget`); elsewhere (nbconvert's
        HTML) `fallback_html` (`bundled.HtmlFallback`: a display never fails over it)."""
        return self.widget()._repr_mimebundle_(**kwargs)


def _nan(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _check_linkable(view) -> None:
    """A view `link` can join: it pins an item by its ``selected`` trait and says how many it has
    (``pin_count``), and draws its own figure (``plot(kind, **kwargs)``): LogprobView, CompareView."""
    if not all(hasattr(view, name) for name in ("selected", "observe", "pin_count", "plot")):
        raise TypeError(f"link joins a logprob_viz view (LogprobView or CompareView), got {type(view).__name__}")


def link(view, figure=None, **plot_kwargs) -> Link:
    """Link a view to a plotly figure: click a point to pin its token; pin a token to mark its point.

    Parameters
    ----------
    view : LogprobView or CompareView
    figure : str, plotly figure or None
        A kind (``"surprisal"``, ``"entropy"``, ``"cumulative"`` for a `LogprobView`;
        ``"difference"`` for a `CompareView`), drawn by the view (``view.plot(kind)``) from its
        own trace or comparison, or a figure whose first trace has one point per token (per span)
        in order. None: the view's first kind ("surprisal", "difference").
    **plot_kwargs
        Passed to `logprob_viz.views.plots.plot` / `plot_comparison` when `figure` is a kind.

    Returns
    -------
    Link
        Shows the view above the figure as the last expression of a cell.
    """
    _check_linkable(view)
    if figure is None or isinstance(figure, str):
        kind = {} if figure is None else {"kind": figure}
        figure = view.plot(**kind, widget=True, **plot_kwargs)
    return Link(view, figure)
