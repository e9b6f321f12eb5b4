"""Google Gemini ``generateContent`` with ``responseLogprobs: true`` (and ``logprobs: K``).

Each candidate carries ``logprobsResult: {chosenCandidates: [{token, tokenId, logProbability}],
topCandidates: [{candidates: [...]}]}`` (one entry per generated token) and ``avgLogprobs``.
Sources: the Gemini API reference (https://ai.google.dev/api/generate-content, ``LogprobsResult``,
``Candidate``) and Vertex AI's ``GenerateContentResponse``; the google-genai SDK's
``model_dump()`` writes the same fields in snake_case (``logprobs_result``, ``chosen_candidates``,
``log_probability``, ``token_id``), read too. Stream chunks are merged per candidate.
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
from .entries import rank_alternatives
from .errors import LogprobFormatError
from .position import Token, rank_by_id
from .ranking import by_entry, by_id, columns_of, int32_safe
from .values import LOGPROB_SLACK, NEG_INF_SENTINEL, logprob_at

__all__ = ["gemini_traces", "is_gemini"]

NAN = math.nan  # alternatives: tuples in form.Alternative's field order


def _get(d: dict, camel: str, snake: str):
    return d[camel] if camel in d else d.get(snake)


def is_gemini(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("candidates"), list)


def _candidate(entry, path: str) -> tuple[str | None, float, int]:
    if type(entry) is dict:  # the common case, checked without building error paths
        token, value = entry.get("token"), _get(entry, "logProbability", "log_probability")
        token_id = _get(entry, "tokenId", "token_id")
        if type(token) is str and type(value) is float and NEG_INF_SENTINEL < value <= LOGPROB_SLACK \
                and (token_id is None or type(token_id) is int):
            return token, value, -1 if token_id is None else token_id
    entry = expect_dict(entry, path, "an object (token, tokenId, logProbability)")
    return (expect_str(entry.get("token"), f"{path}.token", optional=True),
            logprob_at(_get(entry, "logProbability", "log_probability"), f"{path}.logProbability", optional=False),
            expect_int(_get(entry, "tokenId", "token_id"), f"{path}.tokenId", optional=True))


_DICT, _LIST, _FLOAT, _STR, _INT, _NONE = {dict}, {list}, {float}, {str}, {int}, {type(None)}
_TOKEN, _LOGPROB, _ID = itemgetter("token"), itemgetter("logProbability"), methodcaller("get", "tokenId")


def _entries(entries: list):
    """(tokens, logprobs, ids or None) of camelCase candidates checked in bulk; None where any is unusual."""
    if not entries:
        return [], np.empty(0), None
    if _DICT != set(map(type, entries)):
        return None
    try:
        tokens, values = list(map(_TOKEN, entries)), list(map(_LOGPROB, entries))
    except KeyError:  # snake_case (an SDK's model_dump) or a missing field: the general path
        return None
    ids = list(map(_ID, entries))
    id_types = set(map(type, ids))
    if _STR != set(map(type, tokens)) or _FLOAT != set(map(type, values)) or not (
            id_types == _NONE or (id_types == _INT and int32_safe(ids))):
        return None
    logprobs = np.array(values)
    if not ((logprobs > NEG_INF_SENTINEL).all() and (logprobs <= LOGPROB_SLACK).all()):
        return None
    return tokens, logprobs, None if id_types == _NONE else ids


def _fast(chosen: list, tops: list | None, top_logprobs: int | None) -> tuple[Columns, int] | None:
    """The candidate's positions ranked at once (`ranking`), or None where anything is unusual."""
    head = _entries(chosen)
    if head is None or not chosen or tops is None or _DICT != set(map(type, tops)):
        return None
    rows = list(map(methodcaller("get", "candidates"), tops))
    if _LIST != set(map(type, rows)):
        return None
    flat = _entries(list(chain.from_iterable(rows)))
    if flat is None or (head[2] is None) != (flat[2] is None):
        return None
    (texts, logprobs, ids), (alt_texts, alt_lp, alt_ids) = head, flat
    counts = np.fromiter(map(len, rows), np.int64, len(rows))
    k = top_logprobs if top_logprobs is not None else int(counts.max())
    if ids is not None:
        ranks, outside, picked, kept = by_id(np.array(ids), counts, np.array(alt_ids), alt_lp, k)
        incomplete = np.zeros(len(counts), bool)
    else:
        strings = list(dict.fromkeys(chain(texts, alt_texts)))
        code = dict(zip(strings, range(len(strings)), strict=True))
        codes = np.fromiter(map(code.__getitem__, texts), np.int64, len(texts))
        alt_codes = np.fromiter(map(code.__getitem__, alt_texts), np.int64, len(alt_texts))
        ranks, outside, incomplete, picked, kept = by_entry(codes, logprobs, counts, alt_codes, alt_lp, k,
                                                            chosen_first=False)
    flags = dict.fromkeys(np.flatnonzero(outside).tolist(), ("outside_top_k",))
    flags.update(dict.fromkeys(np.flatnonzero(incomplete).tolist(), ("alternatives_incomplete",)))
    return columns_of(texts, logprobs, ranks, flags, picked, kept, alt_texts, alt_lp, ids=ids,
                      alt_ids=None if alt_ids is None else np.array(alt_ids),
                      coded=None if ids is not None else (strings, codes, alt_codes)), k


