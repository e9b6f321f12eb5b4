"""The explorer's view: the LogprobView with fork points and branching on, and how it starts before any text exists."""

from __future__ import annotations

import traitlets as t

from ...records.trace import Trace
from ..logprob.view import LogprobView

__all__ = ["ExplorerView", "empty_view", "follow_work"]


class ExplorerView(LogprobView):
    """The LogprobView with the explorer's fork points (token positions) marked in the text, the
    alternatives that have a branch marked in the chart, and branching on: a click on an
    alternative asks the explorer to branch there (or shows its branch, when it has one)."""

    forks = t.List(t.Int()).tag(sync=True)
    branching = t.Bool(True).tag(sync=True)
    # {position: {token id: node number}}: alternatives of the text on show that have a branch already
    explored = t.Dict().tag(sync=True)
    app_keys = t.Bool(True).tag(sync=True)  # pass the app's keys (Ctrl+Enter, n, s, u) to the kernel
    # The column beside the text (js/logprob/explorer_side.js): the sliders above the chart, the pinned
    # token's p under them, Next token's choices in the chart's place. Data from the app, drawn as text.
    sampling = t.Dict({"temperature": 0.0, "top_p": 1.0, "min_p": 0.0, "min_p_off": ""}).tag(sync=True)
    # the pinned token: {state, at, token, model, sampled | low, high, label, note, column: [[id, text, low, high]]}
    readout = t.Dict().tag(sync=True)
    next_step = t.Dict().tag(sync=True)  # Next token: {after, entropy, busy, options: [[id, text, logprob], ...]}
    next_typed = t.Dict().tag(sync=True)  # the typed token's p there: {after, text, token, p, rank, note | error}
    # how the work a click started goes, in the column beside the text (where the click was): the
    # status line's {kind, message} and the job that runs ("Branch", ...; None: none)
    work = t.Dict().tag(sync=True)


def empty_view() -> ExplorerView:
    try:
        view = ExplorerView(Trace(tokens=[]))
    except (TypeError, ValueError):
        # Views that cannot show zero tokens: a hidden one-token placeholder until the first trace.
        view = ExplorerView(Trace(tokens=[" "], top_tokens=[[" "]], top_logprobs=[[0.0]]))
    return view  # shown from the start: its column holds the sliders, which a person sets before Generate


def follow_work(state, view: ExplorerView) -> None:
    """`view.work` follows the app's status line and running job (`state.py`): on a projector the
    status line is far above the text a class has scrolled to, the column beside it is on screen."""

    def show(_change=None) -> None:
        kind, message = state.status
        view.work = {"kind": kind, "message": message, "running": state.running}

    state.observe(show, names=["status", "running"])
