"""The shapes an OpenAI-compatible response arrives in, made into one response dict with ``choices``.

A full response, stream chunks (merged choice by choice, in order), one choice, one choice's
``logprobs``, a vLLM ``prompt_logprobs`` list, or an error body (raises `ServerError`).
"""

from __future__ import annotations

import json

from .checks import expect_dict, expect_list
from .errors import LogprobFormatError, ServerError, describe
from .openai_tools import finish_tool_calls, merge_tool_call_deltas

__all__ = ["as_response", "merge_chunks", "raise_error", "is_prompt_logprobs"]


def raise_error(body: dict, server: str | None = None):
    """Raise `ServerError` with the server's message from an ``{"error": ...}`` body (any server's)."""
    err = body.get("error")
    where = "at " + server + " " if server else ""
    if isinstance(err, dict):
        msg = err.get("message") or json.dumps(err, default=str)
        status = err.get("code") if isinstance(err.get("code"), int) else body.get("code")
        kind = err.get("type") if isinstance(err.get("type"), str) else None
        param = err.get("param") if isinstance(err.get("param"), str) else None
        raise ServerError(f"the server {where}returned an error: {msg}", status=status, type=kind,
                          code=err.get("code"), param=param, server=server)
    raise ServerError(f"the server {where}returned an error: {err}", server=server)


def is_prompt_logprobs(x) -> bool:
    """Whether a list is vLLM's ``prompt_logprobs`` (null or id-keyed objects of {logprob, ...})."""
    return (
        isinstance(x, list)
        and len(x) > 0
        and all(e is None or isinstance(e, dict) for e in x)
        and any(isinstance(e, dict) for e in x)
        and all(
            all(str(key).lstrip("-").isdigit() and isinstance(v, dict) and "logprob" in v for key, v in e.items())
            for e in x if isinstance(e, dict)
        )
    )


def as_response(data, who: str = "from_openai") -> dict:
    """Whatever was given, as one response dict with "choices"."""
    if isinstance(data, list):
        if not data:
            raise LogprobFormatError("", f"{who} got an empty list: expected a response, stream chunks or "
                                         "prompt_logprobs")
        if is_prompt_logprobs(data):
            return {"object": "text_completion", "choices": [{"index": 0, "prompt_logprobs": data}]}
        if all(isinstance(c, dict) and ("choices" in c or "error" in c) for c in data):
            return merge_chunks(data)
        bad = next((i for i, c in enumerate(data) if not (isinstance(c, dict) and ("choices" in c or "error" in c))), 0)
        raise LogprobFormatError(f"[{bad}]", f"{who} got a list that is neither stream chunks (objects with 'choices') "
                                             f"nor vLLM prompt_logprobs; this entry is {describe(data[bad])}")
    if not isinstance(data, dict):
        raise LogprobFormatError("", f"{who} cannot read {describe(data)}: give a response (dict, JSON, SDK object), "
                                     "stream chunks or SSE text")
    if "error" in data and not data.get("choices"):
        raise_error(data)
    if "choices" in data:
        if str(data.get("object", "")).endswith(".chunk"):
            return merge_chunks([data])
        expect_list(data["choices"], "choices")
        return data
    if "tokens" in data and "token_logprobs" in data:  # a Completions choice's logprobs
        return {"object": "text_completion", "choices": [{"index": 0, "logprobs": data}]}
    if isinstance(data.get("content"), list):  # a Chat choice's logprobs
        return {"object": "chat.completion", "choices": [{"index": 0, "logprobs": data}]}
    if "logprobs" in data or "prompt_logprobs" in data:  # one choice
        kind = "chat.completion" if ("message" in data or "delta" in data) else "text_completion"
        return {"object": kind, "choices": [data]}
    raise LogprobFormatError(
        "", f"{who} found no choices or logprobs in this object (keys: " + ", ".join(map(str, list(data)[:12])) + "); "
        "was the request made with logprobs (Completions: logprobs=5; Chat: logprobs=True, top_logprobs=5)?"
    )


def _extend(merged: dict, key: str, values, path: str) -> None:
    merged.setdefault(key, []).extend(expect_list(values, path))


def _merge_logprobs(merged_choice: dict, lp: dict, path: str) -> None:
    """One chunk's ``logprobs`` (Chat's or Completions') appended to its merged choice's."""
    merged = merged_choice["logprobs"] = merged_choice["logprobs"] or {}
    # OpenAI's first chunk has {"content": [], "refusal": null}; a refusal's tokens are under "refusal"
    for key in ("content", "refusal"):
        if key in lp and (key == "content" or lp[key] is not None):
            _extend(merged, key, lp.get(key) or [], f"{path}.{key}")
    for key in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
        if lp.get(key) is not None:
            _extend(merged, key, lp[key], f"{path}.{key}")


def merge_chunks(chunks: list) -> dict:
    """Stream chunks (Completions or Chat) merged into one response, choice by choice, in order."""
    head: dict = {}
    choices: dict[int, dict] = {}
    chat = False
    for n, chunk in enumerate(chunks):
        if "error" in chunk and not chunk.get("choices"):
            raise_error(chunk)
        if not head:
            head = {k: v for k, v in chunk.items() if k != "choices"}
        for key in ("usage", "system_fingerprint", "prompt_logprobs", "prompt_token_ids"):
            if chunk.get(key) is not None:
                head[key] = chunk[key]
        chat = chat or str(chunk.get("object", "")).startswith("chat.")
        for j, c in enumerate(expect_list(chunk.get("choices") or [], f"chunk {n}.choices")):
            path = f"chunk {n}.choices[{j}]"
            c = expect_dict(c, path, "a choice")
            i = c.get("index", 0)
            if type(i) is not int:
                raise LogprobFormatError(f"{path}.index", f"expected an integer, got {describe(i)}")
            m = choices.setdefault(i, {"index": i, "text": "", "logprobs": None, "finish_reason": None})
            delta = c.get("delta")
            if delta is not None:
                chat = True
                content = expect_dict(delta, f"{path}.delta").get("content")
                if isinstance(delta.get("refusal"), str):  # a refusal streams its text here, not in content
                    m["refusal"] = m.get("refusal", "") + delta["refusal"]
                if delta.get("tool_calls"):  # a tool call streams in pieces, its arguments' text split
                    merge_tool_call_deltas(m, delta["tool_calls"], f"{path}.delta.tool_calls")
            else:
                content = c.get("text")
            if content is not None and not isinstance(content, str):
                raise LogprobFormatError(f"{path}.text", f"expected a string, got {describe(content)}")
            m["text"] += content or ""
            if c.get("logprobs"):
                _merge_logprobs(m, expect_dict(c["logprobs"], f"{path}.logprobs"), f"{path}.logprobs")
            if c.get("token_ids") is not None:
                _extend(m, "token_ids", c["token_ids"], f"{path}.token_ids")
            for key in ("prompt_token_ids", "prompt_logprobs"):
                if c.get(key) is not None:
                    m[key] = c[key]
            if c.get("finish_reason") is not None:
                m["finish_reason"] = c["finish_reason"]
    head["object"] = "chat.completion" if chat else "text_completion"
    head["stream_chunks"] = len(chunks)
    out = []
    for i in sorted(choices):
        m = choices[i]
        if chat:
            m["message"] = {"role": "assistant", "content": m.pop("text"), "refusal": m.pop("refusal", None),
                            "tool_calls": finish_tool_calls(m)}
        out.append(m)
    head["choices"] = out
    return head
