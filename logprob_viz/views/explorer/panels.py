"""Two small panels of the explorer: the next-token distribution for manual decoding, and the
"what does the temperature do here" readout of the pinned token.

Plain ipywidgets; token texts go into button descriptions and escaped HTML, never markup.
"""

from __future__ import annotations

import html
import math

import ipywidgets as w
import numpy as np

from ...records.trace import Trace
from .branching import visible
from .temperature import tempered_top_k

__all__ = ["NextTokenPanel", "TemperatureReadout"]


class NextTokenPanel:
    """The next token's distribution, before a token is chosen: one button per alternative."""

    def __init__(self) -> None:
        self.title = w.HTML()
        self.choices = w.HBox([], layout=w.Layout(flex_flow="row wrap"))
        self.close = w.Button(description="Close", icon="times", layout=w.Layout(width="auto"))
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
            f"<b>Next token</b> after {len(step) - 1} tokens (top {len(self.options)}{shown}): choose one to append it"
        )
        self.buttons = []
        for token_id, text, lp in self.options:
            button = w.Button(
                description=f"{visible(text)}  {math.exp(lp):.1%}",
                tooltip=f"id {token_id}: {text!r}",
                layout=w.Layout(width="auto"),
            )
            button.on_click(lambda _, token_id=token_id: self._on_choose and self._on_choose(token_id))
            self.buttons.append(button)
        self.choices.children = self.buttons
        self.box.layout.display = "flex"

    def hide(self) -> None:
        self.box.layout.display = "none"
        self.choices.children = []
        self.buttons = []

    def disable(self, busy: bool) -> None:
        for button in self.buttons:
            button.disabled = busy


class TemperatureReadout:
    """At the pinned token: each alternative's probability as the model gave it and under the slider's temperature."""

    def __init__(self) -> None:
        self.html = w.HTML()
        self.exact = w.Button(
            description="Exact",
            icon="calculator",
            layout=w.Layout(width="auto"),
            disabled=True,
            tooltip="recompute the pinned position under these settings with one forward pass",
        )
        self.box = w.VBox([self.html, self.exact], layout=w.Layout(display="none"))

    def update(
        self, trace: Trace | None, at: int, temperature: float, exact: np.ndarray | None = None, exact_label: str = ""
    ) -> None:
        """Show token `at` of `trace`; `exact`: processed top-K logprobs from a forward pass, else an approximation."""
        if trace is None or not 0 < at < len(trace) or not np.isfinite(trace.top_logprobs[at]).any():
            self.box.layout.display = "none"
            self.exact.disabled = True
            return
        raw = trace.top_logprobs[at]
        if exact is not None:
            new = np.exp(np.asarray(exact, dtype=np.float64))
            how = f"exact, one forward pass ({html.escape(exact_label)})"
        else:
            new = tempered_top_k(raw, temperature)
            how = (
                "approximation: softmax(logprob / T) over the top K only, the rest of the vocabulary left out; "
                "press Exact for the real numbers"
            )
        label = "greedy" if temperature <= 0 and exact is None else f"T={temperature:.2f}"
        rows = []
        for j, (text, lp) in enumerate(zip(trace.top_tokens[at], raw, strict=False)):
            if not math.isfinite(lp):
                continue
            chosen = trace.top_ids[at][j] >= 0 and trace.top_ids[at][j] == trace.token_ids[at]
            mark = "<b>" if chosen else ""
            end = "</b>" if chosen else ""
            rows.append(
                f"<tr><td>{mark}{html.escape(visible(text))}{end}</td><td>{math.exp(lp):.1%}</td>"
                f"<td>{new[j]:.1%}</td></tr>"
            )
        self.html.value = (
            f"<div class='lv-explore-readout'><b>At token {at}</b>: p(model) → p({html.escape(label)})"
            f"<table><tr><th>token</th><th>p(model)</th><th>p({html.escape(label)})</th></tr>{''.join(rows)}</table>"
            f"<small>{how}</small></div>"
        )
        self.exact.disabled = False
        self.box.layout.display = "flex"
