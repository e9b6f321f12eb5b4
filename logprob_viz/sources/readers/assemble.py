"""The one assembler: `position.Token` lists (or `Columns`) -> a `Trace`, with flags (`Trace.warnings` says them).

Every format's parser ends here. Token strings become exact bytes and readable text through
`logprob_viz.records.tokens` (the only module that decodes token bytes), once per distinct string:
a response repeats the same few thousand strings, so resolving is a dictionary lookup.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from ...records.flags import order_flags
from ...records.tokens import byte_level_bytes, display_token, legacy_bytes, sentencepiece_bytes, token_id_of
from ...records.trace import Trace
from ...records.trace_fields import empty
from ...records.vocab_rows import NO_FLAGS
from .columns import Columns
from .position import LN_HALF, Token
from .values import check_ids_and_ranks

__all__ = ["resolve", "build_trace", "strings_of", "server_meta", "str_or_none"]


def server_meta(server: str, format: str, **fields) -> dict:
    """A reader's trace ``meta``: the server (also its ``source``), the format read, then its own fields."""
    return {"source": server, "server": server, "format": format, **fields}


def str_or_none(value) -> str | None:
    """A server's optional text field (a model name, an id, the text): kept only when it is a string."""
    return value if isinstance(value, str) else None


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


def strings_of(tokens) -> list[str]:
    """Every distinct string of a section (chosen and alternatives), for `tokens.detect_encoding`."""
    if isinstance(tokens, Columns):
        return tokens.distinct()
    out = dict.fromkeys(tok.raw for tok in tokens)
    out.update(dict.fromkeys(a[0] for tok in tokens for a in tok.alternatives))
    out.pop(None, None)
    return list(out)  # each distinct string once: what detect_encoding looks at is the set


def _resolved(keys, encoding: str, table: list | None) -> tuple[dict, dict, dict, dict]:
    """`resolve` once per distinct key (a response repeats the same strings): its id, bytes
    (b"" where unknown), text, and flags (only the keys that have some).

    A key is the string alone (no bytes given, no table), or (string, bytes), or with a
    tokenizer's table (string, bytes, id): see `_keys`.
    """
    id_of, data_of, text_of, flags_of = {}, {}, {}, {}
    for key in dict.fromkeys(keys):
        if type(key) is tuple:
            raw, given, token_id = key if len(key) == 3 else (*key, -1)
        else:
            raw, given, token_id = key, None, -1
        id_of[key], data, text_of[key], flags = resolve(raw, given, token_id, encoding, table)
        data_of[key] = b"" if data is None else data
        if flags:
            flags_of[key] = flags
    return id_of, data_of, text_of, flags_of


def _keys(raw: list, given: list | None, ids: list, with_ids: bool) -> list:
    if with_ids:  # ids matter for resolving only through a tokenizer's table
        return list(zip(raw, given or [None] * len(raw), ids, strict=True))
    if given is None:
        return raw  # the string alone where no bytes were given: no tuple per token
    return [r if g is None else (r, g) for r, g in zip(raw, given, strict=True)]


def _ids(given_ids: list, keys: list, id_of: dict) -> list:
    """The source's ids, or the one resolving found (a "token_id:N" placeholder, a table's id)."""
    if max(id_of.values(), default=-1) < 0:
        return given_ids
    if max(given_ids, default=-1) < 0:  # the source gave no ids (map and a bound method: no Python loop)
        return list(map(id_of.__getitem__, keys))
    if min(given_ids) >= 0:  # the source gave every id
        return given_ids
    return [i if i >= 0 else r for i, r in zip(given_ids, map(id_of.__getitem__, keys), strict=True)]


def _by_key(c: Columns, encoding: str, table: list | None):
    """(texts, bytes, ids, alternatives' texts, alternatives' ids, [(position, flags)]) of a section,
    resolving each distinct key once (`_resolved`)."""
    with_ids = table is not None
    keys = _keys(c.raw, c.given, c.ids, with_ids)
    alt_keys = _keys(c.alt_raw, c.alt_given, c.alt_ids, with_ids)
    id_of, data_of, text_of, flags_of = _resolved(chain(keys, alt_keys), encoding, table)
    flagged = []
    if flags_of:
        flagged = [(i, flags_of[keys[i]]) for i in np.flatnonzero(list(map(flags_of.__contains__, keys))).tolist()]
    return (list(map(text_of.__getitem__, keys)), list(map(data_of.__getitem__, keys)), _ids(c.ids, keys, id_of),
            list(map(text_of.__getitem__, alt_keys)), _ids(c.alt_ids, alt_keys, id_of), flagged)


