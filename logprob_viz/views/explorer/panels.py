"""Two panels of the explorer, each following the app's state (`state.py`): the next token's
distribution for manual decoding, shown in the view's column in the chart's place (so the choices
are where the person looks, and showing them moves nothing), and the pinned token's panel
(`pinned.PinnedPanel`, exported here as `TemperatureReadout`, the name the app knows).

Token texts go to the view as data (drawn as text), never markup.
"""

from __future__ import annotations

import math

from ...records.trace import Trace
from .pinned import PinnedPanel

__all__ = ["NextTokenPanel", "TemperatureReadout", "PinnedPanel", "choices_of"]

TemperatureReadout = PinnedPanel  # the app's name for the pinned-token panel

def choices_of(step: Trace) -> list[tuple[int, str, float]]:
    """Next token's choices at `step`'s last position (the runner's record of the next token):
    (token id, text, logprob), likeliest first, those with a token id and a finite logprob."""
    row = len(step) - 1
    return [(int(i), text, float(lp))
            for text, lp, i in zip(step.top_tokens[row], step.top_logprobs[row], step.top_ids[row], strict=False)
            if math.isfinite(lp) and i >= 0]


class NextTokenPanel:
    """The next token's distribution, before a token is chosen, in the view's column where the chart
    is (js/logprob/explorer_side.js draws it as the alternatives chart: a row per choice, a click or
    Enter appends it; a "type a token" box asks for any token's p).

    It follows the state (`state.py`): ``step`` (the choices; None hides them), ``typed`` (a typed
    token's p) and ``running`` (the choices wait while a job runs), and draws them in `view`.
    """

    def __init__(self, state, view) -> None:
        self.view = view
        self.options: list[tuple[int, str, float]] = []  # (token id, text, logprob) in the order shown
        state.observe(lambda change: self._show(change["new"]), names="step")
        state.observe(lambda change: setattr(view, "next_typed", change["new"]), names="typed")
        state.observe(lambda change: self._busy(change["new"] is not None), names="running")

    @property
    def shown(self) -> bool:
        return bool(self.options)

    def _show(self, step: Trace | None) -> None:
        if step is None:
            self.options = []
            self.view.next_step = {}
            return
        row = len(step) - 1
        self.options = choices_of(step)
        entropy = float(step.entropy[row])
        self.view.next_step = {
            "after": row, "busy": False, "entropy": entropy if math.isfinite(entropy) else None,
            "options": [[i, text, lp] for i, text, lp in self.options],
        }

    def _busy(self, busy: bool) -> None:
        if self.options and bool(self.view.next_step.get("busy")) != busy:
            self.view.next_step = {**self.view.next_step, "busy": busy}
