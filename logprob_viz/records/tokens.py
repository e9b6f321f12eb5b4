"""Token text: the one place that turns token bytes into what a person reads, and back.

Every producer of traces (runners, adapters) and every consumer (the widget) goes through
these functions, so there is one answer to "what are this token's bytes, and how is it shown":

- `display_token`: bytes -> readable text (a piece of a split UTF-8 character is shown by its
  escaped bytes, never as U+FFFD).
- `split_groups`: runs of tokens whose bytes only decode together (a character split across
  tokens), so a view can show the character whole.
- Byte encodings of token *strings*: GPT-2 byte-level BPE (each byte a printable stand-in
  character), SentencePiece (``▁`` for a space, ``<0xNN>`` for a raw byte), OpenAI's legacy
  ``bytes:\\xNN`` strings, and ``token_id:N`` placeholders; `detect_encoding` says which one a
  list of strings uses.
- `token_bytes_table`: the exact bytes of every id in a Hugging Face tokenizer's vocabulary
  (``tokenizer.decode([id])`` is lossy for a piece of a character: it gives U+FFFD).
"""

from __future__ import annotations

import codecs
import re
from functools import lru_cache

__all__ = [
    "display_token",
    "is_utf8",
    "split_groups",
    "byte_level_decoder",
    "byte_level_bytes",
    "sentencepiece_bytes",
    "legacy_bytes",
    "token_id_of",
    "detect_encoding",
    "token_bytes_table",
    "VocabTexts",
    "UsedVocabTexts",
]

SP_SPACE = "\u2581"  # SentencePiece's "▁"
_SP_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")
_TOKEN_ID = re.compile(r"^token_id:(-?\d+)$")
_BYTES_TOKEN = re.compile(r"^bytes:((?:\\x[0-9a-fA-F]{2})+)$")
_MAX_SPLIT = 8  # tokens one character may be spread over (UTF-8 has 4 bytes at most; some margin)


def display_token(raw: bytes) -> str:
    """A token's bytes as a person should read them.

    Valid UTF-8 is decoded; a piece of a character split across tokens is shown by its bytes
    (``\\xe2\\x80``), never as U+FFFD, so what is shown is exactly what the model produced.
    """
    return raw.decode("utf-8", errors="backslashreplace")


def is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def split_groups(token_bytes: list[bytes]) -> list[tuple[int, int, list[str]]]:
    """Runs of tokens whose bytes only decode together: a character split across tokens.

    Returns ``(start, end, texts)`` for each run ``token_bytes[start:end]`` that starts with a
    token ending in an incomplete UTF-8 sequence and is valid UTF-8 as a whole; ``texts[m]`` is
    what token ``start + m`` completes (its whole characters, the split one on the token that
    supplies its last byte; "" for a middle piece). Bytes that never become valid UTF-8 form no
    run: those tokens keep their own text (the bytes shown escaped).
    """
    groups = []
    n = len(token_bytes)
    i = 0
    while i < n:
        if not token_bytes[i] or is_utf8(token_bytes[i]):
            i += 1
            continue
        decoder = codecs.getincrementaldecoder("utf-8")("strict")
        texts: list[str] = []
        j = i
        try:
            while j < n and j - i < _MAX_SPLIT:
                texts.append(decoder.decode(token_bytes[j]))
                j += 1
                if not decoder.getstate()[0]:  # nothing pending: the last character is whole
                    break
            complete = not decoder.getstate()[0] and j - i > 1
        except UnicodeDecodeError:
            complete = False
        if complete:
            groups.append((i, j, texts))
            i = j
        else:
            i += 1
    return groups


# -- how token strings encode bytes -------------------------------------------------------


@lru_cache(maxsize=1)
def byte_level_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode: printable stand-in character -> byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


@lru_cache(maxsize=1)
def _byte_level_translation() -> dict[int, int]:
    """`str.translate` table: each stand-in character -> the Latin-1 character of its byte, and each
    Latin-1 character that is no stand-in (a space, a control) -> U+FFFF, which Latin-1 cannot encode.
    One C-level translate + encode per token instead of a Python lookup per character: the whole
    vocabulary's table (49k tokens, built on the first generate) in a fraction of the time."""
    table = {ord(c): b for c, b in byte_level_decoder().items()}
    for code in range(256):
        table.setdefault(code, 0xFFFF)
    return table


def byte_level_bytes(raw: str) -> bytes | None:
    """A byte-level BPE string's bytes, or None when it holds a character that is no stand-in."""
    try:
        return raw.translate(_byte_level_translation()).encode("latin-1")
    except UnicodeEncodeError:
        return None


def sentencepiece_bytes(raw: str) -> bytes:
    """A SentencePiece piece's bytes: ``<0xNN>`` is one raw byte, ``▁`` a space."""
    m = _SP_BYTE.fullmatch(raw)
    if m:
        return bytes([int(m.group(1), 16)])
    return raw.replace(SP_SPACE, " ").encode("utf-8")


