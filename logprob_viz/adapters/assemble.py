"""The one assembler: lists of `form.Token` -> a `Trace`, with flags and ``meta["warnings"]``.

Every format's parser ends here. Token strings become exact bytes and readable text through
`logprob_viz.tokens` (the only module that decodes token bytes), once per distinct string:
a response repeats the same few thousand strings, so resolving is a dictionary lookup.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..flags import flag_warnings, order_flags
from ..tokens import byte_level_bytes, display_token, legacy_bytes, sentencepiece_bytes, token_id_of
from ..trace import Trace
from .form import LN_HALF, Token

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
    """Every string of a section (chosen and alternatives), for `tokens.detect_encoding`."""
    out = []
    for tok in tokens:
        if tok.raw is not None:
            out.append(tok.raw)
        out.extend(a.raw for a in tok.alternatives if a.raw is not None)
    return out


class _Resolver:
    """`resolve` with a memo: the same (string, bytes, id) resolves the same way within a section."""

    def __init__(self, encoding: str, table: list | None):
        self.encoding, self.table, self.memo = encoding, table, {}

    def __call__(self, raw, given, token_id):
        key = (raw, given, token_id if self.table is not None else -1)
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = resolve(raw, given, key[2], self.encoding, self.table)
        return hit


def build_trace(sections: list[tuple[list[Token], str]], *, prompt_len: int, meta: dict[str, Any],
                table: list | None = None, warnings: list[str] | None = None) -> Trace:
    """A `Trace` from sections of tokens, each with the string encoding its strings use.

    ``sections`` is e.g. ``[(prompt_tokens, "decoded"), (generated_tokens, "byte_level")]``;
    ``meta`` is copied (entries that are None dropped) and gets ``warnings`` plus the words
    for every flag code that was set.
    """
    texts: list[str] = []
    data_out: list[bytes] = []
    ids: list[int] = []
    logprobs: list[float] = []
    ranks: list[int] = []
    flags: list[list[str]] = []
    top_tokens: list[list[str]] = []
    rows: list[list] = []
    alt_ids: list[int] = []  # flat, row by row
    processed = False
    for tokens, encoding in sections:
        resolver = _Resolver(encoding, table)
        for tok in tokens:
            token_id, data, text, codes = resolver(tok.raw, tok.given, tok.id)
            if tok.id >= 0 and token_id != tok.id:
                token_id = tok.id
            texts.append(text)
            data_out.append(data if data is not None else b"")
            ids.append(token_id)
            logprobs.append(tok.logprob)
            rank = tok.rank
            if rank == 0 and tok.logprob > LN_HALF:
                rank = 1  # p > 1/2: nothing can be more likely
            ranks.append(rank)
            flags.append(order_flags(tok.flags + list(codes)) if (tok.flags or codes) else [])
            alternatives = tok.alternatives
            resolved = [resolver(a.raw, a.given, a.id) for a in alternatives]
            top_tokens.append([r[2] for r in resolved])
            alt_ids.extend([a.id if a.id >= 0 else r[0] for a, r in zip(alternatives, resolved, strict=True)])
            rows.append(alternatives)
            if not processed and (tok.processed == tok.processed  # not NaN: the source gave processed values
                                  or any(a.processed == a.processed for a in alternatives)):
                processed = True

    n = len(texts)
    k = max(map(len, rows), default=0)
    top_lp = np.full((n, k), -np.inf, np.float32)
    top_ids = np.full((n, k), -1, np.int64)
    top_processed = np.full((n, k), -np.inf, np.float32) if processed else None
    if k:
        counts = np.fromiter(map(len, rows), np.int64, n)
        row_index = np.repeat(np.arange(n), counts)
        col_index = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        flat = [a for row in rows for a in row]
        top_lp[row_index, col_index] = [a.logprob for a in flat]
        top_ids[row_index, col_index] = alt_ids
        if processed:
            top_processed[row_index, col_index] = [a.processed for a in flat]
    warnings = list(warnings or [])
    warnings.extend(flag_warnings(flags))
    meta = {key: value for key, value in meta.items() if value is not None}
    if warnings:
        meta["warnings"] = warnings
    return Trace(
        tokens=texts,
        token_bytes=data_out,
        token_ids=ids,
        logprobs=logprobs,
        ranks=ranks,
        top_tokens=top_tokens,
        top_logprobs=top_lp,
        top_ids=top_ids,
        processed_logprobs=[t.processed for tokens, _ in sections for t in tokens] if processed else None,
        processed_top_logprobs=top_processed,
        flags=flags,
        prompt_len=prompt_len,
        meta=meta,
    )
