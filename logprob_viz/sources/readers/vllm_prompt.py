"""vLLM ``prompt_logprobs``: per prompt position null or an object keyed by token *id*.

Each value holds ``logprob``, ``rank`` and ``decoded_token``; the prompt's own token is the
first key (or the id in ``prompt_token_ids``), the others are the top K by rank. The first
position is null: nothing predicts the first token.
"""

from __future__ import annotations

import math
from itertools import chain
from operator import itemgetter, methodcaller

import numpy as np

from .checks import expect_dict, expect_int, expect_list, expect_str
from .columns import Columns
from .errors import LogprobFormatError, describe
from .position import Token
from .ranking import INT32_MAX, int32_safe
from .values import LOGPROB_SLACK, NEG_INF_SENTINEL, logprob_at

NAN = math.nan


def _by_rank_then_logprob(a: tuple) -> tuple:
    return a[4], -a[1]

__all__ = ["prompt_tokens"]


def _key_id(key, path: str) -> int:
    try:
        return int(key)
    except (TypeError, ValueError):
        raise LogprobFormatError(path, f"expected token ids as keys, got {describe(key)}") from None


def _entry_items(entry, where: str) -> list[tuple]:
    """One position's entry as (token id, value, logprob, rank, decoded text) per token, every field checked."""
    entry = expect_dict(entry, where, "null or an object of token id -> {logprob, rank, decoded_token}")
    if not entry:
        raise LogprobFormatError(where, "is an empty object: expected at least the prompt token's own entry")
    items = []
    for key, value in entry.items():
        if type(value) is dict:  # the common case, checked without building error paths
            logprob, rank, text = value.get("logprob"), value.get("rank"), value.get("decoded_token")
            if type(logprob) is float and NEG_INF_SENTINEL < logprob <= LOGPROB_SLACK and type(rank) is int \
                    and (text is None or type(text) is str) and type(key) is str and key.isdigit():
                items.append((int(key), value, logprob, rank, text))
                continue
        at = f"{where}[{key!r}]"
        value = expect_dict(value, at, "an object (logprob, rank, decoded_token)")
        items.append((_key_id(key, where), value,
                      logprob_at(value.get("logprob"), f"{at}.logprob", optional=False),
                      expect_int(value.get("rank"), f"{at}.rank", optional=True, default=0),
                      expect_str(value.get("decoded_token"), f"{at}.decoded_token", optional=True)))
    return items


def prompt_tokens(prompt_logprobs: list, prompt_ids: list | None, path: str, k: int | None, *,
                  columns: bool = False) -> tuple[list[Token] | Columns, int]:
    """The prompt's positions from vLLM's ``prompt_logprobs``, and K (inferred from ranks when not given).

    ``columns``: a well-formed list may be read at once (`prompt_columns`) into `Columns`.
    """
    prompt_logprobs = expect_list(prompt_logprobs, path)
    if prompt_ids is not None:
        prompt_ids = expect_list(prompt_ids, "prompt_token_ids")
    fast = prompt_columns(prompt_logprobs, prompt_ids, k) if columns else None
    if fast is not None:
        return fast
    out: list[Token] = []
    rows: list[list | None] = []
    for pos, entry in enumerate(prompt_logprobs):
        where = f"{path}[{pos}]"
        pid = -1
        if prompt_ids is not None and pos < len(prompt_ids):
            pid = expect_int(prompt_ids[pos], f"prompt_token_ids[{pos}]")
        if entry is None:
            out.append(Token(None, id=pid))
            rows.append(None)
            continue
        items = _entry_items(entry, where)
        chosen_id = pid if pid >= 0 else items[0][0]
        tok = Token(None, id=chosen_id)
        chosen = next((item for item in items if item[0] == chosen_id), None)
        if chosen is not None:
            tok.raw, tok.logprob, tok.rank = chosen[4], chosen[2], max(chosen[3], 0)
        out.append(tok)
        rows.append(items)
    if k is None:  # alternatives have ranks 1..K; the chosen one has its own rank
        k = max((item[3] for tok, items in zip(out, rows, strict=True) if items
                 for item in items if item[0] != tok.id), default=0)
        if k == 0 and any(rows):
            k = 1 if any(tok.rank == 1 for tok in out) else 0
    for tok, items in zip(out, rows, strict=True):
        if items is None:
            continue
        # tuples in Alternative's field order: (raw, logprob, id, given, rank, processed)
        alternatives = [(text, lp, token_id, None, rank, NAN) for token_id, _, lp, rank, text in items if 0 < rank <= k]
        alternatives.sort(key=_by_rank_then_logprob)
        tok.alternatives = alternatives[:k]
        if tok.rank > k:
            tok.flag("outside_top_k")
    return out, k


