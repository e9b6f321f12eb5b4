"""The choices view and the reliability diagram on the kernel side: what the bars are sent (read back
through the codec), a selection showing its option's trace, and a bin opening its items."""

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.views.codec import read_array

PROMPTS = ["Review: I loved it. Sentiment:", "Review: Awful, just awful. Sentiment:", "Review: <b>fine</b>. Sentiment:"]
OPTIONS = [" positive", " negative"]


@pytest.fixture(scope="module")
def choices(runner):
    return runner.choose(PROMPTS, OPTIONS, gold=[0, 1, 0], progress=False)


def test_the_bars_carry_the_probabilities_and_the_gold_answers(choices):
    view = choices.view()
    payload = view.bars._payload
    np.testing.assert_allclose(read_array(payload["probs"]), choices.prob_table.astype(np.float32))
    np.testing.assert_array_equal(read_array(payload["gold"]), [0, 1, 0])
    np.testing.assert_array_equal(read_array(payload["n_tokens"]), choices.n_tokens)
    first = int(choices.prob_table[0].argmax())
    assert (view.bars.selected_row, view.bars.selected_option) == (0, first)  # the first prompt's predicted
    assert view.logprob_view.trace is choices.traces[0][first]


def test_a_selection_shows_that_options_tokens_pinned_at_its_first(choices):
    view = choices.view()
    view.bars.selected_row, view.bars.selected_option = 2, 1  # as a click in the browser sets them
    trace = choices.traces[2][1]
    assert view.logprob_view.trace is trace and view.logprob_view.selected == trace.prompt_len
    assert view.bars._shown == [2, 1]
    with pytest.raises(ValueError, match="row must be between 0 and 2"):
        view.select(3, 0)


def test_a_bin_of_the_reliability_diagram_opens_its_items(choices):
    pytest.importorskip("plotly")
    cal = choices.calibration(bins=5)
    diagram = cal.plot(widget=True)
    b = int(cal.bin_index[0])
    diagram.select(b)
    rows = np.flatnonzero(cal.bin_index == b).tolist()
    assert diagram.items_view.choices.prompts == [PROMPTS[r] for r in rows]
    assert diagram.children[-1] is diagram.items_view
    # the width the page measured for the diagram's area is the figure's (plotly's own is 700 px)
    assert diagram.figure.layout.width is None
    diagram.fit.width = 673
    assert diagram.figure.layout.width == 673 and diagram.fit in diagram.children
    plain = lv.calibration([0.3, 0.9], [False, True], bins=2).plot(widget=True)
    plain.select(1)
    assert "<td>1</td><td>0.900</td><td>right</td>" in plain.items_view.value


def test_a_corpus_of_choices_carries_gold_predicted_and_right_or_wrong_to_the_table(choices):
    corpus = choices.to_corpus()
    assert corpus.labels == [" positive", " negative", " positive"]  # the gold options
    best = choices.prob_table.argmax(axis=1)
    assert [m["predicted"] for m in corpus.metadata] == [OPTIONS[j] for j in best]
    assert [t is choices.traces[r][best[r]] for r, t in enumerate(corpus.traces)] == [True] * 3
    answers = corpus.view().table._payload["answers"]
    assert read_array(answers["correct"]).tolist() == [int(b == g) for b, g in zip(best, [0, 1, 0], strict=True)]
    plain = lv.Corpus(list(corpus.traces))
    assert "answers" not in plain.view().table._payload  # a corpus without choices sends none