def _interned(c: Columns, encoding: str):
    """`_by_key` for a section whose parser numbered its strings (`Columns.interned`): each
    distinct string used is resolved once, every token and alternative is then an index."""
    size = len(c.strings)
    texts, data = np.empty(size, object), np.empty(size, object)
    ids, flagged = np.full(size, -1, np.int64), np.zeros(size, bool)
    used = np.flatnonzero(c.used()).tolist()
    flags_of = _plain_texts(c.strings, used, encoding, texts, data)
    if flags_of is None:  # some string is not plain decoded text: each resolved on its own
        flags_of = {}
        for i in used:
            ids[i], found, texts[i], flags = resolve(c.strings[i], None, -1, encoding, None)
            data[i] = b"" if found is None else found
            if flags:
                flags_of[i] = flags
    flagged[list(flags_of)] = True
    codes, alt_codes = np.asarray(c.codes, np.intp), np.asarray(c.alt_codes, np.intp)
    return (texts[codes].tolist(), data[codes].tolist(), _coded_ids(c.ids, ids, codes), texts[alt_codes].tolist(),
            _coded_ids(c.alt_ids, ids, alt_codes),
            [(i, flags_of[code]) for i, code in zip(np.flatnonzero(flagged[codes]).tolist(),
                                                     codes[flagged[codes]].tolist(), strict=True)])


def _plain_texts(strings: list[str], used: list[int], encoding: str, texts: np.ndarray, data: np.ndarray):
    """`resolve` of many strings at once where every one is plain decoded text (no "token_id:N"
    placeholder, no legacy "bytes:" string, no lone surrogate): its text is itself, its bytes its
    UTF-8. Fills `texts` and `data` at `used` and returns {index: flags}; None (nothing filled)
    where some string is not plain."""
    if encoding != "decoded":
        return None
    picked = [strings[i] for i in used]
    joined = "\x00".join(picked)
    if "token_id:" in joined or "bytes:" in joined:
        return None
    try:
        encoded = [s.encode("utf-8") for s in picked]  # (a lone surrogate raises: resolve keeps its bytes)
    except UnicodeEncodeError:
        return None
    texts[used], data[used] = picked, encoded
    flags_of = {}
    if "" in picked:
        flags_of[used[picked.index("")]] = ("no_bytes",)
    if "\ufffd" in joined:
        flags_of.update((i, ("replacement_char",)) for i, s in zip(used, picked, strict=True) if "\ufffd" in s)
    return flags_of


def _coded_ids(given_ids: list, resolved: np.ndarray, codes: np.ndarray) -> list:
    """`_ids` by index: the source's ids, or the one a "token_id:N" placeholder carries."""
    if not len(resolved) or resolved.max() < 0:
        return given_ids
    found = resolved[codes].tolist()
    if max(given_ids, default=-1) < 0:
        return found
    return [i if i >= 0 else r for i, r in zip(given_ids, found, strict=True)]  # (ids unchecked yet: no int64)


class _Assembly:
    """The trace's columns, section after section."""

    def __init__(self):
        self.texts, self.data, self.ids, self.ranks, self.logprobs, self.processed = [], [], [], [], [], []
        self.alt_texts, self.alt_ids, self.alt_lp, self.alt_processed, self.counts = [], [], [], [], []
        self.flags: dict[int, tuple] = {}  # sparse: position -> codes (the source's and resolving's)
        self.has_processed = False
        self.unchecked = False  # some section's ids or ranks were not checked by its parser (`Columns.checked`)

    def add(self, c: Columns, encoding: str, table: list | None) -> None:
        start = len(self.texts)
        if c.interned() and table is None:
            texts, data, ids, alt_texts, alt_ids, resolved_flags = _interned(c, encoding)
        else:
            texts, data, ids, alt_texts, alt_ids, resolved_flags = _by_key(c, encoding, table)
        # ids that resolving found ("token_id:N" placeholders: any number) are checked
        self.unchecked |= not c.checked or ids is not c.ids or alt_ids is not c.alt_ids
        self.texts += texts
        self.data += data
        self.ids += ids
        self.ranks += c.ranks
        self.logprobs.append(c.logprobs)
        if c.flags:  # (in C: a long response flags thousands of positions)
            where = c.flags if not start else map(start.__add__, c.flags)
            self.flags.update(zip(where, map(tuple, c.flags.values()), strict=True))
        for i, codes in resolved_flags:
            self.flags[start + i] = (*self.flags.get(start + i, ()), *codes)
        self.alt_texts += alt_texts
        self.alt_ids += alt_ids
        self.alt_lp.append(c.alt_lp)
        self.counts.append(c.counts)
        n, m = len(c), len(c.alt_raw)
        # not NaN: the source gave processed values (on the chosen token, or only on alternatives)
        firsts = (np.cumsum(c.counts) - c.counts)[c.counts > 0]
        given = c.processed is not None or (c.alt_processed is not None and bool(
            (c.alt_processed[firsts] == c.alt_processed[firsts]).any()))
        self.has_processed |= given
        self.processed.append(c.processed if c.processed is not None else np.full(n, np.nan))
        self.alt_processed.append(c.alt_processed if c.alt_processed is not None else np.full(m, np.nan))

    def flag_rows(self, n: int) -> list | None:
        """Per token, its codes in the vocabulary's order; None where no token has any."""
        if not self.flags:
            return None
        rows: list = [NO_FLAGS] * n
        ordered: dict[tuple, list[str]] = {}  # order_flags, once per distinct combination of codes
        for i, codes in self.flags.items():
            row = ordered.get(codes)
            if row is None:
                row = ordered[codes] = order_flags(codes)
            rows[i] = row  # (shared by the positions with the same codes: the Trace copies each row)
        return rows


