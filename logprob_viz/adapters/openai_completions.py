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

from operator import itemgetter

from .errors import LOGPROB_SLACK, NEG_INF_SENTINEL, LogprobFormatError, describe, expect_list, logprob_at
from .form import Alternative, Token, same_logprob
from .inputs import DupKeys

__all__ = ["completions_tokens"]

_by_logprob = itemgetter(1)


def completions_tokens(lp: dict, path: str, k: int | None) -> tuple[list[Token], int]:
    """The positions of a Completions ``logprobs`` object, and K (inferred when not given)."""
    tokens = expect_list(lp.get("tokens") or [], f"{path}.tokens")
    n = len(tokens)
    logprobs = lp.get("token_logprobs")
    logprobs = [None] * n if logprobs is None else expect_list(logprobs, f"{path}.token_logprobs")
    tops = lp.get("top_logprobs")
    tops = [None] * n if tops is None else expect_list(tops, f"{path}.top_logprobs")
    if not (n == len(logprobs) == len(tops)):
        raise LogprobFormatError(path, f"has {n} tokens, {len(logprobs)} token_logprobs and {len(tops)} "
                                       "top_logprobs; they must match (was the response cut?)")
    out: list[Token] = []
    rows: list[list | None] = []
    for i in range(n):
        raw = tokens[i]
        if raw is not None and type(raw) is not str:
            raise LogprobFormatError(f"{path}.tokens[{i}]", f"expected a token string, got {describe(raw)}")
        tok = Token(raw, logprob=logprob_at(logprobs[i], f"{path}.token_logprobs[{i}]"))
        top = tops[i]
        pairs = None
        if top is not None:
            if type(top) is DupKeys:
                pairs = _checked(top.pairs, f"{path}.top_logprobs[{i}]")
                pairs = list(dict.fromkeys(pairs))  # the same (key, value) written twice is one entry
                tok.flags.append("collided")
            elif isinstance(top, dict):
                pairs = _checked(list(top.items()), f"{path}.top_logprobs[{i}]")
            else:
                raise LogprobFormatError(f"{path}.top_logprobs[{i}]",
                                         f"expected an object of token -> logprob, got {describe(top)}")
        out.append(tok)
        rows.append(pairs)
    if k is None:
        k = _infer_k(out, rows)
    for tok, pairs in zip(out, rows, strict=True):
        if pairs is not None:
            _alternatives(tok, pairs, k)
    return out, k


def _checked(pairs: list, path: str) -> list:
    """The (key, logprob) pairs with every value checked; -9999 becomes -inf."""
    for j, (key, value) in enumerate(pairs):
        if not (type(value) is float and NEG_INF_SENTINEL < value <= LOGPROB_SLACK):  # the common case, fast
            pairs[j] = (key, logprob_at(value, f"{path}[{key!r}]", optional=False))
    return pairs


def _is_chosen(tok: Token, key, value: float) -> bool:
    return key == tok.raw and same_logprob(value, tok.logprob)


def _infer_k(tokens: list[Token], rows: list) -> int:
    """K from objects that hold the top K plus the chosen token (K+1 entries when it is outside)."""
    inside, largest = 0, -1
    for tok, pairs in zip(tokens, rows, strict=True):
        if pairs is None:
            continue
        largest = max(largest, len(pairs))
        chosen = next((v for key, v in pairs if _is_chosen(tok, key, v)), None)
        if chosen is None:
            continue
        # the chosen token is not strictly the least likely entry: it is inside the top K
        if len(pairs) == 1 or any(v < chosen for key, v in pairs if not _is_chosen(tok, key, v)) \
                or all(_is_chosen(tok, key, v) for key, v in pairs):
            inside = max(inside, len(pairs))
    if inside:
        return inside
    if largest < 0:
        return 0
    return largest - 1 if largest > 1 else largest


def _alternatives(tok: Token, pairs: list, k: int) -> None:
    ranked = sorted(pairs, key=_by_logprob, reverse=True)  # stable: ties keep the server's order
    where = next((j for j, (key, v) in enumerate(ranked) if _is_chosen(tok, key, v)), -1)
    collided = "collided" in tok.flags
    if where < 0 and tok.logprob == tok.logprob and any(key == tok.raw for key, _ in ranked):
        collided = True  # the chosen token's key holds another token's logprob
    if len(pairs) < k:
        collided = True  # fewer than K distinct entries: keys collided on the server
    if collided and "collided" not in tok.flags:
        tok.flags.append("collided")
    if where >= 0:
        outside = where >= k or (len(ranked) > k and where == len(ranked) - 1)
        if not outside and not collided:
            tok.rank = where + 1
        if outside:
            del ranked[where]
    else:
        outside = not collided and len(ranked) >= k
    if outside:
        tok.flags.append("outside_top_k")
    tok.alternatives = [Alternative(key, v) for key, v in ranked[:k]]