_DICT_OR_NONE, _DICT, _FLOAT, _INT, _TEXT = {dict, type(None)}, {dict}, {float}, {int}, {str, type(None)}
_LOGPROB, _RANK, _TEXT_OF = itemgetter("logprob"), itemgetter("rank"), methodcaller("get", "decoded_token")


def _flat(rows: list):
    """(ids, logprobs, ranks, texts) of every row's entries, checked in bulk; None where any is unusual."""
    keys = list(chain.from_iterable(rows))
    values = list(chain.from_iterable(map(dict.values, rows)))
    if _DICT != set(map(type, values)) or not all(map(str.isdigit, keys)):
        return None
    try:
        logprobs, ranks = list(map(_LOGPROB, values)), list(map(_RANK, values))
        ids, rank_array = np.array(list(map(int, keys)), np.int64), np.array(ranks, np.int64)
    except (KeyError, ValueError, OverflowError, TypeError):  # (a missing rank: the general path's default)
        return None
    texts = list(map(_TEXT_OF, values))
    if _FLOAT != set(map(type, logprobs)) or _INT != set(map(type, ranks)) or not _TEXT >= set(map(type, texts)):
        return None
    if len(ids) and (ids.max() > INT32_MAX or rank_array.min() < -1 or rank_array.max() > INT32_MAX):
        return None  # (int32_safe, on the arrays: ids are digits, so never negative)
    values = np.array(logprobs)
    if not ((values > NEG_INF_SENTINEL).all() and (values <= LOGPROB_SLACK).all()):
        return None
    return ids, values, rank_array, texts


def prompt_columns(prompt_logprobs: list, prompt_ids: list | None, k: int | None) -> tuple[Columns, int] | None:
    """`prompt_tokens` over all positions at once, for a well-formed list; None otherwise."""
    n = len(prompt_logprobs)
    if not n or not _DICT_OR_NONE >= set(map(type, prompt_logprobs)) or (prompt_ids is not None and (
            _INT != set(map(type, prompt_ids)) or not int32_safe(prompt_ids))):
        return None
    rows = [row for row in prompt_logprobs if row is not None]
    counts = np.fromiter((0 if row is None else len(row) for row in prompt_logprobs), np.int64, n)
    flat = _flat(rows) if rows and counts[counts > 0].size == len(rows) else None
    if flat is None:
        return None  # (an empty object, a key that is not an id, a value out of range: the general path says so)
    ids, values, ranks, texts = flat
    width, at = int(counts.max()), np.arange(n)
    starts = np.cumsum(counts) - counts
    valid = np.arange(width)[None, :] < counts[:, None]
    index = np.where(valid, starts[:, None] + np.arange(width)[None, :], 0)  # [N, W] flat positions
    pid = np.full(n, -1, np.int64)
    if prompt_ids is not None:
        m = min(n, len(prompt_ids))
        pid[:m] = prompt_ids[:m]
    has = counts > 0
    chosen_id = np.where((pid >= 0) | ~has, pid, ids[index[:, 0]])
    match = valid & (ids[index] == chosen_id[:, None])
    found = match.any(1)
    mine = index[at, match.argmax(1)]
    chosen_rank = np.where(found, np.maximum(ranks[mine], 0), 0)
    if k is None:  # alternatives have ranks 1..K; the chosen one has its own rank
        others = valid & (ids[index] != chosen_id[:, None])
        k = int(ranks[index][others].max(initial=0))
        if k == 0:
            k = 1 if (chosen_rank == 1).any() else 0
    # alternatives: ranks 1..K, sorted by rank then most likely first (stable), the first K
    row_ranks = ranks[index]
    listed = valid & (row_ranks > 0) & (row_ranks <= k)
    order = np.lexsort((-values[index], np.where(listed, row_ranks, np.iinfo(np.int64).max)), axis=1)
    take = np.arange(width)[None, :] < np.minimum(listed.sum(1), k)[:, None]
    picked = np.take_along_axis(index, order, 1)[take]
    text_array = np.empty(len(texts), object)
    text_array[:] = texts
    raw = np.where(found, text_array[mine], None).tolist()
    flags = dict.fromkeys(np.flatnonzero(chosen_rank > k).tolist(), ("outside_top_k",))
    return Columns(raw, np.where(found, values[mine], np.nan), ids=chosen_id.tolist(), ranks=chosen_rank.tolist(),
                   flags=flags, counts=take.sum(1), alt_raw=text_array[picked].tolist(),
                   alt_lp=values[picked], alt_ids=ids[picked].tolist(), checked=True), k  # (int32_safe: _flat)
