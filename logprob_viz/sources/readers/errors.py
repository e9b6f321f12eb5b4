"""The readers' error types (the shape checks are in `checks`, the value checks in `values`).

`LogprobFormatError` (a ``ValueError``): the input is not a response this package can read, or a
field holds the wrong kind of value. The message starts with the field's path
(``choices[0].logprobs.top_logprobs[4]: expected an object of token -> logprob, got str``).
A server's *error body* (``{"error": {...}}``, any server's) raises `ServerError` with the
server's message: the server failed, the body was read. Both are defined in `sources.errors`.

The ``expect_*`` helpers and `logprob_at` raise `LogprobFormatError` with a path, so a parser
never lets a ``KeyError`` / ``AttributeError`` escape from deep inside.
"""

from __future__ import annotations

from ..errors import LogprobFormatError, ServerError

__all__ = ["LogprobFormatError", "ServerError", "describe"]


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
