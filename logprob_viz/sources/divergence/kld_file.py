"""`lv.read_kld(path)`: the base-logits file that ``llama-perplexity --kl-divergence-base FILE`` writes,
as the base of `lv.divergence` (a runner is then compared with a llama.cpp base without the base model).

The layout, read from llama.cpp's tools/perplexity/perplexity.cpp (``perplexity`` writes it,
``kl_divergence`` reads it), all little-endian:

    "_logits_"                      8 bytes of magic
    n_ctx, n_vocab, n_chunk         int32 each
    tokens                          int32 [n_chunk * n_ctx]: the tokenized text, chunk after chunk
    then per chunk, per scored position j = n_ctx/2 ... n_ctx - 2 (the logits at j predict token j + 1):
        scale, min_log_prob         two float32 (as 4 uint16)
        codes                       uint16 [n_vocab], padded with one more uint16 to an even count
    so a record is nv = 2*((n_vocab + 1)/2) + 4 uint16, and a chunk n_ctx - 1 - n_ctx/2 records.

A code c means the log-probability ``scale*c + min_log_prob`` (llama.cpp's float arithmetic, kept here:
it decodes in float32), where min_log_prob is the log-probability of the logit max(min logit, max - 16)
and everything at or below it has code 0. llama.cpp evaluates each chunk alone (its KV cache cleared),
with the chunk's first token replaced by BOS when the model's vocabulary adds one (``bos=`` here).
"""

from __future__ import annotations

import os

import numpy as np

__all__ = ["KldFile", "read_kld", "MAGIC"]

MAGIC = b"_logits_"
_HEADER = len(MAGIC) + 3 * 4


class KldFile:
    """A llama.cpp base-logits file, mapped (not read) into memory: ``n_ctx``, ``n_vocab``, ``n_chunk``,
    ``tokens`` (int32 [n_chunk * n_ctx]) and ``records`` (uint16 [n_chunk, n_scored, nv], a memmap).

    As the base of `lv.divergence`, each chunk is a text and its scored positions are llama.cpp's: the
    second half of the chunk (positions n_ctx/2 + 1 ... n_ctx - 1). Token texts come from the candidate's
    tokenizer (the file holds ids only).
    """

    kind = "whole"

    def __init__(self, path, n_ctx: int, n_vocab: int, n_chunk: int, tokens: np.ndarray, records: np.ndarray,
                 bos: int | None = None):
        self.path, self.n_ctx, self.n_vocab, self.n_chunk = str(path), n_ctx, n_vocab, n_chunk
        self.tokens, self.records, self.bos = tokens, records, bos
        self.first = n_ctx // 2  # llama.cpp: `const int first = n_ctx/2;`
        self.engine = None  # the candidate's, for the tokens' texts (lv.divergence sets it)

    def __repr__(self) -> str:
        return (f"<KldFile {os.path.basename(self.path)}: {self.n_chunk} chunks of {self.n_ctx} tokens, "
                f"vocabulary {self.n_vocab}, {self.n_chunk * self.records.shape[1]} scored positions>")

    @property
    def vocab_size(self) -> int:
        return self.n_vocab

    @property
    def texts(self) -> list[list[int]]:
        """Each chunk's token ids, as llama.cpp evaluated them (BOS first when ``bos`` is given)."""
        chunks = self.tokens.reshape(self.n_chunk, self.n_ctx).tolist()
        if self.bos is not None:
            for chunk in chunks:
                chunk[0] = self.bos
        return chunks

    def ids_of(self, texts: list[list[int]]) -> list[list[int]]:
        return [list(ids) for ids in texts]

    def positions(self, item: int, ids: list[int]) -> np.ndarray:
        return np.arange(self.first + 1, self.n_ctx)

    def decode(self, chunk: int, positions: np.ndarray) -> np.ndarray:
        """The base's log-probabilities (T, n_vocab) that predict ``positions`` of ``chunk``, as llama.cpp
        decodes them (float32 ``scale*code + min_log_prob``), in float64."""
        at = np.asarray(positions) - 1 - self.first
        contiguous = len(at) and at[-1] - at[0] == len(at) - 1 and (np.diff(at) == 1).all()
        rows = self.records[chunk, at[0] : at[-1] + 1] if contiguous else self.records[chunk, at]  # (T, nv)
        head = np.ascontiguousarray(rows[:, :4]).view(np.float32)  # (T, 2): scale, min_log_prob
        # One float32 buffer, written in place: the uint16 codes are cast to float32 inside the product
        # (exact: every code is an integer below 2^24), then the same two float32 roundings as llama.cpp's
        # scale*code + min. Separate arrays for the cast, the product and the sum took ~1.3x the CPU time over
        # a 100 MB file (benchmarks/divergence.py times both); what is left is mostly writing the float64 rows.
        logp = np.empty((len(at), self.n_vocab), dtype=np.float32)
        np.multiply(rows[:, 4 : 4 + self.n_vocab], head[:, :1], out=logp, dtype=np.float32)
        np.add(logp, head[:, 1:2], out=logp)
        return logp.astype(np.float64)

    def batch_rows(self, items: list[int], id_lists):
        return lambda b, positions, k: (self.decode(items[b], positions), None)  # alternatives: found by numpy

    def tokens_of(self, ids: list[int]) -> tuple[list[str], list[bytes]]:
        if self.engine is None:
            return [str(i) for i in ids], [str(i).encode() for i in ids]
        return [self.engine.text_of(i) for i in ids], [self.engine.bytes_of(i) for i in ids]

    @property
    def vocab(self):
        return None if self.engine is None else self.engine.vocab

    def describe(self) -> dict:
        return {"source": "llama-perplexity --kl-divergence-base", "path": self.path, "n_ctx": self.n_ctx,
                "n_chunk": self.n_chunk}