def _top_rows(texts: list, counts: np.ndarray, n: int, k: int) -> list[list[str]]:
    """The flat alternatives' texts as one list per token."""
    if k == 0:
        return [[] for _ in range(n)]
    if (counts == k).all():  # tuples: the Trace makes its own lists of them
        return list(zip(*[iter(texts)] * k, strict=True))
    ends = np.cumsum(counts).tolist()
    return [texts[end - count:end] for count, end in zip(counts.tolist(), ends, strict=True)]


def _top_matrix(name: str, flat, counts: np.ndarray, n: int, k: int) -> np.ndarray:
    """A flat per-alternative column as [N, K], rows shorter than K padded with the field's fill."""
    out = empty(name, n, k)
    if k and len(flat):
        if (counts == k).all():
            out[:] = np.asarray(flat).reshape(n, k)
        else:
            row_index = np.repeat(np.arange(n), counts)
            col_index = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
            out[row_index, col_index] = flat
    return out


def build_trace(sections: list[tuple[list[Token] | Columns, str]], *, prompt_len: int, meta: dict[str, Any],
                table: list | None = None, warnings: list[str] | None = None) -> Trace:
    """A `Trace` from sections of tokens (a Token list or `Columns`), each with the string encoding its strings use.

    ``sections`` is e.g. ``[(prompt_tokens, "decoded"), (generated_tokens, "byte_level")]``;
    ``meta`` is copied (entries that are None dropped) and gets ``warnings``: the source's notes
    about the response as a whole (what each flag code means is derived by `Trace.warnings`).
    """
    parts = _Assembly()
    for tokens, encoding in sections:
        if not len(tokens):
            continue  # (an empty section adds nothing: no prompt, or nothing generated)
        parts.add(tokens if isinstance(tokens, Columns) else Columns.from_tokens(tokens), encoding, table)
    if parts.unchecked:  # before the int32 arrays, which would overflow
        check_ids_and_ranks(parts.ids, parts.alt_ids, parts.ranks)
    n = len(parts.texts)
    logprobs = np.concatenate(parts.logprobs) if parts.logprobs else np.empty(0)
    ranks = np.asarray(parts.ranks, dtype=np.int64).reshape(n)
    ranks[(ranks == 0) & (logprobs > LN_HALF)] = 1  # p > 1/2: rank 1
    counts = np.concatenate(parts.counts) if parts.counts else np.zeros(0, np.int64)
    k = int(counts.max()) if n else 0
    alt_lp = np.concatenate(parts.alt_lp) if parts.alt_lp else np.empty(0)
    processed = parts.has_processed
    meta = {key: value for key, value in meta.items() if value is not None}
    if warnings:  # the source's own notes; the flags' words are derived by Trace.warnings
        meta["warnings"] = list(warnings)
    return Trace(
        tokens=parts.texts,
        token_bytes=parts.data,
        token_ids=parts.ids,
        logprobs=logprobs,
        ranks=ranks,
        top_tokens=_top_rows(parts.alt_texts, counts, n, k),
        top_logprobs=_top_matrix("top_logprobs", alt_lp, counts, n, k),
        top_ids=_top_matrix("top_ids", parts.alt_ids, counts, n, k),
        processed_logprobs=np.concatenate(parts.processed) if processed else None,
        processed_top_logprobs=_top_matrix("processed_top_logprobs", np.concatenate(parts.alt_processed), counts,
                                           n, k) if processed else None,
        flags=parts.flag_rows(n),
        prompt_len=prompt_len,
        meta=meta,
    )
