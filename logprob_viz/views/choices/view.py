"""The choices view: a `Choices` record's options as bars, each opening its tokens in a LogprobView.

`ChoicesView(choices)` is a `PanelOverTrace` (a VBox of two widgets), as the corpus view is: the bars
(`ChoicesBars`, an anywidget; bundle ``js/choices/`` in ``views/static/choices.js``) and ONE
`LogprobView`, whose trace is the selected option's (prompt + option), pinned at the option's
first token. A row per prompt: its text (the end of it, which the options follow), then a bar
per option, as long as the option's probability, coloured by it in the views' palette; the gold
option is marked, and the predicted one when it is wrong.

Everything the bars show is in the ``_payload`` trait (`encode_choices`), so a saved notebook
shows them without a kernel; clicking a bar sets ``selected_row`` and ``selected_option``, and
the kernel answers by showing that trace below (``_shown`` confirms it, as in the corpus view).
"""

from __future__ import annotations

import numpy as np
import traitlets as t

from ...records.choices import Choices
from ..bundled import Bundled
from ..codec import array, texts
from ..logprob.view import LogprobView
from ..panel_over_trace import PanelOverTrace

__all__ = ["ChoicesView", "ChoicesBars", "encode_choices"]



def encode_choices(choices) -> dict:
    """The bars' ``_payload``: prompts and options as texts (N options for all rows, or R x N where each
    prompt has its own: ``per_prompt``), [R, N] probabilities and logprobs."""
    gold = choices.gold if choices.gold is not None else np.full(len(choices), -1)
    return {
        "version": 1,
        "n_rows": len(choices),
        "n_options": int(choices.prob_table.shape[1]),
        "length": choices.length,
        "prompts": texts("prompts", choices.prompts),
        "per_prompt": bool(choices.per_prompt),
        "options": texts("options", [o for row in choices.option_rows for o in row] if choices.per_prompt
                         else choices.option_rows[0]),
        "probs": array("probs", choices.prob_table, "float32"),  # (R, N)
        "logprobs": array("logprobs", choices.logprob_table, "float32"),  # (R, N)
        "n_tokens": array("n_tokens", choices.n_tokens, "int32"),  # (R, N)
        "gold": array("gold", gold, "int32"),  # (R,) -1: no gold
        "flagged": array("flagged", [[bool(tr.flagged()) for tr in row] for row in choices.trace_rows], "uint8"),
    }


class ChoicesBars(Bundled, bundle="choices"):
    """The bars half of a `ChoicesView` (use that).

    Attributes
    ----------
    selected_row, selected_option : int
        The bar whose tokens the LogprobView shows (-1: none).
    """

    _payload = t.Dict().tag(sync=True)
    selected_row = t.Int(0).tag(sync=True)
    selected_option = t.Int(0).tag(sync=True)
    _shown = t.List([-1, -1]).tag(sync=True)  # what the kernel shows below: [row, option]


class ChoicesView(PanelOverTrace):
    """A `Choices` record as bars over one LogprobView of the selected option's tokens.

    Parameters
    ----------
    choices : Choices
    row, option : int
        The bar shown first (default: the first prompt's predicted option).

    Attributes
    ----------
    bars : ChoicesBars
    logprob_view : LogprobView
    """

    def __init__(self, choices, row: int = 0, option: int | None = None, **kwargs) -> None:
        if not isinstance(choices, Choices):
            raise TypeError(f"ChoicesView shows an lv.Choices (runner.choose(...)), got {type(choices).__name__}")
        self._choices = choices
        if option is None:
            option = int(choices.prob_table[row].argmax())
        self._check(row, option)
        bars = ChoicesBars(_payload=encode_choices(choices), selected_row=row, selected_option=option)
        super().__init__(choices, bars, LogprobView(self._trace(row, option)), **kwargs)
        self.bars.observe(self._show, names=["selected_row", "selected_option"])
        self._show()

    @property
    def choices(self):
        return self._choices

    @property
    def bars(self) -> ChoicesBars:
        """The bars widget: this view's panel."""
        return self.panel

    def select(self, row: int, option: int) -> None:
        """Show prompt `row`'s option `option` below, as a click on its bar does."""
        self._check(row, option)
        with self.bars.hold_sync():
            self.bars.selected_row, self.bars.selected_option = int(row), int(option)

    def _check(self, row, option) -> None:
        rows, options = self._choices.prob_table.shape
        if not (0 <= int(row) < rows and 0 <= int(option) < options):
            raise ValueError(f"row must be between 0 and {rows - 1} and option between 0 and {options - 1}, "
                             f"got row {row}, option {option}")

    def _trace(self, row: int, option: int):
        return self._choices.trace_rows[row][option]

    def _show(self, _change=None) -> None:
        row, option = self.bars.selected_row, self.bars.selected_option
        if not (0 <= row < len(self._choices) and 0 <= option < self._choices.prob_table.shape[1]):
            return
        trace = self._trace(row, option)
        self.show(trace, trace.prompt_len)  # pinned at the option's first token
        self.bars._shown = [row, option]

    def fallback_html(self) -> str:
        """Outside a widget manager (nbconvert, viewers): the selected option's LogprobView as HTML."""
        return self.logprob_view.page_html()
