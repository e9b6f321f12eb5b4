"""OpenAI Completions ``choices[i].logprobs``: ``tokens``, ``token_logprobs``, ``top_logprobs``.

``top_logprobs`` holds one object per position keyed by the token's *string*, with the top K
and the chosen token: K+1 entries when the chosen token is outside the top K (the trace keeps
the top K, rank 0, flagged ``outside_top_k``). vLLM lists the chosen token first, so entries
are sorted by logprob here. String keys collide (two ``""`` pieces of split characters): a key
repeated in the JSON text is kept (`inputs.DupKeys`); a collision the server already collapsed
is detected (the chosen token's key holds another value, or fewer than K entries) and flagged
``collided``.
"""

from __future__ import annotations

import math
from itertools import chain
from operator import itemgetter

import numpy as np

from .checks import expect_list
from .columns import Columns
from .errors import LogprobFormatError, describe
from .inputs import DupKeys
from .position import Token, same_logprob  # alternatives: plain tuples in form.Alternative's field order
from .ranking import first_match, kept_entries, sorted_rows
from .values import LOGPROB_SLACK, NEG_INF_SENTINEL, logprob_at

__all__ = ["completions_tokens"]

_by_logprob = itemgetter(1)
NAN = math.nan
_FLOATS = {float}


def completions_tokens(lp: dict, path: str, k: int | None) -> tuple[list[Token] | Columns, int]:
    """The positions of a Completions ``logprobs`` object, and K (inferred when not given).

    A well-formed body is read in one pass over all positions' items (`Columns`); anything
    unusual (a null, a number out of range, a repeated key, an empty object) takes the general
    path, position by position, which names the field that is wrong.
    """
    fast = _columns(lp, k)
    if fast is not None:
        return fast
    tokens, logprobs, tops = _position_lists(lp, path)
    n = len(tokens)
    out: list[Token] = []
    rows: list[tuple | None] = []  # per position: (entries most likely first, where the chosen one is)
    inside = 0  # the largest object whose chosen token is inside the top K (see _infer_k)
    largest = -1
    for i in range(n):
        raw = tokens[i]
        if raw is not None and type(raw) is not str:
            raise LogprobFormatError(f"{path}.tokens[{i}]", f"expected a token string, got {describe(raw)}")
        value = logprobs[i]
        if not (type(value) is float and NEG_INF_SENTINEL < value <= LOGPROB_SLACK):  # the common case, fast
            value = logprob_at(value, f"{path}.token_logprobs[{i}]")
        tok = Token(raw, None, -1, value)
        out.append(tok)
        top = tops[i]
        if top is None:
            rows.append(None)
            continue
        ranked = _ranked_entries(top, tok, f"{path}.top_logprobs[{i}]")
        where = -1
        for j, (key, v) in enumerate(ranked):
            if key == raw and (v == value or same_logprob(v, value)):
                where = j
                break
        rows.append((ranked, where))
        size = len(ranked)
        if size > largest:
            largest = size
        # the chosen token is not strictly the least likely entry: it is inside the top K
        if where >= 0 and size > inside and (size == 1 or (where < size - 1 and ranked[-1][1] < ranked[where][1])):
            inside = size
    if k is None:
        k = inside if inside else (0 if largest < 0 else largest - 1 if largest > 1 else largest)
    for tok, row in zip(out, rows, strict=True):
        if row is not None:
            _alternatives(tok, row[0], row[1], k)
    return out, k


def _position_lists(lp: dict, path: str) -> tuple[list, list, list]:
    """The ``tokens``, ``token_logprobs`` and ``top_logprobs`` lists (a missing one: nulls), of one length."""
    tokens = expect_list(lp.get("tokens") or [], f"{path}.tokens")
    n = len(tokens)
    logprobs = lp.get("token_logprobs")
    logprobs = [None] * n if logprobs is None else expect_list(logprobs, f"{path}.token_logprobs")
    tops = lp.get("top_logprobs")
    tops = [None] * n if tops is None else expect_list(tops, f"{path}.top_logprobs")
    if not (n == len(logprobs) == len(tops)):
        raise LogprobFormatError(path, f"has {n} tokens, {len(logprobs)} token_logprobs and {len(tops)} "
                                       "top_logprobs; they must match (was the response cut?)")
    return tokens, logprobs, tops


def _ranked_entries(top, tok: Token, path: str) -> list:
    """One position's ``top_logprobs`` object as (key, logprob) pairs, most likely first, every value checked
    (a key written twice flags `tok` "collided")."""
    if type(top) is dict:
        values = top.values()
        # all floats and no NaN (a NaN makes the sum NaN): then the sorted ends show the range
        plain = _FLOATS >= set(map(type, values)) and (total := sum(values)) == total
        ranked = sorted(top.items(), key=_by_logprob, reverse=True) if plain else None
        if ranked is None or (ranked and not (ranked[-1][1] > NEG_INF_SENTINEL and ranked[0][1] <= LOGPROB_SLACK)):
            ranked = sorted(_checked(list(top.items()), path), key=_by_logprob, reverse=True)
        return ranked
    if type(top) is DupKeys:
        pairs = list(dict.fromkeys(_checked(list(top.pairs), path)))
        tok.flag("collided")  # the same key written twice: two tokens' strings collided
        return sorted(pairs, key=_by_logprob, reverse=True)  # stable: ties keep the server's order
    if isinstance(top, dict):
        return sorted(_checked(list(top.items()), path), key=_by_logprob, reverse=True)
    raise LogprobFormatError(path, f"expected an object of token -> logprob, got {describe(top)}")


