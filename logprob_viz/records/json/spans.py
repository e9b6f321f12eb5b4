"""Where each value of a JSON text lies, in bytes: the scanner under `Trace.fields` (see `fields`).

Python's ``json`` module gives values, not where they were written, and stops at the first error
with nothing. A model's JSON is often cut short (``max_new_tokens``) or broken (an invented
token), and what it wrote before the break still matters. So this scanner reads the UTF-8 bytes
of the text itself (token bytes are bytes: no character/byte conversion in between), records the
byte span and path of every value it completes, and, where the JSON breaks, says where and why
while keeping the values before it.

Scanning bytes is safe for JSON's grammar: every structural character is ASCII, and no byte of
a multi-byte UTF-8 character is below 0x80.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["Span", "Scan", "scan", "scan_value", "scans", "find_json", "child_path"]

_WS = b" \t\n\r"
_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_LITERALS = (b"true", b"false", b"null")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = frozenset(b'"\\/bfnrt')
_HEX = frozenset(b"0123456789abcdefABCDEF")
_MAX_DEPTH = 200  # deeper than any JSON a model writes; keeps the recursion far from Python's limit
_MAX_CANDIDATES = 256  # brackets tried as the start of the JSON (each scan starts past the previous one's reach)


@dataclass(frozen=True)
class Span:
    """One value: its path, its bytes ``data[start:end]``, and whether it holds other values."""

    path: str
    start: int
    end: int
    container: bool


@dataclass
class Scan:
    """What one scan from ``start`` found: the completed values (leaves and containers, in the
    order they end), where the whole JSON ends (None when it broke) and, if it broke, where
    (``break_at``, a byte offset) and why."""

    start: int
    end: int | None = None
    leaves: list[Span] = field(default_factory=list)
    containers: list[Span] = field(default_factory=list)
    break_at: int | None = None
    reason: str | None = None

    @property
    def complete(self) -> bool:
        return self.end is not None


class _Break(Exception):
    def __init__(self, at: int, reason: str):
        super().__init__(reason)
        self.at = at
        self.reason = reason


def child_path(parent: str, key: str | int) -> str:
    """``name``, ``address.city``, ``items[2]``; a key that is no identifier in brackets: ``a["b.c"]``."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    if _IDENTIFIER.fullmatch(key):
        return f"{parent}.{key}" if parent else key
    return f"{parent}[{json.dumps(key, ensure_ascii=False)}]"


def _show(data: bytes, at: int) -> str:
    """The character at byte ``at``, as a message shows it."""
    if at >= len(data):
        return "the end of the text"
    return repr(data[at:at + 4].decode("utf-8", errors="ignore")[:1] or data[at:at + 1].decode("latin-1"))


