"""vLLM ``prompt_logprobs``: per prompt position null or an object keyed by token *id*.

Each value holds ``logprob``, ``rank`` and ``decoded_token``; the prompt's own token is the
first key (or the id in ``prompt_token_ids``), the others are the top K by rank. The first
position is null: nothing predicts the first token.
"""

from __future__ import annotations

import math

from .errors import (
    LOGPROB_SLACK,
    NEG_INF_SENTINEL,
    LogprobFormatError,
    describe,
    expect_dict,
    expect_int,
    expect_list,
    expect_str,
    logprob_at,
)
from .position import Token

NAN = math.nan


def _by_rank_then_logprob(a: tuple) -> tuple:
    return a[4], -a[1]

__all__ = ["prompt_tokens"]


def _key_id(key, path: str) -> int:
    try:
        return int(key)
    except (TypeError, ValueError):
        raise LogprobFormatError(path, f"expected token ids as keys, got {describe(key)}") from None


def prompt_tokens(prompt_logprobs: list, prompt_ids: list | None, path: str, k: int | None) -> tuple[list[Token], int]:
    """The prompt's positions from vLLM's ``prompt_logprobs``, and K (inferred from ranks when not given)."""
    prompt_logprobs = expect_list(prompt_logprobs, path)
    if prompt_ids is not None:
        prompt_ids = expect_list(prompt_ids, "prompt_token_ids")
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