def _checked(pairs: list, path: str) -> list:
    """The (key, logprob) pairs with every value checked; -9999 becomes -inf."""
    for j, (key, value) in enumerate(pairs):
        if not (type(value) is float and NEG_INF_SENTINEL < value <= LOGPROB_SLACK):  # the common case, fast
            pairs[j] = (key, logprob_at(value, f"{path}[{key!r}]", optional=False))
    return pairs


def _alternatives(tok: Token, ranked: list, where: int, k: int) -> None:
    collided = "collided" in tok.flags
    if not collided and (len(ranked) < k or (where < 0 and tok.logprob == tok.logprob
                                             and any(key == tok.raw for key, _ in ranked))):
        # fewer than K distinct entries (keys collided on the server), or the chosen token's
        # key holds another token's logprob
        collided = True
        tok.flag("collided")
    if where >= 0:
        outside = where >= k or (len(ranked) > k and where == len(ranked) - 1)
        if not outside and not collided:
            tok.rank = where + 1
        if outside:
            ranked = ranked[:where] + ranked[where + 1:]
    else:
        outside = not collided and len(ranked) >= k
    if outside:
        tok.flag("outside_top_k")
    tok.alternatives = [(key, v, -1, None, 0, NAN) for key, v in ranked[:k]]


_STR, _DICT = {str}, {dict}


def _columns(lp: dict, k: int | None) -> tuple[Columns, int] | None:
    """The common case, checked in bulk: every token a string, every logprob a float in range,
    every position an object (not repeating a key) of float logprobs in range. None otherwise."""
    tokens, logprobs, tops = lp.get("tokens"), lp.get("token_logprobs"), lp.get("top_logprobs")
    if type(tokens) is not list or type(logprobs) is not list or type(tops) is not list:
        return None
    n = len(tokens)
    if not n or len(logprobs) != n or len(tops) != n or _STR != set(map(type, tokens)) \
            or _FLOATS != set(map(type, logprobs)) or _DICT != set(map(type, tops)):
        return None  # (a DupKeys is not exactly a dict: repeated keys take the general path)
    counts = np.fromiter(map(len, tops), np.int64, n)
    if counts.min() == 0:
        return None
    values = list(chain.from_iterable(map(dict.values, tops)))
    if _FLOATS != set(map(type, values)):
        return None
    chosen_lp, flat_lp = np.fromiter(logprobs, np.float64, n), np.fromiter(values, np.float64, len(values))
    for arr in (chosen_lp, flat_lp):  # NaN fails both comparisons; -9999 (-inf) takes the general path
        if not ((arr > NEG_INF_SENTINEL).all() and (arr <= LOGPROB_SLACK).all()):
            return None
    return _ranked(tokens, chosen_lp, list(chain.from_iterable(tops)), flat_lp, counts, k)


def _ranked(tokens: list, chosen_lp, keys: list, flat_lp, counts, k: int | None) -> tuple[Columns, int]:
    """The general path's ranking (`completions_tokens`, `_alternatives`), over all positions at once
    (`ranking.sorted_rows`: most likely first, stable); the chosen token is the first entry with its
    string and logprob. Strings are compared as ints (their number in `strings`), which the
    assembler reuses (`Columns.interned`)."""
    n = len(tokens)
    strings = list(dict.fromkeys(chain(keys, tokens)))
    code = dict(zip(strings, range(len(strings)), strict=True))
    chosen = np.fromiter(map(code.__getitem__, tokens), np.int64, n)
    key_codes = np.fromiter(map(code.__getitem__, keys), np.int64, len(keys))
    values, flat = sorted_rows(counts, flat_lp)
    width = flat.shape[1]
    same_key = (key_codes[flat] == chosen[:, None]) & (flat >= 0)
    lp = chosen_lp[:, None]
    found, where = first_match(same_key & ((values == lp) | (np.abs(values - lp) <= 1e-6 * np.maximum(1.0, -values))))
    at = np.arange(n)
    if k is None:  # the largest object whose chosen token is inside the top K (see _infer_k)
        inside = found & ((counts == 1) | ((where < counts - 1) & (values[at, counts - 1] < values[at, where])))
        k = int(counts[inside].max()) if inside.any() else (width - 1 if width > 1 else width)
    collided = (counts < k) | (~found & same_key.any(1))
    removed = found & ((where >= k) | ((counts > k) & (where == counts - 1)))
    outside = removed | (~found & ~collided & (counts >= k))
    ranks = np.where(found & ~removed & ~collided, where + 1, 0)
    picked, kept = kept_entries(flat, counts, where, removed, k)
    flags = dict.fromkeys(np.flatnonzero(outside & ~collided).tolist(), ("outside_top_k",))
    flags.update(dict.fromkeys(np.flatnonzero(collided & ~outside).tolist(), ("collided",)))
    flags.update(dict.fromkeys(np.flatnonzero(collided & outside).tolist(), ("collided", "outside_top_k")))
    return Columns(tokens, chosen_lp, ranks=ranks.tolist(), flags=flags, counts=kept, alt_lp=flat_lp[picked],
                   strings=strings, codes=chosen, alt_codes=key_codes[picked], checked=True), k  # (no ids given)
