"""Tool calls read by `lv.read` are fields too: their arguments found in the tokens, numbers from the raw JSON.

Fixtures (sources in tests/fixtures/servers/SOURCES.md and tests/fixtures/llamacpp/):
- ``llamacpp/v1_chat_tool_call.json``: a real llama-server response (the default model's GGUF,
  ``--jinja`` with the Qwen2.5 template vendored in llama.cpp, ``tool_choice: "required"``): its
  logprobs cover every generated token, ``<tool_call>`` markup included; ``function.arguments`` is
  the arguments object written again by the server.
- ``servers/openai_chat_stream_tool_calls.json``: a real gpt-4o stream of two parallel tool calls
  (recorded in llama-stack's tests), whose arguments arrive in pieces; it asked for no logprobs.
"""

from __future__ import annotations

import json
import math

import pytest

import logprob_viz as lv
from logprob_viz.sources.readers.errors import LogprobFormatError
from logprob_viz.sources.readers.openai_shapes import merge_chunks
from tests import paths


def _record(folder: str, name: str) -> dict:
    return json.loads((paths.FIXTURES / folder / f"{name}.json").read_text(encoding="utf-8"))


def test_llamacpp_tool_call_arguments_are_fields_with_the_servers_own_logprobs():
    raw = json.loads(_record("llamacpp", "v1_chat_tool_call")["body"])
    choice = raw["choices"][0]
    (call,) = choice["message"]["tool_calls"]
    trace = lv.read(raw)
    assert trace.meta["tool_calls"] == [{"index": 0, "id": call["id"], "name": call["function"]["name"],
                                         "arguments": call["function"]["arguments"]}]
    arguments = json.loads(call["function"]["arguments"])
    fields = trace.fields()
    assert fields.source == "tool_calls" and fields.error is None and fields.warnings == []
    assert [(r.path, json.loads(r.value)) for r in fields] == list(arguments.items())
    entries = choice["logprobs"]["content"]  # the server's own tokens and logprobs, read here directly
    for row in fields:
        assert (row.call, row.function) == (0, "get_weather")
        pieces = [bytes(e["bytes"]) for e in entries[row.first:row.last + 1]]
        joined = b"".join(pieces)
        p = joined.find(row.value.encode())
        assert 0 <= p < len(pieces[0]) and len(joined) - len(pieces[-1]) < p + len(row.value.encode())
        # the value's own tokens (at..last), and with a string's opening quote (first..last)
        assert row.logprob == pytest.approx(math.fsum(e["logprob"] for e in entries[row.at:row.last + 1]),
                                            abs=1e-5)  # (the trace keeps float32)
        assert row.logprob_with_quote == pytest.approx(
            math.fsum(e["logprob"] for e in entries[row.first:row.last + 1]), abs=1e-5)
    # the arguments lie inside the template's markup, not at the start of the text
    assert trace.text.startswith("<tool_call>") and fields[0].first > 5


def test_a_tool_call_whose_arguments_are_not_in_the_tokens_says_so():
    trace = lv.read(_record("llamacpp", "v1_chat_tool_call")["body"])
    head = trace[:10]  # the tokens before the arguments, with the response's tool calls kept in meta
    fields = head.fields()
    assert len(fields) == 0 and fields.source == "tool_calls"
    assert "tool call 0 (get_weather): its arguments are not in the tokens' text" in fields.warnings[0]


def test_a_streamed_tool_call_is_joined_from_its_pieces():
    chunks = _record("servers", "openai_chat_stream_tool_calls")["body"]
    pieces: dict[int, str] = {}
    for chunk in chunks:
        for c in chunk["choices"]:
            for d in c["delta"].get("tool_calls") or []:
                pieces[d["index"]] = pieces.get(d["index"], "") + (d["function"]["arguments"] or "")
    merged = merge_chunks(chunks)["choices"][0]["message"]["tool_calls"]
    assert [c["function"]["arguments"] for c in merged] == [pieces[0], pieces[1]]
    assert [json.loads(c["function"]["arguments"]) for c in merged] == [
        {"location": "San Francisco, USA"}, {"location": "Los Angeles, USA"}]
    assert [c["function"]["name"] for c in merged] == ["get_weather", "get_weather"]
    # no logprobs were asked for: the error says so, and that a tool call may have none
    with pytest.raises(LogprobFormatError, match="its message is a tool call"):
        lv.read(chunks)
