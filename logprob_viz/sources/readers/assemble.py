"""The one assembler: lists of `form.Token` -> a `Trace`, with flags (whose words `Trace.warnings` derives).

Every format's parser ends here. Token strings become exact bytes and readable text through
`logprob_viz.records.tokens` (the only module that decodes token bytes), once per distinct string:
a response repeats the same few thousand strings, so resolving is a dictionary lookup.
"""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import numpy as np

from ...records.fields import empty
from ...records.flags import order_flags
from ...records.tokens import byte_level_bytes, display_token, legacy_bytes, sentencepiece_bytes, token_id_of
from ...records.trace import Trace
from .errors import check_ids_and_ranks
from .position import LN_HALF, Token

__all__ = ["resolve", "build_trace", "strings_of"]


def resolve(raw: str | None, given: bytes | None, token_id: int, encoding: str, table: list | None):
    """(id, exact bytes or None, display text, flags) of one token string.

    ``given`` is a ``bytes`` field (it wins where it differs from the string: OpenAI gives the
    real bytes of a piece of a split character); ``table`` a tokenizer's byte table (it wins
    wherever the id is known).
    """
    flags: list[str] = []
    placeholder = token_id_of(raw)
    if placeholder >= 0 and token_id < 0:
        token_id = placeholder
    if table is not None and 0 <= token_id < len(table):
        data = table[token_id]
    elif placeholder >= 0:
        # vLLM's chat gives the chosen token's real bytes next to its placeholder; alternatives
        # carry the placeholder's own bytes, which say nothing.
        if given is not None and given != raw.encode("utf-8"):
            data = given
        else:
            data = None
            flags.append("no_text")
    elif raw is None:
        data = given
    elif given is not None and given != raw.encode("utf-8", "surrogatepass"):
        data = given  # real bytes beside a lossy string (OpenAI's split characters)
    elif (legacy := legacy_bytes(raw)) is not None:
        data = legacy  # OpenAI legacy "bytes:\xe2\x80"
    elif encoding == "byte_level":
        data = byte_level_bytes(raw)
        if data is None:
            data = raw.encode("utf-8", "surrogatepass")
    elif encoding == "sentencepiece":
        data = sentencepiece_bytes(raw)
    else:
        data = raw.encode("utf-8", "surrogatepass")  # a lone surrogate (JSON "\ud83e") keeps its bytes
    if data is not None and data == b"" and raw is not None:
        flags.append("no_bytes")
    if raw and "\ufffd" in raw and data is not None and b"\xef\xbf\xbd" in data:
        flags.append("replacement_char")
    if data is not None:
        text = display_token(data)
    elif raw is not None:
        text = raw
    else:
        text = ""
        flags.append("first_token_unknown")
    return token_id, data, text, tuple(flags)


def strings_of(tokens: list[Token]) -> list[str]:
    """Every distinct string of a section (chosen and alternatives), for `tokens.detect_encoding`."""
    out = dict.fromkeys(tok.raw for tok in tokens)
    out.update(dict.fromkeys(a[0] for tok in tokens for a in tok.alternatives))
    out.pop(None, None)
    return list(out)  # each distinct string once: what detect_encoding looks at is the set


def _resolved(keys, encoding: str, table: list | None) -> dict:
    """`resolve` once per distinct key: a response repeats the same strings.

    A key is the string alone (no bytes given, no table), or (string, bytes), or with a
    tokenizer's table (string, bytes, id): see `_key`.
    """
    memo = {}
    for key in dict.fromkeys(keys):
        if type(key) is tuple:
            raw, given, token_id = key if len(key) == 3 else (*key, -1)
        else:
            raw, given, token_id = key, None, -1
        memo[key] = resolve(raw, given, token_id, encoding, table)
    return memo


