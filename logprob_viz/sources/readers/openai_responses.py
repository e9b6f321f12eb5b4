"""OpenAI's Responses API with ``include: ["message.output_text.logprobs"]`` (and ``top_logprobs: K``).

A response's ``output[]`` items of type ``message`` hold ``content[]`` parts of type
``output_text`` with ``logprobs: [{token, logprob, bytes, top_logprobs: [{token, logprob,
bytes}]}]``. A stream sends ``response.output_text.delta`` events whose ``logprobs`` hold the
delta's tokens (``{token, logprob, top_logprobs: [{token, logprob}]}``, no bytes), and ends with
``response.completed`` carrying the whole response (read in preference: it has the bytes).
Schema: the openai SDK's ``openai/types/responses/response_output_text.py`` and
``response_text_delta_event.py`` (openai-python 1.x/2.x, generated from OpenAI's OpenAPI spec).
"""

from __future__ import annotations

from ...records.trace import Trace
from .assemble import server_meta, str_or_none
from .checks import expect_dict, expect_list
from .entries import delta_entries, entries_trace

__all__ = ["responses_trace", "is_response", "is_response_stream"]

# where an answer without logprobs is refused, and how to ask for them
NO_LOGPROBS = (
    "output",
    "the provider returned no logprobs:"
    " request them with include=[\"message.output_text.logprobs\"] and top_logprobs=K",
)



def is_response(data) -> bool:
    return isinstance(data, dict) and data.get("object") == "response" and isinstance(data.get("output"), list)


def is_response_stream(data) -> bool:
    return isinstance(data, list) and bool(data) and all(
        isinstance(e, dict) and str(e.get("type", "")).startswith("response.") for e in data)


def _from_response(resp: dict) -> tuple[list, str]:
    entries, text = [], ""
    for i, item in enumerate(expect_list(resp.get("output"), "output")):
        item = expect_dict(item, f"output[{i}]", "an output item")
        if item.get("type") != "message":
            continue  # reasoning, tool calls: no token logprobs
        for j, part in enumerate(expect_list(item.get("content") or [], f"output[{i}].content")):
            part = expect_dict(part, f"output[{i}].content[{j}]", "a content part")
            if part.get("type") == "output_text":
                text += part.get("text") if isinstance(part.get("text"), str) else ""
                entries += expect_list(part.get("logprobs") or [], f"output[{i}].content[{j}].logprobs")
    return entries, text


def responses_trace(data, *, top_logprobs: int | None = None, table=None) -> Trace:
    """A trace from a Responses API response (a dict) or its stream events (a list)."""
    events = None
    if isinstance(data, list):
        events = data
        done = [e for e in data if isinstance(e, dict) and e.get("type") == "response.completed"]
        if done:
            data = expect_dict(done[-1].get("response"), "response.completed.response", "a response")
    if isinstance(data, list):  # no completed event: the deltas
        entries, text = delta_entries(data, "response.output_text.delta", "a stream event")
        model = None
    else:
        data = expect_dict(data, "", "a Responses API response")
        entries, text = _from_response(data)
        model = str_or_none(data.get("model"))
    meta = server_meta("openai", "openai.responses", model=model, id=data.get("id") if isinstance(data, dict) else None,
                       text=text, stream_chunks=len(events) if events is not None else None)
    return entries_trace(entries, top_logprobs, meta, table=table, none=NO_LOGPROBS)
