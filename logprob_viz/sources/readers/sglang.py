"""SGLang's native ``/generate`` with ``return_logprob: true``: ``meta_info`` triples.

``meta_info`` holds ``input_token_logprobs`` and ``output_token_logprobs`` as ``[logprob,
token_id, text]`` triples (text is null unless ``return_text_in_logprobs: true``; the first
input logprob is null), and with ``top_logprobs_num: K`` the ``input_top_logprobs`` /
``output_top_logprobs``: per position null or a list of such triples. Source:
sgl-project/sglang ``python/sglang/srt/managers/tokenizer_manager.py``
(``detokenize_logprob_tokens``, ``detokenize_top_logprobs_tokens``) and
``docs/references/sampling_params.md`` (the request fields). A token given only by its id is
written ``token_id:N`` (flagged ``no_text``); ``tokenizer=`` gives its text.
"""

from __future__ import annotations

import math
from itertools import chain

import numpy as np

from ...records.trace import Trace
from .assemble import build_trace, server_meta, str_or_none
from .checks import expect_dict, expect_int, expect_list, expect_str
from .columns import Columns
from .errors import LogprobFormatError, describe
from .position import Alternative, Token, rank_by_id
from .ranking import by_id, columns_of, int32_safe
from .values import LOGPROB_SLACK, NEG_INF_SENTINEL, logprob_at

__all__ = ["sglang_trace", "is_sglang"]


_LIST, _FLOAT, _INT, _TEXT = {list}, {float}, {int}, {str, type(None)}


def is_sglang(data) -> bool:
    return isinstance(data, dict) and isinstance(data.get("meta_info"), dict)


def _triple(value, path: str, *, optional_logprob: bool = False) -> tuple[float, int, str]:
    if type(value) is list and len(value) == 3:  # the common case, checked without building error paths
        logprob, token_id, text = value
        if type(logprob) is float and NEG_INF_SENTINEL < logprob <= LOGPROB_SLACK and type(token_id) is int:
            if type(text) is str:
                return logprob, token_id, text
            if text is None:
                return logprob, token_id, f"token_id:{token_id}"
    if not isinstance(value, list) or len(value) < 2:
        raise LogprobFormatError(path, f"expected a [logprob, token_id, text] triple, got {describe(value)}")
    logprob = logprob_at(value[0], f"{path}[0]", optional=optional_logprob)
    token_id = expect_int(value[1], f"{path}[1]")
    text = expect_str(value[2] if len(value) > 2 else None, f"{path}[2]", optional=True)
    return logprob, token_id, text if text is not None else f"token_id:{token_id}"


def _section(meta_info: dict, part: str) -> list[Token]:
    chosen_key, top_key = f"{part}_token_logprobs", f"{part}_top_logprobs"
    rows = expect_list(meta_info.get(chosen_key) or [], f"meta_info.{chosen_key}")
    tops = meta_info.get(top_key)
    tops = None if tops is None else expect_list(tops, f"meta_info.{top_key}")
    if tops is not None and len(tops) != len(rows):
        raise LogprobFormatError(f"meta_info.{top_key}", f"has {len(tops)} rows for {len(rows)} tokens")
    out = []
    for i, value in enumerate(rows):
        logprob, token_id, text = _triple(value, f"meta_info.{chosen_key}[{i}]", optional_logprob=part == "input")
        tok = Token(text, id=token_id, logprob=logprob)
        if tops is not None and tops[i] is not None:
            alternatives = []
            for j, alt in enumerate(expect_list(tops[i], f"meta_info.{top_key}[{i}]")):
                a_logprob, a_id, a_text = _triple(alt, f"meta_info.{top_key}[{i}][{j}]")
                alternatives.append(Alternative(a_text, a_logprob, id=a_id))
            tok.alternatives = alternatives
        out.append(tok)
    return out