def build_trace(sections: list[tuple[list[Token], str]], *, prompt_len: int, meta: dict[str, Any],
                table: list | None = None, warnings: list[str] | None = None) -> Trace:
    """A `Trace` from sections of tokens, each with the string encoding its strings use.

    ``sections`` is e.g. ``[(prompt_tokens, "decoded"), (generated_tokens, "byte_level")]``;
    ``meta`` is copied (entries that are None dropped) and gets ``warnings``: the source's notes
    about the response as a whole (what each flag code means is derived by `Trace.warnings`).
    """
    texts: list[str] = []
    data_out: list[bytes] = []
    ids: list[int] = []
    flags: list[list[str]] = []
    top_tokens: list[list[str]] = []
    alt_ids: list[int] = []  # flat, row by row
    with_ids = table is not None  # ids matter for resolving only through a tokenizer's table
    ordered: dict[tuple, list[str]] = {}  # order_flags, once per distinct combination of codes
    for tokens, encoding in sections:
        flat = [a for t in tokens for a in t.alternatives]
        if with_ids:
            keys = [(t.raw, t.given, t.id) for t in tokens]
            alt_keys = [(a[0], a[3], a[2]) for a in flat]
        else:  # the string alone where no bytes were given: no tuple per token
            keys = [t.raw if t.given is None else (t.raw, t.given) for t in tokens]
            alt_keys = [a[0] if a[3] is None else (a[0], a[3]) for a in flat]
        memo = _resolved(keys + alt_keys, encoding, table)
        chosen = [memo[key] for key in keys]
        texts += [r[2] for r in chosen]
        data_out += [b"" if r[1] is None else r[1] for r in chosen]
        ids += [t.id if t.id >= 0 else r[0] for t, r in zip(tokens, chosen, strict=True)]
        for t, r in zip(tokens, chosen, strict=True):
            if t.flags or r[3]:
                combined = (*t.flags, *r[3])
                row = ordered.get(combined)
                if row is None:
                    row = ordered[combined] = order_flags(combined)
                flags.append(list(row))
            else:
                flags.append([])
        found = [memo[key] for key in alt_keys]
        alt_texts = [r[2] for r in found]
        alt_ids += [a[2] if a[2] >= 0 else r[0] for a, r in zip(flat, found, strict=True)]
        counts = [len(t.alternatives) for t in tokens]
        top_tokens += [alt_texts[end - count:end] for count, end in zip(counts, accumulate(counts), strict=True)]
    everything = [t for tokens, _ in sections for t in tokens]
    logprobs = [t.logprob for t in everything]
    ranks = [1 if (t.rank == 0 and t.logprob > LN_HALF) else t.rank for t in everything]  # p > 1/2: rank 1
    rows = [t.alternatives for t in everything]
    # not NaN: the source gave processed values (on the chosen token, or only on alternatives)
    processed = any(t.processed == t.processed for t in everything) or any(
        a[5] == a[5] for t in everything if t.alternatives for a in t.alternatives[:1])

    check_ids_and_ranks(ids, alt_ids, ranks)  # before the int32 arrays, which would overflow
    n = len(texts)
    k = max(map(len, rows), default=0)
    top_lp = empty("top_logprobs", n, k)
    top_ids = empty("top_ids", n, k)
    top_processed = empty("processed_top_logprobs", n, k) if processed else None
    if k:
        counts = np.fromiter(map(len, rows), np.int64, n)
        row_index = np.repeat(np.arange(n), counts)
        col_index = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        flat = [a for row in rows for a in row]
        top_lp[row_index, col_index] = [a[1] for a in flat]
        top_ids[row_index, col_index] = alt_ids
        if processed:
            top_processed[row_index, col_index] = [a[5] for a in flat]
    meta = {key: value for key, value in meta.items() if value is not None}
    if warnings:  # the source's own notes; the flags' words are derived by Trace.warnings
        meta["warnings"] = list(warnings)
    return Trace(
        tokens=texts,
        token_bytes=data_out,
        token_ids=ids,
        logprobs=logprobs,
        ranks=ranks,
        top_tokens=top_tokens,
        top_logprobs=top_lp,
        top_ids=top_ids,
        processed_logprobs=[t.processed for t in everything] if processed else None,
        processed_top_logprobs=top_processed,
        flags=flags,
        prompt_len=prompt_len,
        meta=meta,
    )
