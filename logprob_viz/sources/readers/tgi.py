"""Hugging Face Text Generation Inference (TGI): ``/generate`` ``details`` and ``/generate_stream`` events.

``/generate`` with ``parameters: {details: true, decoder_input_details: true, top_n_tokens: K}``
answers ``{generated_text, details: {finish_reason, generated_tokens, seed, prefill: [{id, text,
logprob}], tokens: [{id, text, logprob, special}], top_tokens: [[{id, text, logprob, special}]],
best_of_sequences}}``; the first prefill token's logprob is null. ``/generate_stream`` sends one
SSE event per token: ``{index, token, top_tokens, generated_text, details}`` (the text and the
details on the last event only). Schema: TGI's ``docs/openapi.json`` (``GenerateResponse``,
``Details``, ``PrefillToken``, ``Token``, ``StreamResponse``).
"""

from __future__ import annotations

import math
from itertools import chain
from operator import itemgetter, methodcaller

import numpy as np

from ...records.trace import Trace
from .assemble import build_trace, server_meta
from .checks import expect_dict, expect_int, expect_list, expect_str
from .columns import Columns
from .errors import LogprobFormatError
from .position import Alternative, Token, rank_by_id
from .ranking import by_id, columns_of, int32_safe
from .values import LOGPROB_SLACK, NEG_INF_SENTINEL, logprob_at

__all__ = ["tgi_trace", "is_tgi", "is_tgi_stream"]

NAN = math.nan


def is_tgi(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("details"), dict) and "generated_text" in data


def is_tgi_stream(data) -> bool:
    return isinstance(data, list) and bool(data) and all(
        isinstance(e, dict) and "token" in e and "generated_text" in e for e in data)


def _token(entry, path: str, *, optional_logprob: bool = False) -> Token:
    if _plain(entry):
        return Token(entry.get("text"), None, entry["id"], entry["logprob"])
    entry = expect_dict(entry, path, "a token object (id, text, logprob)")
    return Token(expect_str(entry.get("text"), f"{path}.text", optional=True),
                 id=expect_int(entry.get("id"), f"{path}.id", optional=True),
                 logprob=logprob_at(entry.get("logprob"), f"{path}.logprob", optional=optional_logprob))


def _plain(entry) -> bool:
    """A well-formed token object (checked without building an error path)."""
    if type(entry) is not dict:
        return False
    value, text = entry.get("logprob"), entry.get("text")
    return type(entry.get("id")) is int and type(value) is float and NEG_INF_SENTINEL < value <= LOGPROB_SLACK \
        and (text is None or type(text) is str)


def _alternatives(row, path: str) -> list:
    if type(row) is list and all(map(_plain, row)):  # tuples in Alternative's field order
        return [(e.get("text"), e["logprob"], e["id"], None, 0, NAN) for e in row]
    out = []
    for j, entry in enumerate(expect_list(row, path)):
        tok = _token(entry, f"{path}[{j}]")
        out.append(Alternative(tok.raw, tok.logprob, id=tok.id))
    return out


_DICT, _LIST, _INT, _TEXT = {dict}, {list}, {int}, {str, type(None)}
_ID, _LOGPROB, _TEXT_OF = itemgetter("id"), methodcaller("get", "logprob"), methodcaller("get", "text")


def _fields(entries: list, *, optional_logprob: bool = False):
    """(texts, logprobs, ids) of token objects checked in bulk; None where any is unusual."""
    if not entries:
        return [], np.empty(0), []
    if _DICT != set(map(type, entries)):
        return None
    try:
        ids = list(map(_ID, entries))
    except KeyError:
        return None
    logprobs, texts = list(map(_LOGPROB, entries)), list(map(_TEXT_OF, entries))
    if optional_logprob and None in logprobs:  # an unscored special end token
        logprobs = [math.nan if v is None else v for v in logprobs]
    if {float} != set(map(type, logprobs)) or _INT != set(map(type, ids)) or not int32_safe(ids) \
            or not _TEXT >= set(map(type, texts)):
        return None
    values = np.array(logprobs)
    known = values[~np.isnan(values)]
    if not ((known > NEG_INF_SENTINEL).all() and (known <= LOGPROB_SLACK).all()):
        return None
    return texts, values, ids