def _triples(rows: list, *, optional_logprob: bool = False):
    """[logprob, token_id, text] triples checked in bulk: (texts, logprobs, ids), or None where any
    is unusual (the general path then names it)."""
    if not rows:
        return [], np.empty(0), []
    if _LIST != set(map(type, rows)) or {3} != set(map(len, rows)):
        return None
    logprobs, ids, texts = map(list, zip(*rows, strict=True))
    if optional_logprob and None in logprobs:  # the first prompt token's logprob is null
        logprobs = [math.nan if v is None else v for v in logprobs]
    values = np.array(logprobs) if _FLOAT >= set(map(type, logprobs)) else None
    known = values[~np.isnan(values)] if optional_logprob and values is not None else values
    if known is None or not ((known > NEG_INF_SENTINEL).all() and (known <= LOGPROB_SLACK).all()) \
            or _INT != set(map(type, ids)) or not int32_safe(ids) or not _TEXT >= set(map(type, texts)):
        return None
    if None in texts:
        texts = [f"token_id:{i}" if t is None else t for t, i in zip(texts, ids, strict=True)]
    return texts, values, ids


def _fast_section(meta_info: dict, part: str):
    """(chosen triples, alternatives' counts, flat alternatives' triples) of a well-formed section, or None."""
    rows, tops = meta_info.get(f"{part}_token_logprobs") or [], meta_info.get(f"{part}_top_logprobs")
    if type(rows) is not list or (tops is not None and (type(tops) is not list or len(tops) != len(rows))):
        return None
    chosen = _triples(rows, optional_logprob=part == "input")
    if chosen is None or (tops and _LIST != set(map(type, tops))):
        return None
    counts = np.fromiter(map(len, tops), np.int64, len(rows)) if tops else np.zeros(len(rows), np.int64)
    flat = _triples(list(chain.from_iterable(tops))) if tops else ([], np.empty(0), [])
    return None if flat is None else (chosen, counts, flat)


def _ranked(section, k: int) -> Columns:
    (texts, logprobs, ids), counts, (alt_texts, alt_lp, alt_ids) = section
    ranks, outside, picked, kept = by_id(np.array(ids, np.int64), counts, np.array(alt_ids, np.int64), alt_lp, k)
    flags = dict.fromkeys(np.flatnonzero(outside).tolist(), ("outside_top_k",))
    return columns_of(texts, logprobs, ranks, flags, picked, kept, alt_texts, alt_lp, ids=ids,
                      alt_ids=np.array(alt_ids, np.int64))


def _sections(meta_info: dict, top_logprobs: int | None) -> tuple[list, list, int]:
    """The prompt and generated sections, ranked, and K."""
    fast = [_fast_section(meta_info, part) for part in ("input", "output")]
    if all(f is not None for f in fast):
        k = top_logprobs if top_logprobs is not None else max(int(f[1].max(initial=0)) for f in fast)
        if len(fast[0][0][0]) + len(fast[1][0][0]):
            return _ranked(fast[0], k), _ranked(fast[1], k), k
    prompt = _section(meta_info, "input")
    generated = _section(meta_info, "output")
    k = top_logprobs if top_logprobs is not None else max((len(t.alternatives) for t in prompt + generated),
                                                          default=0)
    for tok in prompt + generated:
        if tok.alternatives:
            rank_by_id(tok, k)
    return prompt, generated, k


def sglang_trace(data: dict, *, top_logprobs: int | None = None, table=None, index: int = 0) -> Trace:
    """A trace from one ``/generate`` answer (``{text, meta_info}``)."""
    data = expect_dict(data, "", "an SGLang /generate answer")
    meta_info = expect_dict(data.get("meta_info"), "meta_info")
    prompt, generated, k = _sections(meta_info, top_logprobs)
    if not len(prompt) and not len(generated):
        raise LogprobFormatError("meta_info", "has no token logprobs: request them with return_logprob=true "
                                              "(and top_logprobs_num=K for alternatives)")
    finish = meta_info.get("finish_reason")
    meta = server_meta(
        "sglang", "sglang.generate",
        id=str_or_none(meta_info.get("id")),
        text=str_or_none(data.get("text")),
        finish_reason=finish.get("type") if isinstance(finish, dict) else finish,
        top_logprobs=k,
        choice=index,
    )
    return build_trace([(prompt, "decoded"), (generated, "decoded")], prompt_len=len(prompt), meta=meta, table=table)
