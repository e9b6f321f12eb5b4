"""OpenAI Chat Completions ``choices[i].logprobs.content[]``: ``token``, ``logprob``, ``bytes``, ``top_logprobs[]``.

The same entry shape is used by OpenAI's Responses API (``output_text.logprobs``), by Ollama,
and by llama.cpp's OpenAI routes (which add each token's ``id``, and use it for
``/v1/completions`` too), so `entry_tokens` reads any list of such entries.

OpenAI lists the top K, most likely first; the chosen token may be absent. vLLM lists the
chosen token first, then the most likely others, and cuts the list at K: when the chosen token
is the least likely listed, it is either the K-th or outside the top K, and then the K-th most
likely is missing (flagged ``alternatives_incomplete``).
"""

from __future__ import annotations

import math
from operator import itemgetter

from ...records.tokens import token_id_of
from .checks import expect_dict, expect_int, expect_list, expect_str
from .errors import LogprobFormatError, describe
from .position import Alternative, Token, rank_by_id, same_logprob
from .values import LOGPROB_SLACK, NEG_INF_SENTINEL, logprob_at

NAN = math.nan

__all__ = ["entry_tokens", "rank_alternatives", "bytes_at", "given_bytes"]

_by_logprob = itemgetter(1)


def bytes_at(value, path: str) -> bytes | None:
    """A ``bytes`` field (a list of ints 0..255) as bytes; None when absent."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise LogprobFormatError(path, f"expected a list of byte values, got {describe(value)}")
    try:
        return bytes(value)
    except (TypeError, ValueError):
        # OpenAI's transcription schema types its bytes as numbers: 72.0 is the byte 72
        if all(type(b) is float and b.is_integer() and 0 <= b <= 255 for b in value):
            return bytes(int(b) for b in value)
        bad = next((b for b in value if type(b) is not int or not 0 <= b <= 255), None)
        raise LogprobFormatError(path, f"expected byte values 0..255, found {describe(bad)}") from None


def given_bytes(value):
    """bytes from a list of byte values; False when it is not one (the checked path then says why)."""
    if value is None:
        return None
    if type(value) is list:
        try:
            return bytes(value)
        except (TypeError, ValueError):
            return False
    return False


def _entry_fast(entry, top_key: str) -> Token | None:
    """The common case without building error paths: None when anything is unusual."""
    if type(entry) is not dict:
        return None
    token, value, given = entry.get("token"), entry.get("logprob"), given_bytes(entry.get("bytes"))
    token_id = entry.get("id", -1)  # llama.cpp adds the token's id
    if type(token) is not str or type(value) is not float or not NEG_INF_SENTINEL < value <= LOGPROB_SLACK \
            or given is False or type(token_id) is not int:
        return None
    alternatives = []
    tops = entry.get(top_key)
    if tops is not None:
        if type(tops) is not list:
            return None
        for alt in tops:
            if type(alt) is not dict:
                return None
            a_token, a_value, a_given = alt.get("token"), alt.get("logprob"), given_bytes(alt.get("bytes"))
            a_id = alt.get("id", -1)
            if type(a_token) is not str or type(a_value) is not float \
                    or not NEG_INF_SENTINEL < a_value <= LOGPROB_SLACK or a_given is False or type(a_id) is not int:
                return None
            alternatives.append((a_token, a_value, a_id, a_given, 0, NAN))
    return Token(token, given, token_id, value, 0, alternatives)


def _entry(entry, path: str, top_key: str) -> Token:
    fast = _entry_fast(entry, top_key)
    if fast is not None:
        return fast
    entry = expect_dict(entry, path, "a token object (token, logprob, bytes, top_logprobs)")
    tok = Token(expect_str(entry.get("token"), f"{path}.token", optional=True),
                given=bytes_at(entry.get("bytes"), f"{path}.bytes"),
                id=expect_int(entry.get("id"), f"{path}.id", optional=True),
                logprob=logprob_at(entry.get("logprob"), f"{path}.logprob"))
    tops = entry.get(top_key)
    if tops is not None:
        alternatives = []
        for j, alt in enumerate(expect_list(tops, f"{path}.{top_key}")):
            where = f"{path}.{top_key}[{j}]"
            alt = expect_dict(alt, where, "an object (token, logprob, bytes)")
            alternatives.append(Alternative(
                expect_str(alt.get("token"), f"{where}.token", optional=True),
                logprob_at(alt.get("logprob"), f"{where}.logprob", optional=False),
                id=expect_int(alt.get("id"), f"{where}.id", optional=True),
                given=bytes_at(alt.get("bytes"), f"{where}.bytes"),
            ))
        tok.alternatives = alternatives
    return tok


def entry_tokens(content: list, path: str, k: int | None, *, chosen_first: bool,
                 top_key: str = "top_logprobs") -> tuple[list[Token], int]:
    """Positions from a list of ``{token, logprob, bytes, top_logprobs: [...]}`` entries, and K."""
    content = expect_list(content, path)
    out = [_entry(entry, f"{path}[{i}]", top_key) for i, entry in enumerate(content)]
    if k is None:
        k = max((len(t.alternatives) for t in out), default=0)
    for tok in out:
        rank_alternatives(tok, k, chosen_first=chosen_first)
    return out, k


def rank_alternatives(tok: Token, k: int, *, chosen_first: bool) -> None:
    """Sort a position's alternatives, find the chosen token among them, set rank and flags."""
    given = tok.alternatives
    if tok.id >= 0 and given and all(a[2] >= 0 for a in given):  # ids on every entry (llama.cpp)
        same = next((a for a in given if a[2] == tok.id), None)
        if same is not None and tok.given and same[3] and len(tok.given) > len(same[3]) \
                and tok.given.endswith(same[3]):
            # llama.cpp's OpenAI routes give a split character one entry with all its bytes, the
            # last piece's id, logprob and alternatives (seen in tests/fixtures/llamacpp/v1_chat_emoji_split)
            tok.flag("pieces_merged")
        rank_by_id(tok, k)
        return
    listed_first = chosen_first or any(given[j][1] < given[j + 1][1] for j in range(len(given) - 1))
    ranked = sorted(given, key=_by_logprob, reverse=True)
    where = next((j for j, a in enumerate(ranked) if _same_entry(a, tok)), -1)
    if where < 0:
        if ranked and len(ranked) >= k:
            tok.flag("outside_top_k")
    elif len(given) > k:
        # more entries than K (the runner asks vLLM for K+1): the top K are all there
        if where < k:
            tok.rank = where + 1
        else:
            tok.flag("outside_top_k")
            del ranked[where]
    elif not listed_first or where < len(ranked) - 1:
        tok.rank = where + 1  # every more likely token is listed
    else:
        tok.flag("alternatives_incomplete")
    tok.alternatives = ranked[:k]