def _fast_generated(details: dict, top_logprobs: int | None) -> tuple[Columns, int] | None:
    """The generated tokens and their top tokens ranked at once (`ranking.by_id`); None where anything is unusual."""
    tokens, tops = details.get("tokens"), details.get("top_tokens")
    if type(tokens) is not list or not tokens or type(tops) is not list or len(tops) != len(tokens) \
            or _LIST != set(map(type, tops)):
        return None
    head, flat = _fields(tokens, optional_logprob=True), _fields(list(chain.from_iterable(tops)))
    if head is None or flat is None:
        return None
    (texts, logprobs, ids), (alt_texts, alt_lp, alt_ids) = head, flat
    counts = np.fromiter(map(len, tops), np.int64, len(tops))
    k = top_logprobs if top_logprobs is not None else int(counts.max())
    alt_id_array = np.array(alt_ids, np.int64)
    ranks, outside, picked, kept = by_id(np.array(ids, np.int64), counts, alt_id_array, alt_lp, k)
    flags = dict.fromkeys(np.flatnonzero(outside).tolist(), ("outside_top_k",))
    return columns_of(texts, logprobs, ranks, flags, picked, kept, alt_texts, alt_lp, ids=ids,
                      alt_ids=alt_id_array), k


def _from_stream(events: list) -> dict:
    """Stream events as one ``/generate`` response."""
    tokens, tops, text, details = [], [], None, {}
    for n, event in enumerate(events):
        event = expect_dict(event, f"event {n}", "a /generate_stream event")
        tokens.append(event.get("token"))
        tops.append(event.get("top_tokens") or [])
        if event.get("generated_text") is not None:
            text = event["generated_text"]
        if isinstance(event.get("details"), dict):
            details = dict(event["details"])
    details.update(tokens=tokens, top_tokens=tops if any(tops) else None)
    return {"generated_text": text, "details": details, "stream_events": len(events)}


def _split_full_text(text, entries) -> tuple[str | None, bool]:
    """(the generated text alone, whether ``generated_text`` held the prompt before it).

    With ``return_full_text: true`` TGI puts the prompt before the generated text; that text
    never holds special tokens (an end token is in ``details.tokens`` but not in the text).
    """
    if not isinstance(text, str):
        return None, False
    shown = "".join(e["text"] for e in entries if type(e) is dict and not e.get("special")
                    and type(e.get("text")) is str)
    if shown and len(text) > len(shown) and text.endswith(shown):
        return text[len(text) - len(shown):], True
    return text, False


def tgi_trace(data, *, top_logprobs: int | None = None, table=None) -> Trace:
    """A trace from a ``/generate`` response with details (a dict) or ``/generate_stream`` events (a list)."""
    if isinstance(data, list):
        data = _from_stream(data)
    data = expect_dict(data, "", "a TGI /generate response")
    details = expect_dict(data.get("details"), "details", "an object (request details=true)")
    prefill = [_token(e, f"details.prefill[{i}]", optional_logprob=True)
               for i, e in enumerate(expect_list(details.get("prefill") or [], "details.prefill"))]
    # A generated token's logprob may be null: TGI writes null for a special end token it did not
    # score (its starcoder snapshot's "<|endoftext|>"); that token's logprob is unknown (NaN).
    fast = _fast_generated(details, top_logprobs)
    generated = fast[0] if fast is not None else [
        _token(e, f"details.tokens[{i}]", optional_logprob=True)
        for i, e in enumerate(expect_list(details.get("tokens") or [], "details.tokens"))]
    tops = details.get("top_tokens") if fast is None else None
    if tops is not None:
        tops = expect_list(tops, "details.top_tokens")
        if len(tops) != len(generated):
            raise LogprobFormatError("details.top_tokens", f"has {len(tops)} rows for {len(generated)} tokens")
        for i, (tok, row) in enumerate(zip(generated, tops, strict=True)):
            tok.alternatives = _alternatives(row or [], f"details.top_tokens[{i}]")
    k = fast[1] if fast is not None else top_logprobs if top_logprobs is not None else max(
        (len(t.alternatives) for t in generated), default=0)
    for tok in generated if fast is None else ():
        if tok.alternatives:
            rank_by_id(tok, k)
    text, full_text = _split_full_text(data.get("generated_text"), details.get("tokens") or [])
    best_of = details.get("best_of_sequences")
    meta = server_meta(
        "tgi", "tgi.generate_stream" if "stream_events" in data else "tgi.generate",
        text=text,
        full_text=True if full_text else None,  # generated_text held the prompt too (return_full_text)
        finish_reason=details.get("finish_reason"),
        seed=details.get("seed"),
        top_logprobs=k,
        stream_chunks=data.get("stream_events"),
        best_of_sequences=len(best_of) if isinstance(best_of, list) else None,
    )
    return build_trace([(prefill, "decoded"), (generated, "decoded")], prompt_len=len(prefill), meta=meta,
                       table=table)
