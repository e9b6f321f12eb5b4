"""Two small panels of the explorer, both below the view (so neither moves the text when it
appears): the next token's distribution for manual decoding, drawn as the view's alternatives
chart (a bar per choice, click or Tab + Enter to append it), and the pinned token's panel
(`pinned.PinnedPanel`, exported here as `TemperatureReadout`, the name the app knows).

Plain ipywidgets; token texts go into button descriptions and escaped HTML, never markup.
"""

from __future__ import annotations

import math

import ipywidgets as w

from ...records.trace import Trace
from .branching import visible
from .pinned import PinnedPanel

__all__ = ["NextTokenPanel", "TemperatureReadout", "PinnedPanel"]

TemperatureReadout = PinnedPanel  # the app's name for the pinned-token panel

# The chart's look: the alternatives chart of the view (js/logprob/widget.css), in the theme's colours.
CHART_STYLE = """<style>
.lv-next-chart { font-size: 14px; max-width: 560px; }
.lv-next-row { align-items: center; gap: 8px; margin: 1px 0 !important; }
.lv-next-row .lv-next-choice { justify-content: flex-start; font-family: var(--jp-code-font-family, monospace);
  white-space: pre; min-width: 8em; max-width: 14em; height: 26px; text-align: left; }
.lv-next-row .lv-next-choice:hover, .lv-next-row .lv-next-choice:focus-visible {
  outline: 2px solid var(--jp-brand-color1, #1976d2); }
.lv-next-bar { position: relative; height: 14px; width: 220px; background: var(--jp-layout-color2, #eee);
  border-radius: 2px; overflow: hidden; }
.lv-next-fill { position: absolute; left: 0; top: 0; bottom: 0; background: var(--jp-brand-color1, #1976d2);
  border-radius: 2px; }
.lv-next-num { font-variant-numeric: tabular-nums; white-space: nowrap; color: var(--jp-ui-font-color1, #222);
  min-width: 8em; text-align: right; }
.lv-next-lp { color: var(--jp-ui-font-color2, #666); margin-left: 8px; }
</style>"""


class NextTokenPanel:
    """The next token's distribution, before a token is chosen: the alternatives chart, one row per
    choice (its token as a button, its probability as a bar); a click or Enter on a row appends it."""

    def __init__(self) -> None:
        self.title = w.HTML()
        self.choices = w.VBox([])
        self.choices.add_class("lv-next-chart")
        self.close = w.Button(description="Close", icon="times", layout=w.Layout(width="auto", align_self="flex-start"))
        self.box = w.VBox([self.title, self.choices, self.close], layout=w.Layout(display="none"))
        self.box.add_class("lv-explore-next")
        self.close.on_click(lambda _: self.hide())
        self.buttons: list[w.Button] = []
        self.options: list[tuple[int, str, float]] = []  # (token id, text, logprob) in the order shown
        self._on_choose = None

    def on_choose(self, callback) -> None:
        """`callback(token_id)` when the person picks a token."""
        self._on_choose = callback

    def show(self, step: Trace) -> None:
        """Show the distribution at `step`'s last position (the runner's record of the next token)."""
        row = len(step) - 1
        self.options = [
            (int(i), text, float(lp))
            for text, lp, i in zip(step.top_tokens[row], step.top_logprobs[row], step.top_ids[row], strict=False)
            if math.isfinite(lp) and i >= 0
        ]
        entropy = float(step.entropy[row])
        shown = f", entropy {entropy:.2f} nats" if math.isfinite(entropy) else ""
        self.title.value = (
            f"{CHART_STYLE}<div class='lv-next-title'><b>Next token</b> after {len(step) - 1} tokens "
            f"(top {len(self.options)}{shown}): click one (or Tab to it and press Enter) to append it</div>"
        )
        self.buttons, rows = [], []
        for token_id, text, lp in self.options:
            button = w.Button(description=visible(text), tooltip=f"append id {token_id}: {text!r}",
                              layout=w.Layout(width="auto"))
            button.add_class("lv-next-choice")
            button.on_click(lambda _, token_id=token_id: self._on_choose and self._on_choose(token_id))
            p = math.exp(lp)
            bar = w.HTML(
                f"<div style='display:flex;align-items:center;gap:8px'><span class='lv-next-bar'>"
                f"<span class='lv-next-fill' style='width:{p * 100:.2f}%'></span></span>"
                f"<span class='lv-next-num' data-p='{p!r}'>{p:.1%}<span class='lv-next-lp'>{lp:.2f}</span></span></div>"
            )
            line = w.HBox([button, bar])
            line.add_class("lv-next-row")
            self.buttons.append(button)
            rows.append(line)
        self.choices.children = rows
        self.box.layout.display = "flex"

    def hide(self) -> None:
        self.box.layout.display = "none"
        self.choices.children = []
        self.buttons = []

    def disable(self, busy: bool) -> None:
        for button in self.buttons:
            button.disabled = busy


