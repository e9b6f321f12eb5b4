"""llama.cpp server's native ``/completion`` with ``n_probs``: ``completion_probabilities[]``.

Shapes (llama.cpp ``tools/server/server-task.cpp``, ``completion_token_output::to_json`` and
``probs_vector_to_json``):

- default: ``{id, token, bytes, logprob, top_logprobs: [{id, token, bytes, logprob}]}``; the
  model's distribution before the samplers. ``token`` is cut to whole UTF-8 characters,
  ``bytes`` are exact (they win). A zero probability is written as the lowest float (-inf here).
- ``post_sampling_probs: true``: ``{id, token, bytes, prob, top_probs: [...]}``: probabilities
  *after* the samplers (top-k, top-p, temperature...), possibly fewer than ``n_probs``. They are
  kept as the trace's processed distribution (``processed_logprobs``), not as the model's,
  whose logprobs stay unknown (NaN).
- streamed: one SSE event per token, each with its ``completion_probabilities``; merged here.
- older servers: ``{content, probs: [{tok_str, prob}]}``: probabilities given the sampling
  settings, read as processed like ``post_sampling_probs``.

The OpenAI-compatible endpoints (``/v1/completions``, ``/v1/chat/completions``) are read by
`openai.from_openai`.
"""

from __future__ import annotations

import math
from typing import Any

from ...records.trace import Trace
from .assemble import build_trace, server_meta, str_or_none
from .checks import expect_dict, expect_int, expect_list, expect_str
from .entries import bytes_at, given_bytes
from .errors import LogprobFormatError, describe
from .numbers import numbers_tag
from .position import Alternative, Token, rank_by_id
from .values import LOGPROB_SLACK, NEG_INF_SENTINEL, logprob_at, prob_at

__all__ = ["llamacpp_trace", "is_llamacpp"]

NAN = math.nan


def is_llamacpp(data) -> bool:
    return isinstance(data, dict) and "completion_probabilities" in data


def _value(entry: dict, path: str) -> tuple[float, float]:
    """(model logprob, processed logprob) of one entry; one of them is NaN."""
    if "logprob" in entry:
        return logprob_at(entry["logprob"], f"{path}.logprob", optional=False), NAN
    if "prob" in entry:
        return NAN, prob_at(entry["prob"], f"{path}.prob")
    raise LogprobFormatError(path, f"expected 'logprob' or 'prob', got {describe(entry)}")


def _alternative(entry, path: str) -> Alternative:
    entry = expect_dict(entry, path, "an object (id, token, bytes, logprob or prob)")
    if "tok_str" in entry:  # the older shape
        return Alternative(expect_str(entry.get("tok_str"), f"{path}.tok_str"), NAN,
                           processed=prob_at(entry.get("prob"), f"{path}.prob"))
    model, processed = _value(entry, path)
    return Alternative(expect_str(entry.get("token"), f"{path}.token", optional=True), model,
                       id=expect_int(entry.get("id"), f"{path}.id", optional=True),
                       given=bytes_at(entry.get("bytes"), f"{path}.bytes"), processed=processed)


def _plain(entry):
    """(id, token, logprob, bytes) of an entry or alternative in the common shape (an int id, a str
    token, a float model logprob, bytes absent or a list of ints); None when anything is unusual."""
    if type(entry) is not dict:
        return None
    token_id, token, value = entry.get("id"), entry.get("token"), entry.get("logprob")
    given = given_bytes(entry.get("bytes"))
    if type(token_id) is not int or type(token) is not str or type(value) is not float \
            or not NEG_INF_SENTINEL < value <= LOGPROB_SLACK or given is False:
        return None
    return token_id, token, value, given


def _position_fast(entry) -> Token | None:
    """The common case (model logprobs) without building error paths: None when anything is unusual."""
    chosen = _plain(entry)
    tops = entry.get("top_logprobs") if chosen is not None else None
    if type(tops) is not list:
        return None
    alternatives = []
    for alt in tops:
        plain = _plain(alt)
        if plain is None:
            return None
        a_id, a_token, a_value, a_given = plain
        alternatives.append((a_token, a_value, a_id, a_given, 0, NAN))
    token_id, token, value, given = chosen
    return Token(token, given, token_id, value, 0, alternatives)


