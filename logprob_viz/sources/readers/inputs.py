"""Input normalisation: whatever the user holds, as plain dicts, lists and scalars.

Accepted: a dict or list, JSON text (str or bytes), an SDK object (pydantic ``model_dump`` or
the old ``to_dict_recursive``), an iterator of chunks (an SDK stream), server-sent events text
(``data: {...}`` lines, as OpenAI, vLLM, llama.cpp and TGI stream) and NDJSON text (one JSON
object per line, as Ollama streams). Every failure is a `LogprobFormatError` saying what the
text looked like.

JSON objects that repeat a key (a server writing two tokens whose strings collide) keep every
pair: `DupKeys` is a dict that also holds ``pairs``.
"""

from __future__ import annotations

import json

from .errors import LogprobFormatError

__all__ = ["DupKeys", "loads", "parse_sse", "parse_ndjson", "to_plain", "looks_like"]


class DupKeys(dict):
    """A JSON object whose text repeated a key; ``pairs`` keeps every (key, value) in order."""

    pairs: list


def _pairs_hook(pairs):
    d = dict(pairs)
    if len(d) < len(pairs):
        d = DupKeys(d)
        d.pairs = list(pairs)
    return d


def loads(text: str, what: str = "the JSON text", *, keep_duplicate_keys: bool = True):
    """json.loads, keeping repeated keys (see `DupKeys`) if asked; a `LogprobFormatError` on bad JSON."""
    try:
        if keep_duplicate_keys:
            return json.loads(text, object_pairs_hook=_pairs_hook)
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise LogprobFormatError("", f"{what} is not valid JSON ({e}): {_preview(text)}") from None
    except RecursionError:
        raise LogprobFormatError("", f"{what} nests too deeply to be a response: {_preview(text)}") from None


def _preview(text: str, n: int = 120) -> str:
    return repr(text[:n]) + (f" ... ({len(text)} characters)" if len(text) > n else "")


def parse_sse(text: str, *, keep_duplicate_keys: bool = True) -> list:
    """The JSON payloads of server-sent events (``data: {...}`` lines), without ``[DONE]``."""
    events, data = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line.strip():
            if data:
                payload = "\n".join(data).strip()
                data = []
                if payload and payload != "[DONE]":
                    events.append(loads(payload, f"server-sent event {len(events)}",
                                        keep_duplicate_keys=keep_duplicate_keys))
        # "event:", "id:", "retry:" and ":" comment lines carry nothing we need
    return events


def parse_ndjson(text: str, *, keep_duplicate_keys: bool = True) -> list:
    """One JSON value per non-empty line (Ollama's streams)."""
    out = []
    for number, line in enumerate(text.splitlines()):
        if line.strip():
            out.append(loads(line, f"line {number + 1} of the NDJSON stream", keep_duplicate_keys=keep_duplicate_keys))
    return out


def looks_like(text: str) -> str:
    """What a text seems to be, for error messages."""
    if text.startswith("data:"):
        return "server-sent events"
    if "\n" not in text and "\r" not in text:
        return "JSON"  # one line: no events, no NDJSON (and splitting a long response into lines copies it)
    if "\ndata:" in text:
        return "server-sent events"
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1 and all(line.lstrip().startswith("{") for line in lines):
        return "NDJSON"
    return "JSON"


def to_plain(obj, who: str = "read", *, keep_duplicate_keys: bool = True):
    """dicts/lists/scalars from SDK objects (pydantic), iterators (streams), JSON, SSE or NDJSON text.

    ``keep_duplicate_keys=False`` parses JSON text with plain ``json.loads`` (about half the
    time): a reader that finds signs of collided keys parses the text again keeping them.
    """
    if isinstance(obj, (bytes, bytearray, memoryview)):
        try:
            obj = bytes(obj).decode("utf-8")
        except UnicodeDecodeError as e:
            raise LogprobFormatError("", f"{who} got bytes that are not UTF-8 text ({e})") from None
    if isinstance(obj, str):
        text = obj.strip()
        if not text:
            raise LogprobFormatError("", f"{who} got an empty string: expected a response as JSON or stream text")
        kind = looks_like(text)
        if kind == "server-sent events":
            return parse_sse(text, keep_duplicate_keys=keep_duplicate_keys)
        if kind == "NDJSON":
            try:
                return json.loads(text)  # pretty-printed JSON also has lines starting with "{"
            except (json.JSONDecodeError, RecursionError):
                return parse_ndjson(text, keep_duplicate_keys=keep_duplicate_keys)
        if text[0] not in "[{":
            raise LogprobFormatError(
                "", f"{who} got a string that is neither JSON nor server-sent events nor NDJSON: {_preview(text)}")
        return loads(text, keep_duplicate_keys=keep_duplicate_keys)
    return _tree(obj)


def _tree(obj, depth: int = 0):
    if obj is None or isinstance(obj, (str, int, float, bool, DupKeys)):
        return obj  # a DupKeys comes from our own JSON parsing: plain already, and its pairs must survive
    if depth > 200:
        raise LogprobFormatError("", "the object nests too deeply to be a response")
    if isinstance(obj, dict):
        return {k: _tree(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_tree(x, depth + 1) for x in obj]
    if hasattr(obj, "model_dump"):  # openai / google-genai SDK objects (pydantic v2); extra fields are kept
        return _tree(obj.model_dump(), depth + 1)
    if hasattr(obj, "to_dict_recursive"):  # openai < 1.0
        return _tree(obj.to_dict_recursive(), depth + 1)
    if hasattr(obj, "__iter__"):  # a stream of chunks
        return [to_plain(x) for x in obj]
    return obj
