"""Two panels of the explorer: the next token's distribution for manual decoding, shown in the
view's column in the chart's place (so the choices are where the person looks, and showing them
moves nothing), and the pinned token's panel (`pinned.PinnedPanel`, exported here as
`TemperatureReadout`, the name the app knows).

Token texts go to the view as data (drawn as text), never markup.
"""

from __future__ import annotations

import math

from ...records.trace import Trace
from .pinned import PinnedPanel

__all__ = ["NextTokenPanel", "TemperatureReadout", "PinnedPanel"]

TemperatureReadout = PinnedPanel  # the app's name for the pinned-token panel

class NextTokenPanel:
    """The next token's distribution, before a token is chosen, in the view's column where the chart
    is (js/logprob/explorer_side.js draws it as the alternatives chart: a row per choice, a click or
    Enter appends it; a "type a token" box asks for any token's p). This side holds the choices."""

    def __init__(self, view) -> None:
        self.view = view
        self.options: list[tuple[int, str, float]] = []  # (token id, text, logprob) in the order shown
        self.step: Trace | None = None  # the runner's record of the next position (its last row)

    @property
    def shown(self) -> bool:
        return bool(self.options)

    def show(self, step: Trace) -> None:
        """Show the distribution at `step`'s last position (the runner's record of the next token)."""
        row = len(step) - 1
        self.step = step
        self.options = [
            (int(i), text, float(lp))
            for text, lp, i in zip(step.top_tokens[row], step.top_logprobs[row], step.top_ids[row], strict=False)
            if math.isfinite(lp) and i >= 0
        ]
        entropy = float(step.entropy[row])
        self.view.next_step = {
            "after": row, "busy": False, "entropy": entropy if math.isfinite(entropy) else None,
            "options": [[i, text, lp] for i, text, lp in self.options],
        }

    def hide(self) -> None:
        self.options, self.step = [], None
        self.view.next_step = {}
        self.view.next_typed = {}

    def disable(self, busy: bool) -> None:
        if self.options and bool(self.view.next_step.get("busy")) != busy:
            self.view.next_step = {**self.view.next_step, "busy": busy}
