"""The host-side record of one local generation: per-token arrays filled chunk by chunk, from
which a growing snapshot or the final `Trace` is built.

Arrays are allocated once for prompt + max_new_tokens in the Trace's own dtypes, so a snapshot
is numpy views plus copies of two lists of pointers; the alternatives' texts are read from the
runner's shared vocabulary table (``Trace(vocab=...)``), not stored per token. The cost of a
snapshot is measured in benchmarks/runner.py (streaming).
"""

from __future__ import annotations

import numpy as np

from ...records.trace import Trace
from ...records.trace_fields import ALTERNATIVES, FIELDS, PER_TOKEN, PROCESSED
from ..engine import ModelEngine


class Recorder:
    """Tokens of one trace, added in chunks; ``engine`` gives token bytes, texts and the vocabulary."""

    def __init__(self, engine: ModelEngine, prompt_ids: list[int], k: int, capacity: int, processed: bool):
        self.engine, self.k, self.prompt_len = engine, k, len(prompt_ids)
        fields = [FIELDS[name] for name in (*PER_TOKEN, *ALTERNATIVES, *(PROCESSED if processed else ()))]
        self.arrays = {f.name: np.empty((capacity, k) if f.per_alternative else capacity, f.dtype) for f in fields}
        self.n = 0
        self.tokens: list[str] = []
        self.token_bytes: list[bytes] = []
        # The first prompt token has no context: it is recorded, not scored ("unknown" but its id).
        first = {f.name: f.empty(1, k) for f in fields}
        first["token_ids"][0] = prompt_ids[0]
        self._append(first)

    @property
    def n_new(self) -> int:
        return self.n - self.prompt_len

    def add(self, part: dict) -> None:
        """Append host arrays from `distribution.summarize` (prompt rows lack the processed fields)."""
        if not part or len(part["token_ids"]) == 0:
            return
        m = len(part["token_ids"])
        for name in PROCESSED:
            if name in self.arrays and name not in part:
                part = {**part, name: FIELDS[name].empty(m, self.k)}
        self._append(part)

    def _append(self, part: dict) -> None:
        m = len(part["token_ids"])
        for name, buffer in self.arrays.items():
            buffer[self.n : self.n + m] = part[name]
        engine = self.engine
        for token_id in part["token_ids"].tolist():
            self.token_bytes.append(engine.bytes_of(token_id))
            self.tokens.append(engine.text_of(token_id))
        self.n += m

    def stop_at(self, eos: list[int], since: int) -> bool:
        """Cut after the first end-of-sequence token at or after position ``since``; True if found."""
        if not eos:
            return False
        hits = np.flatnonzero(np.isin(self.arrays["token_ids"][since : self.n], eos))
        if not hits.size:
            return False
        self.n = since + int(hits[0]) + 1
        del self.tokens[self.n :], self.token_bytes[self.n :]
        return True

    def trace(self, meta: dict, *, copy: bool = True) -> Trace:
        """The trace so far; ``copy=False`` for a snapshot (views of the buffers, cheap)."""
        n = self.n
        arrays = {name: (a[:n].copy() if copy else a[:n]) for name, a in self.arrays.items()}
        if self.n_new == 0:  # nothing was sampled: no processed distribution to show
            arrays.pop("processed_logprobs", None)
            arrays.pop("processed_top_logprobs", None)
        return Trace(
            tokens=self.tokens[:n],
            token_bytes=self.token_bytes[:n],
            vocab=self.engine.vocab,
            prompt_len=self.prompt_len,
            meta=dict(meta),
            **arrays,
        )