class _Scanner:
    def __init__(self, data: bytes, scan: Scan):
        self.data = data
        self.out = scan

    def skip_ws(self, pos: int) -> int:
        data, n = self.data, len(self.data)
        while pos < n and data[pos] in _WS:
            pos += 1
        return pos

    def expect(self, pos: int, what: str) -> None:
        if pos >= len(self.data):
            raise _Break(pos, f"the text ends before the JSON is closed (expected {what})")
        raise _Break(pos, f"expected {what}, found {_show(self.data, pos)}")

    def value(self, pos: int, path: str, depth: int) -> int:
        """Scan the value at ``pos`` (no leading whitespace); returns the byte after it."""
        data = self.data
        if pos >= len(data):
            self.expect(pos, "a value")
        c = data[pos]
        if c in b"{[":
            if depth >= _MAX_DEPTH:
                raise _Break(pos, f"the JSON nests deeper than {_MAX_DEPTH} levels")
            n_before = len(self.out.leaves)
            end = (self.object if c == ord("{") else self.array)(pos, path, depth + 1)
            self.out.containers.append(Span(path, pos, end, True))
            if len(self.out.leaves) == n_before:  # {} or []: a value the model chose, with nothing below it
                self.out.leaves.append(Span(path, pos, end, True))
            return end
        if c == ord('"'):
            end = self.string(pos)
        elif c == ord("-") or 48 <= c <= 57:
            m = _NUMBER.match(data, pos)
            if m is None:
                raise _Break(pos, "a '-' that starts no number")
            end = m.end()
        else:
            lit = next((w for w in _LITERALS if data.startswith(w, pos)), None)
            if lit is None:
                self.expect(pos, "a value (a string, number, object, array, true, false or null)")
            end = pos + len(lit)
        self.out.leaves.append(Span(path, pos, end, False))
        return end

    def string(self, pos: int) -> int:
        """Scan the string whose opening quote is at ``pos``; returns the byte after its closing quote."""
        data, n = self.data, len(self.data)
        i = pos + 1
        while i < n:
            c = data[i]
            if c == ord('"'):
                return i + 1
            if c == ord("\\"):
                if i + 1 >= n:
                    break
                e = data[i + 1]
                if e == ord("u"):
                    if i + 6 > n:
                        break
                    if not set(data[i + 2:i + 6]) <= _HEX:
                        raise _Break(i, "a \\u escape without four hex digits")
                    i += 6
                    continue
                if e not in _ESCAPES:
                    raise _Break(i, f"an unknown escape \\{chr(e)} in a string")
                i += 2
                continue
            if c < 0x20:
                raise _Break(i, "a control character (a raw line break or tab) inside a string")
            i += 1
        raise _Break(n, "the text ends inside a string")

    def object(self, pos: int, path: str, depth: int) -> int:
        data = self.data
        pos = self.skip_ws(pos + 1)
        if pos < len(data) and data[pos] == ord("}"):
            return pos + 1
        while True:
            if pos >= len(data) or data[pos] != ord('"'):
                self.expect(pos, "a key in double quotes")
            key_end = self.string(pos)
            key = json.loads(data[pos:key_end])
            pos = self.skip_ws(key_end)
            if pos >= len(data) or data[pos] != ord(":"):
                self.expect(pos, f"':' after the key {json.dumps(key, ensure_ascii=False)}")
            pos = self.value(self.skip_ws(pos + 1), child_path(path, key), depth)
            pos = self.skip_ws(pos)
            if pos < len(data) and data[pos] == ord("}"):
                return pos + 1
            if pos >= len(data) or data[pos] != ord(","):
                self.expect(pos, f"',' or '}}' after the value of {child_path(path, key)}")
            pos = self.skip_ws(pos + 1)

    def array(self, pos: int, path: str, depth: int) -> int:
        data = self.data
        pos = self.skip_ws(pos + 1)
        if pos < len(data) and data[pos] == ord("]"):
            return pos + 1
        index = 0
        while True:
            pos = self.skip_ws(self.value(pos, child_path(path, index), depth))
            if pos < len(data) and data[pos] == ord("]"):
                return pos + 1
            if pos >= len(data) or data[pos] != ord(","):
                self.expect(pos, f"',' or ']' after {child_path(path, index)}")
            pos = self.skip_ws(pos + 1)
            index += 1


def scan(data: bytes, start: int) -> Scan:
    """Scan the object or array that starts at byte ``start`` of ``data``."""
    out = Scan(start)
    try:
        out.end = _Scanner(data, out).value(start, "", 0)
    except _Break as e:
        out.break_at, out.reason = e.at, e.reason
    return out


def scan_value(data: bytes, start: int) -> tuple[int | None, str | None]:
    """(end, None) of the one JSON value (any kind) that starts at byte ``start``, or (None, why not)."""
    try:
        return _Scanner(data, Scan(start)).value(start, "", 0), None
    except _Break as e:
        return None, e.reason


def scans(data: bytes, pos: int = 0):
    """Every JSON object or array in ``data[pos:]``, in order: a scan from each bracket that lies past
    the previous scan's reach (its end, or where it broke)."""
    for _ in range(_MAX_CANDIDATES):
        starts = [i for i in (data.find(b"{", pos), data.find(b"[", pos)) if i >= 0]
        if not starts:
            return
        result = scan(data, min(starts))
        yield result
        pos = result.end if result.complete else max(result.break_at, result.start + 1)


def find_json(data: bytes) -> Scan | None:
    """The JSON object or array in ``data``: the first one that is complete; when none is, the broken
    one that completed the most values (the earliest of those). None when ``data`` has no bracket.

    A scan that breaks still covers the bytes up to its break: the next bracket tried lies past
    them, so a broken outer object is not mistaken for the complete object nested inside it.
    """
    best = None
    for result in scans(data):
        if result.complete:
            return result
        if best is None or len(result.leaves) > len(best.leaves):
            best = result
    return best
