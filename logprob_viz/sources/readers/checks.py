"""The shape checks every parser uses: each names the field's path in the `LogprobFormatError` it raises,
so a parser never lets a ``KeyError`` / ``AttributeError`` escape from deep inside."""

from __future__ import annotations

from .errors import LogprobFormatError, describe

__all__ = ["expect_dict", "expect_list", "expect_str", "expect_int"]


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
