"""The corpus, choices and fields views share one layout: a panel over ONE LogprobView (`PanelOverTrace`)."""

from __future__ import annotations

import json

import numpy as np

import logprob_viz as lv
from logprob_viz.views.bundled import Bundled
from logprob_viz.views.logprob.view import LogprobView
from logprob_viz.views.panel_over_trace import PanelOverTrace


def hand_trace(text_tokens: list[str]) -> lv.Trace:
    return lv.Trace(tokens=text_tokens, logprobs=[np.nan] + [-0.5] * (len(text_tokens) - 1))


def test_the_three_views_are_a_panel_over_one_logprob_view(runner):
    corpus = lv.Corpus([hand_trace(["a", "b", "c"]), hand_trace(["d", "e"])])
    fields = runner.score(json.dumps({"name": "Ann"}), progress=False).fields()
    choices = runner.choose(["The sky is"], [" blue", " green"], progress=False)
    for record, name in ((corpus, "table"), (fields, "panel"), (choices, "bars")):
        view = record.view()
        try:
            assert isinstance(view, PanelOverTrace) and isinstance(view.panel, Bundled)
            assert view.children == (view.panel, view.logprob_view) and isinstance(view.logprob_view, LogprobView)
            assert getattr(view, name) is view.panel  # (each view's own name for its panel)
            assert repr(view) == f"{type(view).__name__}({record!r})"
        finally:
            view.close()


def test_show_pins_a_token_of_the_trace_or_none_beyond_it():
    corpus = lv.Corpus([hand_trace(["a", "b", "c"]), hand_trace(["d", "e"])])
    view = corpus.view()
    try:
        second = corpus[1]
        assert view.show(second, 1) == 1 and view.logprob_view.trace is second and view.logprob_view.selected == 1
        assert view.show(second, 5, new=False) == -1 and view.logprob_view.selected == -1  # beyond: none
    finally:
        view.close()
