"""FieldsView in Python: the panel's payload, selection <-> pinned token, "What else?" through the kernel
message, and the offline page (token text escaped). The real default model; numbers from the trace."""

from __future__ import annotations

import html
import json
import math

import pytest

import logprob_viz as lv
from browser.cells import HOSTILE_IMG
from logprob_viz.views.toolkit import percent

DOC = {"name": "Ann", "age": 34, "tags": ["a", "b"]}


@pytest.fixture(scope="module")
def fields(runner):
    return runner.score(json.dumps(DOC), progress=False).fields()


def _model_logprobs(reference_model, ids) -> list[float]:
    """log p of each token given the tokens before it, in float64 from plain transformers' logits (NaN first)."""
    import torch

    with torch.inference_mode():
        logp = torch.log_softmax(reference_model(input_ids=torch.tensor([ids])).logits[0].double(), dim=-1)
    return [math.nan] + [float(logp[i - 1, ids[i]]) for i in range(1, len(ids))]


def test_the_payload_holds_each_value_and_the_least_confident(fields, reference_model):
    view = lv.FieldsView(fields)
    payload = view.panel._payload
    assert [r["path"] for r in payload["rows"]] == ["name", "age", "tags[0]", "tags[1]"]
    trace = fields.trace
    model = _model_logprobs(reference_model, trace.token_ids.tolist())
    for shown, row in zip(payload["rows"], fields.rows, strict=True):
        # p: the value from its first content token (at) to its last; with the quote: from its first token
        assert shown["logprob"] == pytest.approx(math.fsum(model[row.at:row.last + 1]), abs=1e-4)
        assert shown["prob"] == pytest.approx(math.exp(math.fsum(model[row.at:row.last + 1])), rel=1e-4)
        assert shown["logprob_with_quote"] == pytest.approx(math.fsum(model[row.first:row.last + 1]), abs=1e-4)
        assert shown["at_token"] == trace.tokens[row.at]
    # "Ann" and "a", "b": the quote ' "' (or ' ["') a token of its own before the content; 34 none
    assert [trace.tokens[r.first] for r in fields.rows if r.at > r.first] == [' "', ' ["', ' "']
    assert fields["age"].at == fields["age"].first
    page = fields.to_html()
    shown = [html.escape(percent(fields["name"].prob)), html.escape(percent(fields["name"].prob_with_quote))]
    assert f"<code>&quot;Ann&quot;</code> p = {shown[0]}, with its opening quote {shown[1]} (least" in page
    probs = [r["prob"] for r in payload["rows"]]
    assert payload["least"] == probs.index(min(probs))
    assert [probs[i] for i in payload["order"]] == sorted(probs)
    assert payload["can_branch"] is False


def test_selecting_a_value_pins_its_token_and_a_token_selects_its_value(fields):
    view = lv.FieldsView(fields, selected=1)
    assert view.logprob_view.selected == fields[1].at
    view.panel.selected = 2
    assert view.logprob_view.selected == fields[2].at
    view.logprob_view.selected = fields[0].last  # a token of the first value, clicked in the trace
    assert view.panel.selected == 0
    with pytest.raises(ValueError, match="between 0 and 3"):
        view.select(9)


def test_what_else_goes_through_the_kernel_message(fields, runner):
    view = lv.FieldsView(fields, runner=runner, k=3)
    assert view.panel._payload["can_branch"] is True
    view._on_msg(view.panel, {"type": "what_else", "row": 1}, [])
    answer = view.panel._what_else
    assert answer["state"] == "done" and answer["row"] == 1
    assert [i["value"] for i in answer["items"] if i["chosen"]] == ["34"]
    assert len(answer["items"]) == 3
    no_runner = lv.FieldsView(fields)
    no_runner._on_msg(no_runner.panel, {"type": "what_else", "row": 1}, [])
    assert no_runner.panel._what_else["state"] == "error" and "runner" in no_runner.panel._what_else["error"]


def test_the_offline_page_escapes_values(runner, tmp_path):
    fields = runner.score(json.dumps({"html": HOSTILE_IMG}), progress=False).fields()
    page = fields.to_html()
    assert HOSTILE_IMG not in page and "&lt;img src=x" in page and "least confident" in page
    path = fields.to_html(tmp_path / "f.html")
    assert "&lt;img src=x" in path.read_text(encoding="utf-8") and HOSTILE_IMG not in path.read_text(encoding="utf-8")


def test_a_text_without_json_shows_what_is_missing(runner):
    fields = runner.score("No braces here.", progress=False).fields()
    view = lv.FieldsView(fields)
    assert view.panel._payload["rows"] == [] and view.panel._payload["least"] == -1
    assert view.panel._payload["error"].startswith("the text holds no JSON object or array")
    assert "the text holds no JSON object or array (no &#x27;{&#x27; or &#x27;[&#x27;)" in fields.to_html()
