"""Ranking every position's alternatives at once: `position.rank_by_id` and
`entries.rank_alternatives` over a whole section, for the parsers' fast paths.

Each position's entries, padded to the longest with -inf, are sorted most likely first with one
stable argsort (ties keep the server's order, as `sorted` does); the result says, per position,
the chosen token's rank, whether it was outside the top K, and which flat entries are kept
(row by row). The per-position functions stay the reference: what is done here is what they do.
"""

from __future__ import annotations

import numpy as np

from .columns import Columns

__all__ = ["sorted_rows", "first_match", "kept_entries", "by_id", "by_entry", "columns_of", "int32_safe"]

INT32_MAX = 2**31 - 1


def int32_safe(*columns: list) -> bool:
    """Whether lists of ints all fit the trace's int32 (else the general path says which is wrong)."""
    return all(not col or (min(col) >= -1 and max(col) <= INT32_MAX) for col in columns)


def sorted_rows(counts: np.ndarray, flat_lp: np.ndarray):
    """(values [N, W] most likely first, -inf padded; flat index of each, -1 for padding)."""
    n, width = len(counts), int(counts.max()) if len(counts) else 0
    starts = np.cumsum(counts) - counts
    if n and int(counts.min()) == width:  # every row full: the flat entries are the matrix
        values, short = flat_lp.reshape(n, width), None
    else:
        short = np.arange(width)[None, :] >= counts[:, None]
        values = np.full((n, width), -np.inf)
        values[~short] = flat_lp  # (row after row: a mask fills in the flat order)
    order = np.argsort(-values, axis=1, kind="stable")
    flat = starts[:, None] + order
    if short is not None:
        flat[order >= counts[:, None]] = -1
    return np.take_along_axis(values, order, 1), flat


def kept_entries(flat: np.ndarray, counts: np.ndarray, where: np.ndarray, removed: np.ndarray, k: int):
    """Flat indices of the first K entries of each row once the removed chosen entry is taken out."""
    if not k or not flat.shape[1]:
        return np.empty(0, np.int64), np.zeros(len(counts), np.int64)
    cut = np.arange(k)[None, :]
    source = cut + (removed[:, None] & (cut >= where[:, None]))
    kept = source < counts[:, None]
    return np.take_along_axis(flat, np.minimum(source, flat.shape[1] - 1), 1)[kept], kept.sum(1)


def first_match(match: np.ndarray):
    """(whether each row has a match, the column of its first one or -1)."""
    found = match.any(1)
    if not match.shape[1]:
        return found, np.full(len(match), -1)
    return found, np.where(found, match.argmax(1), -1)


def by_id(chosen_ids: np.ndarray, counts: np.ndarray, alt_ids: np.ndarray, flat_lp: np.ndarray, k: int):
    """`rank_by_id` on every position with alternatives: (ranks, outside, picked, kept counts)."""
    values, flat = sorted_rows(counts, flat_lp)
    ids = np.where(flat >= 0, alt_ids[flat.clip(0)], -1) if flat.size else flat
    match = (ids == chosen_ids[:, None]) & (chosen_ids[:, None] >= 0)
    found, where = first_match(match)
    has = counts > 0
    outside = (~found & has & (counts >= k)) | (found & (where >= k))
    ranks = np.where(found & (where < k), where + 1, 0)
    picked, kept = kept_entries(flat, counts, where, found & (where >= k), k)
    return ranks, outside, picked, kept


def by_entry(chosen: np.ndarray, chosen_lp: np.ndarray, counts: np.ndarray, alt_codes: np.ndarray,
             flat_lp: np.ndarray, k: int, *, chosen_first: bool):
    """`rank_alternatives` where no entry has bytes or ids: the chosen token is the first entry with
    its string (as an int code) and logprob. Returns (ranks, outside, incomplete, picked, kept counts)."""
    values, flat = sorted_rows(counts, flat_lp)
    codes = np.where(flat >= 0, alt_codes[flat.clip(0)], -1) if flat.size else flat
    lp = chosen_lp[:, None]
    same_logprob = (values == lp) | (np.abs(values - lp) <= 1e-6 * np.maximum(1.0, np.abs(values)))
    match = (codes == chosen[:, None]) & same_logprob
    found, where = first_match(match)
    has = counts > 0
    if chosen_first:
        listed_first = np.ones(len(counts), bool)
    else:  # the server's order was not most likely first
        listed = np.full(values.shape, -np.inf)
        rows = np.repeat(np.arange(len(counts)), counts)
        listed[rows, np.arange(len(flat_lp)) - np.repeat(np.cumsum(counts) - counts, counts)] = flat_lp
        valid = np.arange(values.shape[1])[None, :] < counts[:, None]
        rising = (listed[:, :-1] < listed[:, 1:]) & valid[:, 1:]
        listed_first = rising.any(1)
    more = counts > k
    removed = found & more & (where >= k)
    ranked = found & ((more & (where < k)) | (~more & (~listed_first | (where < counts - 1))))
    incomplete = found & ~more & ~ranked
    outside = (~found & has & (counts >= k)) | removed
    ranks = np.where(ranked, where + 1, 0)
    picked, kept = kept_entries(flat, counts, where, removed, k)
    return ranks, outside, incomplete, picked, kept


def columns_of(raw: list, chosen_lp, ranks, flags: dict, picked, kept, alt_raw: list, flat_lp, *,
               ids: list | None = None, alt_ids: np.ndarray | None = None, coded: tuple | None = None) -> Columns:
    """The ranked section as `Columns` (the kept alternatives, row by row), from a fast path whose ids
    were checked (`int32_safe`) and whose ranks it computed. ``coded``: (strings, the chosen tokens'
    codes, every entry's code) where the parser numbered the strings (`Columns.interned`)."""
    if coded is not None:
        strings, codes, alt_codes = coded
        return Columns(raw, chosen_lp, ids=ids, ranks=ranks.tolist(), flags=flags, counts=kept, alt_lp=flat_lp[picked],
                       alt_ids=None if alt_ids is None else alt_ids[picked].tolist(), strings=strings, codes=codes,
                       alt_codes=alt_codes[picked], checked=True)
    order = picked.tolist()
    return Columns(raw, chosen_lp, ids=ids, ranks=ranks.tolist(), flags=flags, counts=kept,
                   alt_raw=list(map(alt_raw.__getitem__, order)), alt_lp=flat_lp[picked],
                   alt_ids=None if alt_ids is None else alt_ids[picked].tolist(), checked=True)
