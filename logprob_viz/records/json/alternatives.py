"""What else the model would have put in a JSON field: a branch from each alternative at the value's start.

    fields.what_else("age", runner)      # {"items": [{value, prob, logprob, tokens, ...}], "over": ...}

For a field (a `fields.FieldRow`), the trace is forked (`fork.fork`, as `Tree.branch`
does) at the token where the value's content begins (``row.at``) from each of the top
alternatives there, and continued
greedily until the value closes (its closing quote, the end of its number, ...; at most
``max_new_tokens``). Each value's probability is the product over the tokens from ``row.at`` to
the token that closes it, given the text before ``row.at``: P(this value | the prefix). The
value the model wrote is listed with the same measure (over ``row.at .. row.last``), so the list
compares like with like, and its p is the row's own ``prob`` (``row.prob_with_quote`` adds the
opening quote's token before ``row.at``). A token that closes the value may hold more (``",``): it is counted, as
in `Trace.fields`.
"""

from __future__ import annotations

import math

import numpy as np

from ..fork import checked_runner, fork
from ..tokens import display_token
from .spans import scan_value

__all__ = ["what_else"]

_WS = b" \t\n\r"


def _offsets(trace) -> np.ndarray:
    return np.concatenate([[0], np.cumsum([len(b) for b in trace.token_bytes], dtype=np.int64)])


def _value_start(data: bytes, row_start: int, fork_byte: int) -> int:
    """Where the branch's value starts: the written value's start when it lies before the fork (a
    string's quote in an earlier token), else the first byte past the whitespace at the fork."""
    if row_start < fork_byte:
        return row_start
    i = fork_byte
    while i < len(data) and data[i] in _WS:
        i += 1
    return i


def _item(node, at: int, start: int, chosen: bool, token: str) -> dict:
    """The value that `node` (a trace) writes from byte `start`, with its probability from token `at`."""
    data = b"".join(node.token_bytes)
    end, why_not = scan_value(data, start)
    offsets = _offsets(node)
    complete = end is not None
    close = int(np.searchsorted(offsets, end - 1, side="right")) - 1 if complete else len(node) - 1
    logprob = float(node.logprobs[at:close + 1].astype(np.float64).sum())
    text = display_token(data[start:end] if complete else data[start:])
    return {"token": token, "value": text, "logprob": logprob, "prob": math.exp(logprob), "tokens": [at, close],
            "token_ids": [int(i) for i in node.token_ids[at:close + 1]], "complete": complete, "chosen": chosen,
            "note": None if complete else f"unfinished: {why_not}"}


def what_else(fields, row, runner, *, k: int = 5, max_new_tokens: int | None = None) -> dict:
    """The values the model would have written in `row` (a row index or path) after each of the top
    `k` alternatives at its first content token, most likely first (see the module docstring).
    ``max_new_tokens``: default twice the written value's tokens plus 2, at most 16 (a longer
    alternative is listed as unfinished)."""
    row = fields[row]
    trace = fields.trace
    at = row.at
    if max_new_tokens is None:
        max_new_tokens = min(16, 2 * (row.last - at + 1) + 2)
    if at < 1:
        raise ValueError("this value begins at the first token, which has no context to branch from")
    ids = [int(i) for i in trace.top_ids[at, :k] if i >= 0]
    if not ids:
        raise ValueError(f"the trace has no alternatives' token ids at position {at} (record top_logprobs > 0 "
                         "with a runner that gives ids), so there is nothing to branch from")
    fork_byte = int(_offsets(trace)[at])
    chosen_id = int(trace.token_ids[at])
    runner = checked_runner(runner)
    items = []
    if chosen_id not in ids:  # the value as written, even when its first token was outside the top k
        items.append(_item(trace, at, row.start, True, trace.tokens[at]))
    for token_id in ids:
        if token_id == chosen_id:
            items.append(_item(trace, at, row.start, True, trace.tokens[at]))
            continue
        node = fork(trace, at, token_id, runner, max_new_tokens=max_new_tokens, top_logprobs=0, progress=False)
        start = _value_start(b"".join(node.token_bytes), row.start, fork_byte)
        items.append(_item(node, at, start, False, node.tokens[at]))
    items.sort(key=lambda item: -item["logprob"])
    return {
        "path": row.path, "at": at, "items": items,
        "over": (f"each p is the product of the token probabilities from position {at} (where the value's content "
                 f"begins) to the token that closes the value, given the text before position {at}; the "
                 f"alternatives were continued greedily (at most {max_new_tokens} tokens)"),
    }
