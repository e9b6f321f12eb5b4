"""The values a logprob field may hold: logprobs, probabilities, ids and ranks, checked with the field's path."""

from __future__ import annotations

import math

from .errors import LogprobFormatError, describe

__all__ = ["NEG_INF_SENTINEL", "LOGPROB_SLACK", "logprob_at", "prob_at", "INT32_MAX", "check_ids_and_ranks"]


# OpenAI and vLLM write -inf as this number ("the token is very unlikely"); anything at or
# below it is read as -inf.
NEG_INF_SENTINEL = -9999.0

# Servers compute logprobs in float32 / after a log-softmax: a value a hair above 0 is rounding.
LOGPROB_SLACK = 1e-4


def _number(value, path: str, what: str) -> float:
    kind = type(value)
    if kind is int and abs(value) > 2**1023:  # JSON allows 10**400; float() would overflow
        return math.inf if value > 0 else -math.inf  # beyond -9999: -inf, as the sentinel is
    if kind is float or kind is int:
        return float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LogprobFormatError(path, f"expected {what}, got {describe(value)}")
    return float(value)  # numpy scalars and other number types


def logprob_at(value, path: str, *, optional: bool = True) -> float:
    """A logprob as a float: NaN for null (where allowed), -inf for the -9999 sentinel.

    A logprob is a number <= 0 (up to `LOGPROB_SLACK` of rounding); NaN, +inf, positive
    values and booleans are rejected with the field's path.
    """
    if value is None:
        if optional:
            return math.nan
        raise LogprobFormatError(path, "expected a logprob (a number <= 0), got null")
    v = _number(value, path, "a logprob (a number <= 0)")
    if v <= NEG_INF_SENTINEL:
        return -math.inf
    if v > LOGPROB_SLACK or v != v:
        raise LogprobFormatError(path, f"expected a logprob (a number <= 0), got {v!r}"
                                 + ("; is this a probability or a score rather than a logprob?" if v == v else ""))
    return v


def prob_at(value, path: str) -> float:
    """A probability in [0, 1] as a logprob (0 -> -inf)."""
    v = _number(value, path, "a probability (a number between 0 and 1)")
    if not (0.0 <= v <= 1.0 + LOGPROB_SLACK):
        raise LogprobFormatError(path, f"expected a probability (a number between 0 and 1), got {v!r}")
    return math.log(min(v, 1.0)) if v > 0 else -math.inf

# A trace keeps ids and ranks as int32; a server's id or rank beyond it is malformed, not a token.
INT32_MAX = 2**31 - 1


def check_ids_and_ranks(ids: list, alt_ids: list, ranks: list) -> None:
    """Token ids are -1 (unknown) .. 2**31-1, ranks 0 (unknown) .. 2**31-1; min/max first (C speed)."""
    for what, values, low in (("a token id", ids, -1), ("an alternative's token id", alt_ids, -1),
                              ("a rank", ranks, 0)):
        if values and (min(values) < low or max(values) > INT32_MAX):
            where = next(i for i, v in enumerate(values) if not low <= v <= INT32_MAX)
            at = f"token {where}" if values is not alt_ids else f"alternative {where} (counted over all tokens)"
            raise LogprobFormatError("", f"{what} is out of range at {at}: {values[where]!r} (expected "
                                         f"{low}..{INT32_MAX}); the response's ids or ranks are not a vocabulary's")