def read_kld(path, *, bos: int | None = None) -> KldFile:
    """Read the file ``llama-perplexity --kl-divergence-base FILE`` writes, as a base for `lv.divergence`.

    ``bos``: the token id llama.cpp put first in every chunk when the model's vocabulary adds BOS (its
    log says ``add_bos``); None when it does not. Errors name what is wrong: not such a file, a header
    that does not add up, a file cut short (which chunk).
    """
    path = os.fspath(path)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(_HEADER)
    if len(head) < len(MAGIC) or head[: len(MAGIC)] != MAGIC:
        raise ValueError(f"{path} is not a llama-perplexity base-logits file: it does not start with "
                         f"{MAGIC!r} (got {head[:8]!r}); write one with llama-perplexity --kl-divergence-base FILE")
    if len(head) < _HEADER:
        raise ValueError(f"{path} is truncated: {size} bytes, shorter than its 20-byte header")
    n_ctx, n_vocab, n_chunk = (int(v) for v in np.frombuffer(head[len(MAGIC):], dtype="<i4"))
    if n_ctx < 2 or n_vocab < 1 or n_chunk < 1:
        raise ValueError(f"{path}: its header says n_ctx={n_ctx}, n_vocab={n_vocab}, n_chunk={n_chunk}; a base "
                         "file has n_ctx >= 2 and at least one chunk and token")
    n_scored = n_ctx - 1 - n_ctx // 2
    nv = 2 * ((n_vocab + 1) // 2) + 4
    tokens_end = _HEADER + 4 * n_chunk * n_ctx
    expected = tokens_end + 2 * n_chunk * n_scored * nv
    if size < expected:
        per_chunk = 2 * n_scored * nv
        whole = max(0, (size - tokens_end) // per_chunk)
        raise ValueError(f"{path} is truncated: {size} bytes where n_ctx={n_ctx}, n_vocab={n_vocab}, "
                         f"n_chunk={n_chunk} need {expected}; it holds the records of {whole} whole chunks "
                         "(was llama-perplexity stopped before the end?)")
    if size > expected:
        raise ValueError(f"{path} has {size - expected} bytes more than n_ctx={n_ctx}, n_vocab={n_vocab}, "
                         f"n_chunk={n_chunk} account for: not a llama-perplexity base-logits file of this layout")
    tokens = np.fromfile(path, dtype="<i4", count=n_chunk * n_ctx, offset=_HEADER)
    if (tokens < 0).any() or (tokens >= n_vocab).any():
        raise ValueError(f"{path}: token ids outside the vocabulary of {n_vocab} tokens")
    records = np.memmap(path, dtype="<u2", mode="r", offset=tokens_end, shape=(n_chunk, n_scored, nv))
    return KldFile(path, n_ctx, n_vocab, n_chunk, tokens, records, bos=bos)