def _trace(candidate: dict, path: str, top_logprobs, table, response: dict, chunks: int | None) -> Trace:
    result = _get(candidate, "logprobsResult", "logprobs_result")
    if result is None:
        # Gemini writes avgLogprobs (one mean over the candidate) even when no token logprobs were asked for
        only_mean = _get(candidate, "avgLogprobs", "avg_logprobs") is not None
        raise LogprobFormatError(f"{path}.logprobsResult", (
            "missing: this candidate has only avgLogprobs (one mean over all its tokens), no per-token logprobs"
            if only_mean else "missing")
            + "; request them with generationConfig.responseLogprobs=true (and logprobs=K)")
    result = expect_dict(result, f"{path}.logprobsResult")
    chosen = expect_list(_get(result, "chosenCandidates", "chosen_candidates") or [], f"{path}.chosenCandidates")
    tops = _get(result, "topCandidates", "top_candidates")
    tops = None if tops is None else expect_list(tops, f"{path}.topCandidates") or None  # [] (merged stream): none
    if tops is not None and len(tops) != len(chosen):
        raise LogprobFormatError(f"{path}.topCandidates", f"has {len(tops)} rows for {len(chosen)} tokens")
    fast = _fast(chosen, tops, top_logprobs)
    tokens = [] if fast is None else fast[0]
    for i, entry in enumerate(chosen if fast is None else ()):
        raw, logprob, token_id = _candidate(entry, f"{path}.chosenCandidates[{i}]")
        tok = Token(raw, id=token_id, logprob=logprob)
        if tops is not None:
            row = expect_dict(tops[i], f"{path}.topCandidates[{i}]", "an object with candidates")
            tok.alternatives = [(*_candidate(a, f"{path}.topCandidates[{i}].candidates[{j}]"), None, 0, NAN)
                                for j, a in enumerate(expect_list(row.get("candidates") or [],
                                                                  f"{path}.topCandidates[{i}].candidates"))]
        tokens.append(tok)
    k = fast[1] if fast is not None else top_logprobs if top_logprobs is not None else max(
        (len(t.alternatives) for t in tokens), default=0)
    for tok in tokens if fast is None else ():
        if tok.alternatives:
            if tok.id >= 0:
                rank_by_id(tok, k)
            else:
                rank_alternatives(tok, k, chosen_first=False)
    content = candidate.get("content") if isinstance(candidate.get("content"), dict) else {}
    parts = content.get("parts") if isinstance(content.get("parts"), list) else []
    text = "".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
    meta = server_meta(
        "gemini", "gemini.generate_content",
        model=_get(response, "modelVersion", "model_version"),
        id=_get(response, "responseId", "response_id"),
        text=text,
        finish_reason=_get(candidate, "finishReason", "finish_reason"),
        choice=candidate.get("index", 0),
        top_logprobs=k,
        stream_chunks=chunks,
    )
    meta = {key: value for key, value in meta.items() if isinstance(value, (str, int)) or key == "text"}
    return build_trace([(tokens, "decoded")], prompt_len=0, meta=meta, table=table)


def _merge(chunks: list) -> dict:
    """Stream chunks merged per candidate: parts and logprobs results concatenated."""
    merged: dict[int, dict] = {}
    head: dict = {}
    for n, chunk in enumerate(chunks):
        chunk = expect_dict(chunk, f"chunk {n}", "a generateContent stream chunk")
        head.update({k: v for k, v in chunk.items() if k != "candidates"})
        for j, cand in enumerate(expect_list(chunk.get("candidates") or [], f"chunk {n}.candidates")):
            cand = expect_dict(cand, f"chunk {n}.candidates[{j}]", "a candidate")
            index = cand.get("index", 0) if type(cand.get("index", 0)) is int else 0
            m = merged.setdefault(index, {"index": index, "content": {"parts": []},
                                          "logprobsResult": {"chosenCandidates": [], "topCandidates": []}})
            content = cand.get("content") if isinstance(cand.get("content"), dict) else {}
            m["content"]["parts"] += content.get("parts") if isinstance(content.get("parts"), list) else []
            result = _get(cand, "logprobsResult", "logprobs_result")
            if isinstance(result, dict):
                m["logprobsResult"]["chosenCandidates"] += expect_list(
                    _get(result, "chosenCandidates", "chosen_candidates") or [], f"chunk {n}.chosenCandidates")
                m["logprobsResult"]["topCandidates"] += expect_list(
                    _get(result, "topCandidates", "top_candidates") or [], f"chunk {n}.topCandidates")
            for key in ("finishReason", "finish_reason"):
                if cand.get(key) is not None:
                    m["finishReason"] = cand[key]
    return {**head, "candidates": [merged[i] for i in sorted(merged)]}


def gemini_traces(data, *, top_logprobs: int | None = None, table=None) -> list[Trace]:
    """One trace per candidate, from a response (a dict) or its stream chunks (a list)."""
    chunks = len(data) if isinstance(data, list) else None
    if isinstance(data, list):
        data = _merge(data)
    data = expect_dict(data, "", "a generateContent response")
    candidates = expect_list(data.get("candidates"), "candidates")
    if not candidates:
        raise LogprobFormatError("candidates", "the response has no candidates")
    return [_trace(expect_dict(c, f"candidates[{i}]", "a candidate"), f"candidates[{i}]", top_logprobs, table,
                   data, chunks) for i, c in enumerate(candidates)]
