"""The exact bytes of every token in a Hugging Face tokenizer's vocabulary.

``tokenizer.decode([id])`` is lossy for a token that holds part of a UTF-8 character (it gives
U+FFFD), so we read the vocabulary pieces themselves and undo the tokenizer's encoding of bytes:
GPT-2 style byte-level BPE maps each byte to a printable character; SentencePiece writes a
space as "▁" and raw bytes as "<0xNN>".
"""

from __future__ import annotations

import re
from functools import lru_cache

_SP_BYTE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


@lru_cache(maxsize=1)
def _byte_level_decoder() -> dict[str, int]:
    """Inverse of GPT-2's bytes_to_unicode: printable stand-in character -> byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def _decoder_kind(tokenizer) -> str:
    decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
    described = repr(decoder)
    if "ByteLevel" in described:
        return "byte_level"
    if "ByteFallback" in described or "Metaspace" in described or "▁" in described:
        return "sentencepiece"
    return "other"


def token_bytes_table(tokenizer) -> list[bytes]:
    """bytes for every id in ``range(len(tokenizer))``."""
    n = len(tokenizer)
    pieces = tokenizer.convert_ids_to_tokens(list(range(n)))
    special = set(getattr(tokenizer, "all_special_tokens", [])) | set(tokenizer.get_added_vocab())
    kind = _decoder_kind(tokenizer)
    byte_of = _byte_level_decoder()
    table = []
    for token_id, piece in enumerate(pieces):
        if piece is None:
            table.append(tokenizer.decode([token_id]).encode("utf-8"))
        elif piece in special:
            table.append(piece.encode("utf-8"))
        elif kind == "byte_level" and all(c in byte_of for c in piece):
            table.append(bytes(byte_of[c] for c in piece))
        elif kind == "sentencepiece":
            match = _SP_BYTE.match(piece)
            table.append(bytes([int(match.group(1), 16)]) if match else piece.replace("▁", " ").encode("utf-8"))
        else:
            table.append(tokenizer.decode([token_id]).encode("utf-8"))
    return table
