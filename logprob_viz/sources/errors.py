"""The two errors a user catches around reading or asking a server, apart by what happened.

- `ServerError` (a ``RuntimeError``): the server could not be reached, did not answer in time,
  answered with an error (an HTTP error status, or an ``{"error": {...}}`` body from any server:
  OpenAI, vLLM, llama.cpp, TGI, ...), or broke off in the middle of a stream. The body, if any,
  was not the problem: look at the server (or retry).
- `LogprobFormatError` (a ``ValueError``): a body that this package cannot read: not a response
  it knows, or a field holding the wrong kind of value. The message starts with the field's path.

Neither is a subclass of the other, so ``except lv.LogprobFormatError`` never swallows a server
that is down. `OpenAIResponseError`, the old name of a server's error body (raised for every
server's), is a deprecated alias of `ServerError`: old ``except`` clauses catch what they caught.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["ServerError", "LogprobFormatError"]

# old name -> the class it now means; reached through `deprecated_alias`, with a warning
DEPRECATED_ALIASES = {"OpenAIResponseError": "ServerError"}


class ServerError(RuntimeError):
    """The server could not be reached, failed (an HTTP error or an error body), or stopped mid-stream.

    ``status`` (HTTP or the body's code), ``type``, ``code`` and ``param`` are the server's own
    words where it gave them; ``server`` is its address or name.
    """

    def __init__(self, message: str, *, status: int | None = None, type: str | None = None,
                 code: Any = None, param: str | None = None, server: str | None = None):
        super().__init__(message)
        self.status, self.type, self.code, self.param, self.server = status, type, code, param, server


class LogprobFormatError(ValueError):
    """The input is not a logprobs response this package can read; the message says where and why."""

    def __init__(self, path: str, problem: str):
        super().__init__(f"{path}: {problem}" if path else problem)
        self.path, self.problem = path, problem


def deprecated_alias(module: str, name: str, stacklevel: int = 3):
    """The class an old name stands for, with a DeprecationWarning; AttributeError for any other name
    (for a module's ``__getattr__``; the default `stacklevel` points at the caller of that ``__getattr__``)."""
    if name not in DEPRECATED_ALIASES:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    new = DEPRECATED_ALIASES[name]
    warnings.warn(f"{name} is deprecated: use lv.{new} (it is the same class)", DeprecationWarning,
                  stacklevel=stacklevel)
    return globals()[new]


def __getattr__(name: str):
    return deprecated_alias(__name__, name)
