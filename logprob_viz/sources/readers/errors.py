"""The adapters' error types and the checks every parser uses on the values it reads.

Two errors, for two different situations:

- `LogprobFormatError` (a ``ValueError``): the input is not a response this package can read,
  or a field holds the wrong kind of value. The message starts with the field's path
  (``choices[0].logprobs.top_logprobs[4]: expected an object of token -> logprob, got str``).
- `OpenAIResponseError`: the input is a server's *error body* (``{"error": {...}}``); the
  message is the server's own.

The ``expect_*`` helpers and `logprob_at` raise `LogprobFormatError` with a path, so a parser
never lets a ``KeyError`` / ``AttributeError`` escape from deep inside.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "LogprobFormatError",
    "OpenAIResponseError",
    "NEG_INF_SENTINEL",
    "LOGPROB_SLACK",
    "describe",
    "expect_dict",
    "expect_list",
    "expect_str",
    "expect_int",
    "logprob_at",
    "prob_at",
    "check_ids_and_ranks",
]

# OpenAI and vLLM write -inf as this number ("the token is very unlikely"); anything at or
# below it is read as -inf.
NEG_INF_SENTINEL = -9999.0
# Servers compute logprobs in float32 / after a log-softmax: a value a hair above 0 is rounding.
LOGPROB_SLACK = 1e-4


class LogprobFormatError(ValueError):
    """The input is not a logprobs response this package can read; the message says where and why."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path, self.problem = path, problem


class OpenAIResponseError(RuntimeError):
    """The server answered with an error (an ``{"error": {...}}`` body); the message is the server's."""

    def __init__(self, message: str, *, status: int | None = None, type: str | None = None,
                 code: Any = None, param: str | None = None, server: str | None = None):
        super().__init__(message)
        self.status, self.type, self.code, self.param, self.server = status, type, code, param, server


def describe(value) -> str:
    """A short description of what a value is, for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:40] + "..."
        return f"str {shown!r}"
    if isinstance(value, dict):
        keys = ", ".join(map(str, list(value)[:6])) + (", ..." if len(value) > 6 else "")
        return f"an object with keys ({keys})"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    return type(value).__name__


def expect_dict(value, path: str, what: str = "an object") -> dict:
    if not isinstance(value, dict):
        raise LogprobFormatError(path, f"expected {what}, got {describe(value)}")
    return value


def expect_list(value, path: str, what: str = "a list") -> list:
    if not isinstance(value, list):
        raise LogprobFormatError(path, f"expected {what}, got {describe(value)}")
    return value


def expect_str(value, path: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise LogprobFormatError(path, f"expected a string, got {describe(value)}")
    return value


def expect_int(value, path: str, *, optional: bool = False, default: int = -1) -> int:
    if value is None and optional:
        return default
    if type(value) is int:
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**62:
        return int(value)
    raise LogprobFormatError(path, f"expected an integer, got {describe(value)}")


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
