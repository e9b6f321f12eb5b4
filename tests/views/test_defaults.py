"""The presentation size: ``lv.settings.size`` for every new view, ``view.size`` for one, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
import traitlets

import logprob_viz as lv
from logprob_viz.views.logprob.view import LogprobView


def small_trace() -> lv.Trace:
    return lv.Trace(tokens=["A", " b"], logprobs=[np.nan, -0.5], ranks=[0, 1])


@pytest.fixture
def projector_default():
    before = lv.settings.size
    lv.settings.size = "projector"
    yield
    lv.settings.size = before


def test_new_views_start_with_the_setting_and_keep_their_own(projector_default):
    view = LogprobView(small_trace())
    own = LogprobView(small_trace(), size="normal")
    try:
        assert view.size == "projector" and own.size == "normal"
        assert view.get_state()["size"] == "projector", "the size crosses to the browser"
        view.size = "normal"
        assert view.size == "normal" and lv.settings.size == "projector", "one view's size is its own"
    finally:
        view.close()
        own.close()


def test_a_size_that_does_not_exist_says_which_do():
    with pytest.raises(ValueError, match="'normal', 'projector'.*got 'huge'"):
        lv.settings.size = "huge"
    assert lv.settings.size == "normal"
    view = LogprobView(small_trace())
    try:
        with pytest.raises(traitlets.TraitError, match="size must be one of"):
            view.size = "Projector"
        assert view.size == "normal"
    finally:
        view.close()
