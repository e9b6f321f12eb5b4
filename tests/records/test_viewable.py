"""How a record finds its view (records/viewable.py): a table views/shows.py fills, looked up by type."""

import pytest

import logprob_viz as lv
from logprob_viz.records.viewable import Viewable, ViewNotRegistered, register, show
from logprob_viz.views.logprob.view import LogprobView
from tests.records.test_trace import make_trace


class Drawing:
    def __init__(self, record, **traits):
        self.record, self.traits = record, traits

    def _repr_mimebundle_(self, **kwargs):
        return {"text/plain": f"drawing of {type(self.record).__name__} {self.traits}"}


def test_a_record_type_with_no_view_says_so_and_how_to_register_one():
    class Unshown(Viewable):
        pass

    with pytest.raises(ViewNotRegistered, match=r"Unshown has no 'view'.*register") as caught:
        Unshown().view()
    # an ImportError, so the displays that fall back to a table on a missing views layer still do
    assert isinstance(caught.value, ImportError)


def test_a_registered_view_draws_the_record_and_its_subclasses():
    class Record(Viewable):
        pass

    class Special(Record):
        pass

    register(Record, view=Drawing)
    drawn = Special().view(color_mode="rank")
    assert isinstance(drawn, Drawing) and isinstance(drawn.record, Special)
    assert drawn.traits == {"color_mode": "rank"}
    assert Special()._repr_mimebundle_() == {"text/plain": "drawing of Special {}"}
    with pytest.raises(ViewNotRegistered, match="Special has no 'plot'"):
        show(Special(), "plot")


def test_a_subclass_of_trace_shows_in_the_trace_view():
    class MyTrace(lv.Trace):
        pass

    base = make_trace()
    mine = MyTrace(tokens=base.tokens, token_ids=base.token_ids, logprobs=base.logprobs, ranks=base.ranks,
                   entropy=base.entropy, top_tokens=base.top_tokens, top_logprobs=base.top_logprobs,
                   prompt_len=base.prompt_len, meta=dict(base.meta))
    view = mine.view(selected=2)
    assert isinstance(view, LogprobView) and view.selected == 2
    assert mine.to_svg().count("<rect") == base.to_svg().count("<rect")  # the same picture, by Trace's row