def _same_entry(a: tuple, tok: Token) -> bool:
    """Whether a listed alternative is the chosen token itself (same string, logprob and bytes)."""
    raw, logprob, _, given = a[:4]
    if raw != tok.raw or not same_logprob(logprob, tok.logprob):
        return False
    # vLLM gives a "token_id:N" chosen token its real bytes but the alternative the placeholder's
    return given is None or tok.given is None or given == tok.given or token_id_of(raw) >= 0


def delta_entries(events: list, delta_type: str, what: str) -> tuple[list, str]:
    """(entries, text) of a stream read from its deltas (events of type `delta_type`), in order."""
    entries, text = [], ""
    for n, event in enumerate(events):
        event = expect_dict(event, f"event {n}", what)
        if event.get("type") == delta_type:
            text += event.get("delta") if isinstance(event.get("delta"), str) else ""
            entries += expect_list(event.get("logprobs") or [], f"event {n}.logprobs")
    return entries, text


def entries_trace(entries: list, top_logprobs, meta: dict, *, table=None, none: tuple[str, str]):
    """The trace of a whole answer's ``{token, logprob, bytes, top_logprobs}`` entries (Ollama, the
    Responses API, transcriptions): no prompt, the entries' own texts. `none` is the
    (field, how to ask for logprobs) of the error when there are no entries; ``meta["top_logprobs"]``
    is filled in with the K read."""
    from .assemble import build_trace  # (assemble reads entries' tokens; imported when used)

    if not entries:
        raise LogprobFormatError(*none)
    tokens, k = entry_tokens(entries, "logprobs", top_logprobs, chosen_first=False)
    return build_trace([(tokens, "decoded")], prompt_len=0, meta={**meta, "top_logprobs": k}, table=table)
