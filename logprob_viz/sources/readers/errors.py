"""The readers' error types (the shape checks are in `checks`, the value checks in `values`).

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

from typing import Any

__all__ = ["LogprobFormatError", "OpenAIResponseError", "describe"]


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
