"""Tool calls of an OpenAI-compatible Chat choice, kept in the trace's ``meta["tool_calls"]``.

A tool call's arguments are JSON the model wrote, so `Trace.fields` reads them as fields; for
that the trace keeps each call as ``{"index", "id", "name", "arguments"}`` (``arguments``: the
JSON text the server put in ``function.arguments``). Whether the trace's tokens hold the
arguments depends on the server (see the README's "Confidence per JSON field"): vLLM's and
llama.cpp's logprobs cover every generated token, tool-call markup included; OpenAI gives none
for a tool call. A stream sends a call in pieces (``delta.tool_calls[]``, each with its
``index``): `merge_tool_call_deltas` joins them as the SDK's stream helpers do.
"""

from __future__ import annotations

import json

from .checks import expect_dict, expect_int, expect_list, expect_str
from .errors import LogprobFormatError, describe

__all__ = ["tool_calls_of", "merge_tool_call_deltas", "finish_tool_calls"]


def _arguments(value, path: str) -> str:
    if isinstance(value, (dict, list)):  # (Ollama's /api/chat writes the arguments as an object)
        return json.dumps(value, ensure_ascii=False)
    return expect_str(value, path, optional=True) or ""


def tool_calls_of(message: dict, path: str) -> list[dict] | None:
    """A message's ``tool_calls`` as ``[{"index", "id", "name", "arguments"}]``; None when it has none."""
    calls = message.get("tool_calls")
    if not calls:
        return None
    out = []
    for i, call in enumerate(expect_list(calls, f"{path}.tool_calls")):
        where = f"{path}.tool_calls[{i}]"
        call = expect_dict(call, where, "a tool call")
        function = expect_dict(call.get("function") or {}, f"{where}.function")
        out.append({
            "index": expect_int(call.get("index"), f"{where}.index", optional=True, default=i),
            "id": expect_str(call.get("id"), f"{where}.id", optional=True),
            "name": expect_str(function.get("name"), f"{where}.function.name", optional=True),
            "arguments": _arguments(function.get("arguments"), f"{where}.function.arguments"),
        })
    return out


def merge_tool_call_deltas(merged: dict, deltas, path: str) -> None:
    """Add a chunk's ``delta.tool_calls`` to ``merged["tool_calls"]`` ({index: call}): the id and name
    from the piece that carries them, the arguments' text appended piece by piece."""
    calls = merged.setdefault("tool_calls", {})
    for j, piece in enumerate(expect_list(deltas, path)):
        where = f"{path}[{j}]"
        piece = expect_dict(piece, where, "a tool call")
        index = piece.get("index", j)
        if type(index) is not int:
            raise LogprobFormatError(f"{where}.index", f"expected an integer, got {describe(index)}")
        function = expect_dict(piece.get("function") or {}, f"{where}.function")
        call = calls.setdefault(index, {"index": index, "id": None, "type": "function",
                                        "function": {"name": None, "arguments": ""}})
        if piece.get("id"):
            call["id"] = expect_str(piece["id"], f"{where}.id")
        if function.get("name"):
            call["function"]["name"] = expect_str(function["name"], f"{where}.function.name")
        call["function"]["arguments"] += _arguments(function.get("arguments"), f"{where}.function.arguments")


def finish_tool_calls(merged: dict) -> list[dict] | None:
    """The merged calls in index order (the message's ``tool_calls``), taken out of ``merged``."""
    calls = merged.pop("tool_calls", None)
    return [calls[i] for i in sorted(calls)] if calls else None