def legacy_bytes(raw: str) -> bytes | None:
    """OpenAI's legacy ``bytes:\\xe2\\x80`` token strings -> their bytes; None for other strings."""
    m = _BYTES_TOKEN.match(raw)
    return codecs.escape_decode(m.group(1).encode("ascii"))[0] if m else None


def token_id_of(raw: str | None) -> int:
    """N for a ``token_id:N`` placeholder (vLLM's return_tokens_as_token_ids), else -1."""
    m = _TOKEN_ID.match(raw) if raw else None
    return int(m.group(1)) if m else -1


def detect_encoding(strings: list[str], text: str | None, chosen: list[str] | None = None) -> str:
    """How a list of token strings encodes bytes: "byte_level", "sentencepiece" or "decoded".

    `strings` are all the strings of one response section (chosen and alternatives); `chosen`
    the chosen tokens' strings in order, which add up to `text` (the response's text) when given.
    """
    strings = [s for s in strings if s and token_id_of(s) < 0 and not _BYTES_TOKEN.match(s)]
    if not strings:
        return "decoded"
    if any(c in s for s in strings for c in " \n\t\r"):
        return "decoded"  # byte-level and SentencePiece strings never hold real whitespace
    dec = byte_level_decoder()
    if all(c in dec for s in strings for c in s):
        markers = any("\u0100" <= c <= "\u0143" for s in strings for c in s)  # Ġ Ċ ĉ ... stand for bytes
        if text is not None and chosen and not markers and all(byte_level_bytes(s) is not None for s in chosen):
            joined = b"".join(byte_level_bytes(s) for s in chosen)
            if joined.decode("utf-8", "replace") == text and "".join(chosen) != text:
                return "byte_level"
        if markers:
            return "byte_level"
    if any(SP_SPACE in s or _SP_BYTE.fullmatch(s) for s in strings):
        return "sentencepiece"
    return "decoded"


# -- a tokenizer's vocabulary ---------------------------------------------------------------


def _decoder_kind(tokenizer) -> str:
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    described = repr(decoder)
    if "ByteLevel" in described:
        return "byte_level"
    if "ByteFallback" in described or "Metaspace" in described or SP_SPACE in described:
        return "sentencepiece"
    return "other"


def token_bytes_table(tokenizer) -> list[bytes]:
    """The exact bytes of every id in ``range(len(tokenizer))``."""
    n = len(tokenizer)
    pieces = tokenizer.convert_ids_to_tokens(list(range(n)))
    special = set(getattr(tokenizer, "all_special_tokens", [])) | set(tokenizer.get_added_vocab())
    kind = _decoder_kind(tokenizer)
    table = []
    for token_id, piece in enumerate(pieces):
        if piece is None:
            table.append(tokenizer.decode([token_id]).encode("utf-8"))
        elif piece in special:
            table.append(piece.encode("utf-8"))
        elif kind == "byte_level" and (data := byte_level_bytes(piece)) is not None:
            table.append(data)
        elif kind == "sentencepiece":
            table.append(sentencepiece_bytes(piece))
        else:
            table.append(tokenizer.decode([token_id]).encode("utf-8"))
    return table


class VocabTexts:
    """The display text of every token id, made once per id and shared by every trace.

    ``texts[i]`` is `display_token` of the table's bytes for id ``i``; an id past the table (a
    model whose output layer is padded beyond its tokenizer) reads ``"<id N>"``. Traces keep a
    reference to this object instead of a string per alternative (see `Trace(vocab=...)`).
    """

    __slots__ = ("_table", "_texts")

    def __init__(self, table: list[bytes]) -> None:
        self._table = table
        self._texts: dict[int, str] = {}

    def byte_table(self) -> list[bytes]:
        """The exact bytes of every id, in id order (what a Parquet file stores to rebuild this)."""
        return self._table

    def bytes_of(self, token_id: int) -> bytes:
        table = self._table
        return table[token_id] if 0 <= token_id < len(table) else f"<id {token_id}>".encode()

    def __getitem__(self, token_id: int) -> str:
        text = self._texts.get(token_id)
        if text is None:
            text = self._texts[token_id] = display_token(self.bytes_of(token_id))
        return text

    def __len__(self) -> int:
        return len(self._table)


class UsedVocabTexts(VocabTexts):
    """A vocabulary table that holds only the ids a Parquet file used (its alternatives' ids): the
    file stores those, not the whole table (a 49k-token table is ~860 KB, a short text's ids ~2 KB).

    ``len`` is the whole vocabulary's size; an id the file never used reads ``"<id N>"``, as one
    past the table does.
    """

    __slots__ = ("_size",)

    def __init__(self, size: int, table: dict[int, bytes]) -> None:
        super().__init__(table)  # type: ignore[arg-type]  (a dict by id, read through bytes_of)
        self._size = size

    def byte_table(self) -> list[bytes]:
        raise TypeError("this vocabulary table holds only the ids its file used, not every id; read a token's "
                        "bytes with bytes_of(id), or take the whole table from the tokenizer (lv.load)")

    def bytes_of(self, token_id: int) -> bytes:
        found = self._table.get(token_id)
        return found if found is not None else f"<id {token_id}>".encode()

    def __len__(self) -> int:
        return self._size

