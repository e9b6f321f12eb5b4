"""The LogprobView's "why?" requests and its "decided" mode, kernel side, on the real default model.

A "why" message is answered as the browser would receive it: the answer names the attribution,
whose scores (read back with the suite's own wire reader, `tests/wire.py`) equal an independent
`runner.attribute` call made in the test. The attributions travel in the saved state and the
offline HTML; the decided mode's layers equal what the test derives from the lens's own ranks.
"""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pytest
import traitlets

import logprob_viz as lv
import wire
from logprob_viz.views.logprob.attribution import NO_RUNNER

PROMPT = "Q: What is the largest planet in the solar system?\nA: The largest planet in the solar system is"


@pytest.fixture(scope="module")
def trace(runner):
    return runner.score(PROMPT + " Neptune <script>alert(1)</script>", top_logprobs=5)


def _at(trace) -> int:
    return next(i for i, tok in enumerate(trace.tokens) if tok == " Neptune")


def _ask(view, **content):
    sent = []
    view.send = lambda msg, buffers=None: sent.append(msg)
    view._on_why(view, {"type": "why", **content}, [])
    assert len(sent) == 1, sent
    return sent[0]


def _scores(view, key) -> np.ndarray:
    entry = next(a for a in view.attributions if a["key"] == key)
    return wire.array(entry["scores"], "float32")


def test_a_why_request_is_answered_with_the_scores_of_runner_attribute(runner, trace):
    at = _at(trace)
    jupiter = runner.tokenizer(" Jupiter", add_special_tokens=False)["input_ids"][0]
    view = lv.LogprobView(trace, runner=runner, selected=at)
    assert view.can_why
    answer = _ask(view, id="q1", at=at, contrast=jupiter, method="gradient_x_input")
    assert answer["type"] == "why-answer" and answer["id"] == "q1" and answer["ok"], answer
    expected = runner.attribute(trace, at=at, contrast=" Jupiter", method="gradient_x_input").scores
    got = _scores(view, answer["key"])
    assert got.shape == (at,)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())
    entry = view.attributions[0]
    assert entry["target"] == " Neptune" and entry["contrast"] == " Jupiter" and entry["at"] == at
    # The same question again is answered from the trait: no second entry.
    again = _ask(view, id="q2", at=at, contrast=jupiter, method="gradient_x_input")
    assert again["key"] == answer["key"] and len(view.attributions) == 1


def test_two_methods_are_kept_side_by_side_and_ig_says_whether_it_converged(runner, trace):
    at = _at(trace)
    view = lv.LogprobView(trace, runner=runner)
    keys = [_ask(view, id=m, at=at, contrast=None, method=m)["key"] for m in ("occlusion", "integrated_gradients")]
    assert [a["method"] for a in view.attributions] == ["occlusion", "integrated_gradients"]
    occluded = runner.attribute(trace, at=at, method="occlusion").scores
    np.testing.assert_allclose(_scores(view, keys[0]), occluded, rtol=1e-5, atol=1e-6 * np.abs(occluded).max())
    ig_meta = view.attributions[1]["meta"]
    scores = _scores(view, keys[1]).astype(np.float64)
    # The completeness error the view shows is the one the test computes from the scores themselves.
    error = scores.sum() - (view.attributions[1]["value"] - ig_meta["baseline_value"])
    assert abs(error - ig_meta["completeness_error"]) < 1e-3 * max(1.0, abs(error))
    assert isinstance(ig_meta["converged"], bool)


def test_bad_requests_and_a_missing_runner_are_answered_in_words(runner, trace):
    view = lv.LogprobView(trace)
    assert not view.can_why
    assert _ask(view, id="a", at=3) == {"type": "why-answer", "id": "a", "ok": False, "error": NO_RUNNER}
    view.runner = runner
    assert view.can_why
    bad = _ask(view, id="b", at=0)
    assert not bad["ok"] and "tokens before it" in bad["error"]
    two_tokens = _ask(view, id="c", at=_at(trace), contrast=" Jupiter Saturn")
    assert not two_tokens["ok"] and "not one token" in two_tokens["error"]
    assert _ask(view, id="d", at=2, method="saliency")["error"].startswith("ValueError: method must be one of")
    assert view.attributions == []


def test_attributions_are_in_the_saved_state_and_the_offline_page(runner, trace, tmp_path):
    at = _at(trace)
    view = lv.LogprobView(trace)
    attr = runner.attribute(trace, at=at, method="gradient_x_input")
    view.add_attribution(attr)
    assert view.selected == at and view.why_active == view.attributions[0]["key"]
    page = lv.to_html(view, tmp_path / "why.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in page  # the hostile token is data in base64, never markup
    b64 = re.search(r'<script type="application/vnd.logprob-viz.state\+base64">([^<]+)</script>', page).group(1)
    saved = json.loads(base64.b64decode(b64))
    state = wire.put_back(saved["state"], saved["buffer_paths"], [base64.b64decode(b) for b in saved["buffers"]])
    kept = state["attributions"][0]
    np.testing.assert_allclose(wire.array(kept["scores"], "float32"), attr.scores, rtol=1e-6, atol=1e-7)
    assert state["why_active"] == kept["key"] and state["selected"] == at


def test_a_new_trace_drops_the_attributions_of_the_old_one(runner, trace):
    view = lv.LogprobView(trace)
    view.add_attribution(runner.attribute(trace, at=3))
    view.trace = runner.score("Something else entirely.")
    assert view.attributions == [] and view.why_active == ""
    with pytest.raises(ValueError, match="of another text"):
        view.add_attribution(runner.attribute(trace, at=3))


def test_the_decided_mode_sends_the_layer_each_token_stays_the_top_guess_from(runner):
    lens = runner.lens(PROMPT + " Jupiter.", top_logprobs=2)
    view = lv.LogprobView(lens.trace, lens=lens, color_mode="decided")
    got = wire.array(view._decided, "int32")
    # Independent: from the lens's ranks, the first layer from which rank 1 holds to the last block.
    top1 = lens.ranks == 1  # (L, N)
    final_top1 = lens.trace.ranks == 1
    expected = np.full(len(lens), -1)
    for i in range(1, len(lens)):
        for row in range(len(lens.layers)):
            if top1[row:, i].all() and final_top1[i]:
                expected[i] = lens.layers[row]
                break
    np.testing.assert_array_equal(got, expected)
    assert view.decided_blocks == lens.n_blocks
    with pytest.raises(traitlets.TraitError, match="needs the trace's lens"):
        lv.LogprobView(lens.trace, color_mode="decided")
    with pytest.raises(ValueError, match="the lens has"):
        lv.LogprobView(runner.score("Short."), lens=lens)
