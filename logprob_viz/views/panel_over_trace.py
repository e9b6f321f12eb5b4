"""The one layout of the corpus, choices and fields views: a panel over ONE LogprobView (`PanelOverTrace`).

The panel is a `bundled.Bundled` widget of the view's own (the corpus's table, the choices' bars,
the fields' values); clicking in it shows a trace, or a token of it, in the LogprobView below
(`show`), and the panel's ``_shown`` trait tells the browser what the kernel shows, so that a view
without a kernel says so (js/toolkit/ask.js). Each view adds what its panel asks and its HTML
fallback (`bundled.HtmlFallback`).
"""

from __future__ import annotations

import ipywidgets

from .bundled import Bundled, HtmlFallback
from .logprob.view import LogprobView

__all__ = ["PanelOverTrace"]


class PanelOverTrace(HtmlFallback, ipywidgets.VBox):
    """`panel` over `logprob_view`, for the record `record` (the view's repr names it).

    Attributes
    ----------
    panel : Bundled
        The view's own widget above.
    logprob_view : LogprobView
        The one view of the trace on show.
    """

    def __init__(self, record, panel: Bundled, logprob_view: LogprobView, **kwargs) -> None:
        self.record, self.panel, self.logprob_view = record, panel, logprob_view
        super().__init__(children=[panel, logprob_view], **kwargs)

    def show(self, trace, pinned: int = -1, *, new: bool | None = None) -> int:
        """`trace` in the LogprobView, its token `pinned` pinned (-1, or a position beyond the trace:
        none); `new` says whether it is another trace than the one on show (default: another object).
        Returns the token pinned."""
        if self.logprob_view.trace is not trace if new is None else new:
            self.logprob_view.trace = trace  # a new trace unpins (selected -1)
        wanted = pinned if 0 <= pinned < len(trace) else -1
        if self.logprob_view.selected != wanted:
            self.logprob_view.selected = wanted
        return wanted

    def __repr__(self) -> str:
        record = getattr(self, "record", None)  # (None while the widget is being made)
        return f"{type(self).__name__}({record!r})" if record is not None else object.__repr__(self)