def _position(entry, path: str) -> Token:
    fast = _position_fast(entry)
    if fast is not None:
        return fast
    entry = expect_dict(entry, path, "an object (id, token, bytes, logprob, top_logprobs)")
    if "probs" in entry and "content" in entry:  # older servers: {content, probs: [{tok_str, prob}]}
        tok = Token(expect_str(entry.get("content"), f"{path}.content"))
        tok.alternatives = [_alternative(a, f"{path}.probs[{j}]")
                            for j, a in enumerate(expect_list(entry.get("probs") or [], f"{path}.probs"))]
        tok.processed = next((a.processed for a in tok.alternatives if a.raw == tok.raw), NAN)
        return tok
    model, processed = _value(entry, path)
    tok = Token(expect_str(entry.get("token"), f"{path}.token", optional=True),
                given=bytes_at(entry.get("bytes"), f"{path}.bytes"),
                id=expect_int(entry.get("id"), f"{path}.id", optional=True), logprob=model, processed=processed)
    key = "top_logprobs" if "top_logprobs" in entry else "top_probs"
    tok.alternatives = [_alternative(a, f"{path}.{key}[{j}]")
                        for j, a in enumerate(expect_list(entry.get(key) or [], f"{path}.{key}"))]
    return tok


def merge_stream(chunks: list) -> dict:
    """Streamed ``/completion`` events merged into one response."""
    merged: dict[str, Any] = {"content": "", "completion_probabilities": []}
    for n, chunk in enumerate(chunks):
        chunk = expect_dict(chunk, f"chunk {n}", "a /completion stream event")
        content = expect_str(chunk.get("content"), f"chunk {n}.content", optional=True)
        merged["content"] += content or ""
        merged["completion_probabilities"] += expect_list(chunk.get("completion_probabilities") or [],
                                                          f"chunk {n}.completion_probabilities")
        for key, value in chunk.items():
            if key not in ("content", "completion_probabilities", "tokens") and value is not None:
                merged[key] = value
    merged["stream_chunks"] = len(chunks)
    return merged


def llamacpp_trace(data, *, top_logprobs: int | None = None, table=None) -> Trace:
    """A trace from a native ``/completion`` response (a dict) or its stream events (a list)."""
    if isinstance(data, list):
        data = merge_stream(data)
    data = expect_dict(data, "", "a llama.cpp /completion response")
    entries = expect_list(data.get("completion_probabilities"), "completion_probabilities",
                          "a list (request n_probs > 0 to get it)")
    tokens = [_position(e, f"completion_probabilities[{i}]") for i, e in enumerate(entries)]
    processed = any(t.processed == t.processed or any(a[5] == a[5] for a in t.alternatives)
                    for t in tokens)
    k = top_logprobs if top_logprobs is not None else max((len(t.alternatives) for t in tokens), default=0)
    for tok in tokens:
        if tok.id >= 0:
            rank_by_id(tok, k, processed=processed)
        else:  # the older shape has no ids: the chosen token is found by its string
            tok.alternatives = sorted(tok.alternatives, key=lambda a: a[5] if a[5] == a[5] else a[1], reverse=True)[:k]
    settings = data.get("generation_settings") if isinstance(data.get("generation_settings"), dict) else {}
    meta = server_meta(
        "llama.cpp", "llamacpp.completion",
        model=str_or_none(data.get("model")),
        text=str_or_none(data.get("content")),
        top_logprobs=k,
        stop_type=data.get("stop_type"),
        stream_chunks=data.get("stream_chunks"),
        probabilities="post_sampling" if processed else None,
        sampling={key: settings[key] for key in ("temperature", "top_k", "top_p", "min_p", "seed")
                  if key in settings} or None,
    )
    meta.update(numbers_tag("processed", "llama.cpp post_sampling_probs") if processed
                else numbers_tag("raw", "llama.cpp n_probs (the softmax of the logits)"))
    warnings = []
    if processed:
        warnings.append("the server gave probabilities after its samplers (post_sampling_probs, or an older "
                        "server's probs): they are the trace's processed distribution; the model's own logprobs "
                        "are unknown (NaN)")
    return build_trace([(tokens, "decoded")], prompt_len=0, meta=meta, table=table, warnings=warnings)
