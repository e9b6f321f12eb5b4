"""`Trace.fields`: a row per JSON leaf, checked against the tokens' own bytes and the trace's logprobs.

The spans are checked by decoding the tokens' bytes here (no offsets table from the package), the
values against ``json.loads`` of the same text walked by path, and the logprobs by an independent
sum (``math.fsum``) of the trace's logprobs over the row's tokens. Real default model throughout.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import logprob_viz as lv

PERSON = [{"role": "user", "content": "Give a JSON object with name, age and city of a person."}]


def _leaves(value, path=""):
    """path -> value for every leaf of a parsed JSON (the README's path rule, written again here)."""
    if isinstance(value, dict) and value:
        for key, v in value.items():
            name = (f"{path}.{key}" if path else key) if key.isidentifier() else f"{path}[{json.dumps(key)}]"
            yield from _leaves(v, name)
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def _check_span(trace, row):
    """The row's tokens hold the value's bytes exactly: the value starts inside `first`, ends inside
    `last`, and `straddles` says which of them also hold other bytes."""
    pieces = trace.token_bytes[row.first:row.last + 1]
    joined = b"".join(pieces)
    value = row.value.encode("utf-8")
    p = joined.find(value)
    assert 0 <= p < len(pieces[0]), (row, joined)
    end = p + len(value)
    assert len(joined) - len(pieces[-1]) < end <= len(joined), (row, joined)
    expected = {(False, False): "", (True, False): "start", (False, True): "end", (True, True): "both"}
    assert row.straddles == expected[(p > 0, end < len(joined))]


def _check_logprob(trace, row):
    """prob: the trace's logprobs over at..last (the value from its first character); prob_with_quote:
    over first..last (the opening quote's token too); the weakest among the tokens of prob."""
    expected = math.fsum(float(x) for x in trace.logprobs[row.at:row.last + 1])
    assert row.logprob == pytest.approx(expected, abs=1e-9)
    assert row.prob == pytest.approx(math.exp(expected), rel=1e-9)
    with_quote = math.fsum(float(x) for x in trace.logprobs[row.first:row.last + 1])
    assert row.logprob_with_quote == pytest.approx(with_quote, abs=1e-9)
    assert row.prob_with_quote == pytest.approx(math.exp(with_quote), rel=1e-9)
    lps = [float(x) for x in trace.logprobs[row.at:row.last + 1]]
    assert row.weakest == row.at + lps.index(min(lps))
    assert row.weakest_prob == pytest.approx(math.exp(min(lps)), rel=1e-6)


def _model_logprobs(reference_model, ids) -> list[float]:
    """log p of each token given the tokens before it, in float64 from plain transformers' logits (NaN first)."""
    import torch

    with torch.inference_mode():
        logp = torch.log_softmax(reference_model(input_ids=torch.tensor([ids])).logits[0].double(), dim=-1)
    return [math.nan] + [float(logp[i - 1, ids[i]]) for i in range(1, len(ids))]


@pytest.fixture(scope="module")
def person(runner):
    return runner.generate(messages=PERSON, max_new_tokens=60, top_logprobs=5, progress=False)


def test_generated_json_rows_cover_the_values_bytes_and_sum_their_logprobs(person, reference_model):
    fields = person.fields()
    model = _model_logprobs(reference_model, person.token_ids.tolist())
    for row in fields:  # against the model itself: p over at..last, with the quote over first..last
        assert row.logprob == pytest.approx(math.fsum(model[row.at:row.last + 1]), abs=2e-4)
        assert row.logprob_with_quote == pytest.approx(math.fsum(model[row.first:row.last + 1]), abs=2e-4)
    text = person.completion.text
    parsed = json.loads(text[text.index("{"):text.rindex("}") + 1])
    expected = dict(_leaves(parsed))
    assert [r.path for r in fields] == list(expected)
    assert fields.error is None and fields.source == "completion"
    for row in fields:
        assert json.loads(row.value) == expected[row.path]
        assert row.first >= person.prompt_len
        _check_span(person, row)
        _check_logprob(person, row)
        # the alternatives are the trace's own at the token where the value's content begins
        assert [a for a, _ in row.alternatives] == list(person.top_tokens[row.at])[:len(row.alternatives)]
        assert row.first <= row.at <= row.last
    weakest = fields.least_confident()
    assert weakest.prob == min(r.prob for r in fields)
    frame = fields.to_pandas()
    assert list(frame["path"]) == list(expected)
    np.testing.assert_allclose(frame["logprob"], [r.logprob for r in fields])


def test_a_string_value_begins_at_its_first_character_past_the_quote(person):
    strings = [r for r in person.fields() if r.value.startswith('"') and len(r.value) > 2]
    assert strings
    for row in strings:
        joined = b"".join(person.token_bytes[row.first:row.last + 1])
        content = joined.find(row.value.encode()) + 1  # the byte after the opening quote
        before = len(b"".join(person.token_bytes[row.first:row.at]))
        assert before <= content < before + len(person.token_bytes[row.at])


def test_a_cut_generation_keeps_the_values_before_the_break(person):
    fields = person.fields()
    second = fields[1]
    cut = person[:second.last + 2]  # the completion stops two tokens into the third value's key
    broken = cut.fields()
    assert [r.path for r in broken] == [r.path for r in fields][:2]
    assert broken.error is not None and "ends" in broken.error.message
    assert broken.error.offset == sum(len(b) for b in cut.token_bytes)  # the break is the end of the text
    assert broken.error.token == len(cut) - 1
    for a, b in zip(broken, fields, strict=False):
        assert (a.first, a.last, a.logprob) == (b.first, b.last, b.logprob)


def test_a_broken_json_gives_its_rows_up_to_the_break_and_where_it_broke(runner):
    text = '{"name": "Ann", "age": 34, "city": Paris}'
    trace = runner.score(text)
    fields = trace.fields()
    assert fields.source == "text"  # a scored text has no completion: the whole text is searched
    assert [(r.path, r.value) for r in fields] == [("name", '"Ann"'), ("age", "34")]
    at = text.encode().index(b"Paris")
    ends = np.cumsum([len(b) for b in trace.token_bytes])
    holder = next(i for i, e in enumerate(ends) if e > at)
    assert (fields.error.offset, fields.error.token) == (at, holder)
    assert "'P'" in fields.error.message and fields.warnings == [fields.error.message]
    for row in fields:
        _check_span(trace, row)
        _check_logprob(trace, row)


def test_nested_paths_and_json_after_bracketed_prose(runner):
    doc = {"person": {"address": {"city": "Oslo"}}, "items": [{"qty": 2}, {"qty": 5}], "a b": True, "e": []}
    trace = runner.score("Answer [see below]: " + json.dumps(doc) + " done")
    fields = trace.fields()
    assert fields.error is None
    assert [(r.path, json.loads(r.value)) for r in fields] == list(_leaves(doc))
    assert [r.path for r in fields] == ["person.address.city", "items[0].qty", "items[1].qty", '["a b"]', "e"]
    for row in fields:
        _check_span(trace, row)
        _check_logprob(trace, row)


def test_a_top_level_array_and_an_escaped_string(runner):
    doc = [{"q": "caf\u00e9 \"x\""}, 3.5e2, None]
    trace = runner.score("```json\n" + json.dumps(doc) + "\n```")
    fields = trace.fields()
    assert [(r.path, json.loads(r.value)) for r in fields] == [("[0].q", 'café "x"'), ("[1]", 350.0), ("[2]", None)]
    for row in fields:
        _check_span(trace, row)


def test_no_json_gives_empty_fields_with_an_error_like_broken_json(runner):
    # issue 48 item 6: a loop over generations gets the same shape for no JSON as for broken JSON
    trace = runner.score("No braces here at all.")
    fields = trace.fields()
    assert type(fields) is lv.Fields and len(fields) == 0 and fields.least_confident() is None
    assert isinstance(fields.error, lv.JSONBreak) and fields.error.missing
    assert str(fields.error) == ("the text holds no JSON object or array (no '{' or '['): 'No braces here at all.'; "
                                 "ask the model for JSON, or slice the trace to the part that holds it")
    assert fields.error.token == len(trace) - 1 and fields.error.offset == len(b"".join(trace.token_bytes))
    assert fields.warnings == [str(fields.error)] and fields.to_pandas().empty
    assert repr(fields) == "<Fields 0 values from the text, no JSON object or array>"
    broken = runner.score('{"a": 1, "b": ').fields()
    assert type(broken) is lv.Fields and broken.error is not None and not broken.error.missing


def test_what_else_branches_each_alternative_to_the_end_of_the_value(person, runner, reference_model):
    import torch

    fields = person.fields()
    row = fields["age"] if "age" in [r.path for r in fields] else fields[0]
    result = fields.what_else(row.path, runner, k=3)
    items = result["items"]
    assert sum(item["chosen"] for item in items) == 1
    assert [i["logprob"] for i in items] == sorted((i["logprob"] for i in items), reverse=True)
    alternatives = list(person.top_tokens[row.at])[:3]
    assert sorted(i["token"] for i in items) == sorted(alternatives)
    chosen = next(i for i in items if i["chosen"])
    assert chosen["value"] == row.value and chosen["tokens"] == [row.at, row.last]
    assert chosen["logprob"] == row.logprob and chosen["prob"] == row.prob  # the row's p, the list's p
    prefix = person.token_ids[:row.at].tolist()
    for item in items:
        assert item["tokens"][0] == row.at and str(row.at) in result["over"]
        if item["complete"]:
            json.loads(item["value"])  # a whole JSON value
        # its probability, recomputed by plain transformers over the same tokens after the same prefix
        ids = torch.tensor([prefix + item["token_ids"]])
        with torch.inference_mode():
            logp = torch.log_softmax(reference_model(input_ids=ids).logits[0].double(), dim=-1)
        expected = math.fsum(float(logp[len(prefix) + j - 1, t]) for j, t in enumerate(item["token_ids"]))
        assert item["logprob"] == pytest.approx(expected, abs=2e-4)


def test_prob_is_the_value_from_its_first_character_and_what_else_lists_the_same(runner, reference_model):
    # issue 48 item 5: f["name"].prob was over the quote's token too (0.550) while what_else listed the
    # same "Maria Lopez" from its first character (0.648). Now prob is the one what_else lists, and the
    # quote's token is in prob_with_quote, both checked against the model's own logits in float64.
    trace = runner.score(json.dumps({"name": "Maria Lopez", "age": 34}), top_logprobs=5, progress=False)
    fields = trace.fields()
    lp = _model_logprobs(reference_model, trace.token_ids.tolist())
    name, age = fields["name"], fields["age"]
    # the default model's tokens of the string: its quote ' "' on its own, then Maria, Lopez, and '",'
    assert [trace.tokens[i] for i in name.tokens] == [' "', "Maria", " Lopez", '",']
    assert (name.at, name.last) == (name.first + 1, name.first + 3)
    assert name.logprob == pytest.approx(math.fsum(lp[name.first + 1:name.first + 4]), abs=1e-4)  # Maria Lopez ",
    assert name.logprob_with_quote == pytest.approx(math.fsum(lp[name.first:name.first + 4]), abs=1e-4)  # ' "' too
    assert name.prob_with_quote < name.prob  # the quote's token is no certainty
    assert [trace.tokens[i] for i in age.tokens] == ["3", "4"] and age.at == age.first  # a number has no quote
    assert age.logprob == age.logprob_with_quote == pytest.approx(math.fsum(lp[age.first:age.last + 1]), abs=1e-4)
    listed = fields.what_else("name", runner, k=3)
    chosen = next(item for item in listed["items"] if item["chosen"])
    assert chosen["value"] == name.value == '"Maria Lopez"'
    assert (chosen["logprob"], chosen["prob"]) == (name.logprob, name.prob)  # the same sum, bit for bit
    assert fields.least_confident() is name and fields.to_pandas().set_index("path").loc["name", "prob"] == name.prob


def test_import_json_inside_records_is_the_standard_library():
    # records/json/ is named like the standard library's json: every module of records/ that imports
    # json must still get the standard library's (imports are absolute), never the package
    import importlib
    import pkgutil

    import logprob_viz.records as records

    for info in pkgutil.walk_packages(records.__path__, "logprob_viz.records."):
        module = importlib.import_module(info.name)
        if "json" in vars(module) and not info.name.endswith(".json"):
            assert module.json is json, info.name
    assert importlib.import_module("logprob_viz.records.json").Fields is lv.Fields
