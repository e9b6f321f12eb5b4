"""The trace: the one record type that connects every part of logprob_viz.

Everything that produces logprobs (the local runner, the OpenAI-compatible adapters) builds a
`Trace`; everything that shows or exports logprobs (the widget, plots, exports) reads one.
N tokens, K alternatives per token (K may be 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from .tokens import display_token
from .vocab_rows import NO_FLAGS, VocabRows

__all__ = ["Trace"]

# name -> (dtype, fill value used when the field is omitted)
_PER_TOKEN = {
    "token_ids": (np.int32, -1),  # int32: vocabularies are far below 2**31; halves the per-token cost
    "logprobs": (np.float32, np.nan),
    "ranks": (np.int32, 0),
    "entropy": (np.float32, np.nan),
}


@dataclass(eq=False, repr=False)
class Trace:
    """Per-token log-probabilities of a text, with the alternatives the model weighed.

    Parameters
    ----------
    tokens : list of str
        Each token's text as a person should read it.
    token_bytes : list of bytes, optional
        The exact bytes of each token; defaults to ``tokens`` encoded as UTF-8.
    token_ids : int array [N], optional
        -1 where the source gave no id.
    logprobs : float array [N], optional
        Log-probability of the chosen token; NaN where unknown (e.g. the first prompt token).
    ranks : int array [N], optional
        1-based rank of the chosen token in the full distribution; 0 where unknown.
    entropy : float array [N], optional
        Entropy of the full distribution in nats; NaN where the source only gave top-k.
    top_tokens : list of list of str, optional
        The alternatives, most likely first (at most K per token).
    top_logprobs : float array [N, K], optional
        Their logprobs, padded with -inf.
    top_ids : int array [N, K], optional
        Their token ids, -1 where unknown or padded.
    processed_logprobs, processed_top_logprobs : float arrays [N] and [N, K], optional
        The same tokens' logprobs under the distribution that was actually sampled from, when
        sampling settings (temperature, top-p, top-k) changed it; None when they did not.
    vocab : sequence of str, optional
        The text of every token id, shared by all traces of one tokenizer. With it (and
        ``top_ids``), ``top_tokens`` is read from the table on demand instead of being stored
        per token: a local trace then keeps only its numeric arrays per token.
    flags : list of list of str, optional
        Per token, codes for what the source lost or left ambiguous (e.g. "collided",
        "no_bytes"; `logprob_viz.records.flags.TOKEN_FLAGS` says what each means), so a view
        can mark it. Empty lists where nothing was lost.
    prompt_len : int
        The first ``prompt_len`` tokens are the prompt (scored, not generated).
    meta : dict
        Model, sampling settings, source ("transformers", "vllm", "openai"), ...
    """

    tokens: list[str]
    token_bytes: list[bytes] | None = None
    token_ids: Any = None
    logprobs: Any = None
    ranks: Any = None
    entropy: Any = None
    top_tokens: list[list[str]] | None = None
    top_logprobs: Any = None
    top_ids: Any = None
    processed_logprobs: Any = None
    processed_top_logprobs: Any = None
    flags: list[list[str]] | None = None
    prompt_len: int = 0
    vocab: Any = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tokens = [str(t) for t in _as_list(self.tokens, "tokens")]
        n = len(self.tokens)
        if self.token_bytes is None:
            self.token_bytes = [t.encode("utf-8") for t in self.tokens]
        self.token_bytes = [bytes(b) for b in _as_list(self.token_bytes, "token_bytes")]
        _check_len("token_bytes", len(self.token_bytes), n)
        for name, (dtype, fill) in _PER_TOKEN.items():
            setattr(self, name, _vector(name, getattr(self, name), n, dtype, fill))

        if self.vocab is not None and self.top_tokens is None:
            self._init_vocab_alternatives(n)
        else:
            self.vocab = None
            self._init_listed_alternatives(n)
        k = self.top_logprobs.shape[1]

        if (self.processed_logprobs is None) != (self.processed_top_logprobs is None):
            raise ValueError("processed_logprobs and processed_top_logprobs go together: give both or neither")
        if self.processed_logprobs is not None:
            self.processed_logprobs = _vector("processed_logprobs", self.processed_logprobs, n, np.float32, np.nan)
            self.processed_top_logprobs = _matrix(
                "processed_top_logprobs", self.processed_top_logprobs, n, k, np.float32, -np.inf
            )

        if self.flags is None:
            self.flags = [NO_FLAGS] * n
        # one shared empty row for the (usual) tokens where nothing was lost: 8 bytes, not 64
        self.flags = [[str(f) for f in row] if row else NO_FLAGS for row in _as_list(self.flags, "flags")]
        _check_len("flags", len(self.flags), n)

        if not isinstance(self.prompt_len, (int, np.integer)) or not 0 <= self.prompt_len <= n:
            raise ValueError(
                f"prompt_len must be an int between 0 and the number of tokens ({n}), got {self.prompt_len!r}"
            )
        self.prompt_len = int(self.prompt_len)
        if not isinstance(self.meta, dict):
            raise TypeError(f"meta must be a dict, got {type(self.meta).__name__}")

    def _init_listed_alternatives(self, n: int) -> None:
        if self.top_tokens is None:
            self.top_tokens = [[] for _ in range(n)]
        rows = _as_list(self.top_tokens, "top_tokens")
        # Readers build 100,000s of rows: when every entry is already a str, copy the rows in C.
        if set(map(type, chain.from_iterable(rows))) <= {str}:
            self.top_tokens = list(map(list, rows))
        else:
            self.top_tokens = [[str(a) for a in row] for row in rows]
        _check_len("top_tokens", len(self.top_tokens), n)
        longest = max(map(len, self.top_tokens), default=0)
        self.top_logprobs = _matrix("top_logprobs", self.top_logprobs, n, longest, np.float32, -np.inf)
        k = self.top_logprobs.shape[1]
        for i, row in enumerate(self.top_tokens if longest > k else ()):
            if len(row) > k:
                raise ValueError(
                    f"top_tokens[{i}] has {len(row)} alternatives but top_logprobs has only {k} "
                    "columns; give one logprob per alternative"
                )
        self.top_ids = _matrix("top_ids", self.top_ids, n, k, np.int32, -1)

    def _init_vocab_alternatives(self, n: int) -> None:
        if self.top_ids is None:
            raise ValueError("vocab= reads the alternatives' texts by id: give top_ids too")
        if isinstance(self.vocab, (str, bytes)) or not hasattr(self.vocab, "__getitem__"):
            raise TypeError(f"vocab must be a sequence of token texts indexed by id, got {type(self.vocab).__name__}")
        self.top_ids = np.asarray(self.top_ids, dtype=np.int32)
        if self.top_ids.ndim != 2 or self.top_ids.shape[0] != n:
            raise ValueError(f"top_ids must have shape [N={n}, K], got shape {self.top_ids.shape}")
        k = self.top_ids.shape[1]
        self.top_logprobs = _matrix("top_logprobs", self.top_logprobs, n, k, np.float32, -np.inf)
        if self.top_logprobs.shape[1] != k:
            raise ValueError(f"top_logprobs has {self.top_logprobs.shape[1]} columns but top_ids has {k}")
        self.top_tokens = VocabRows(self.top_ids, self.vocab)

    # -- size and slicing --------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def k(self) -> int:
        """How many alternatives per token the trace holds (columns of ``top_logprobs``)."""
        return int(self.top_logprobs.shape[1])

    def __getitem__(self, index: slice) -> Trace:
        if not isinstance(index, slice):
            raise TypeError(f"a Trace is sliced with a slice such as trace[5:20], got {type(index).__name__}")
        start, stop, step = index.indices(len(self))
        if step != 1:
            raise ValueError("a Trace slice must be contiguous (step 1)")
        processed = self.processed_logprobs is not None
        return Trace(
            tokens=self.tokens[start:stop],
            token_bytes=self.token_bytes[start:stop],
            token_ids=self.token_ids[start:stop],
            logprobs=self.logprobs[start:stop],
            ranks=self.ranks[start:stop],
            entropy=self.entropy[start:stop],
            top_tokens=None if self.vocab is not None else self.top_tokens[start:stop],
            top_logprobs=self.top_logprobs[start:stop],
            top_ids=self.top_ids[start:stop],
            processed_logprobs=self.processed_logprobs[start:stop] if processed else None,
            processed_top_logprobs=self.processed_top_logprobs[start:stop] if processed else None,
            flags=self.flags[start:stop],
            prompt_len=min(max(self.prompt_len - start, 0), stop - start),
            meta=dict(self.meta),
            vocab=self.vocab,
        )

    # -- derived numbers ---------------------------------------------------------------

    @property
    def text(self) -> str:
        """The whole text: the tokens' bytes joined, then decoded (split characters made whole)."""
        return display_token(b"".join(self.token_bytes))

    @property
    def completion(self) -> Trace:
        """The generated part (everything after the prompt)."""
        return self[self.prompt_len :]

    def mean_logprob(self) -> float:
        """Mean logprob over the tokens whose logprob is known (NaN if none is)."""
        known = self.logprobs[~np.isnan(self.logprobs)]
        return float(known.astype(np.float64).mean()) if known.size else math.nan

    def perplexity(self) -> float:
        """exp(-mean logprob) over the tokens whose logprob is known."""
        return math.exp(-self.mean_logprob())

    # -- exports -----------------------------------------------------------------------

    def to_dict(self) -> dict:
        """A JSON-safe dict from which `Trace.from_dict` rebuilds this trace exactly.

        Floats are written with ``repr`` precision, so float32 values survive the round trip;
        NaN and infinities are written as the strings "nan", "inf", "-inf" (JSON has none).
        """
        d = {
            "tokens": list(self.tokens),
            "token_bytes": [b.hex() for b in self.token_bytes],
            "token_ids": self.token_ids.tolist(),
            "logprobs": _floats_out(self.logprobs),
            "ranks": self.ranks.tolist(),
            "entropy": _floats_out(self.entropy),
            "top_tokens": [list(row) for row in self.top_tokens],
            "top_logprobs": [_floats_out(row) for row in self.top_logprobs],
            "top_ids": self.top_ids.tolist(),
            "k": self.k,
            "flags": [list(row) for row in self.flags],
            "prompt_len": self.prompt_len,
            "meta": self.meta,
        }
        if self.processed_logprobs is not None:
            d["processed_logprobs"] = _floats_out(self.processed_logprobs)
            d["processed_top_logprobs"] = [_floats_out(row) for row in self.processed_top_logprobs]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Trace:
        """Rebuild a trace written by `to_dict`."""
        n, k = len(d["tokens"]), d.get("k", 0)
        processed = d.get("processed_logprobs")
        return cls(
            tokens=d["tokens"],
            token_bytes=[bytes.fromhex(h) for h in d["token_bytes"]],
            token_ids=d["token_ids"],
            logprobs=_floats_in(d["logprobs"]),
            ranks=d["ranks"],
            entropy=_floats_in(d["entropy"]),
            top_tokens=d["top_tokens"],
            top_logprobs=np.array([_floats_in(r) for r in d["top_logprobs"]], dtype=np.float32).reshape(n, k),
            top_ids=np.array(d["top_ids"], dtype=np.int32).reshape(n, k),
            processed_logprobs=None if processed is None else _floats_in(processed),
            processed_top_logprobs=None
            if processed is None
            else np.array([_floats_in(r) for r in d["processed_top_logprobs"]], dtype=np.float32).reshape(n, k),
            flags=d.get("flags"),
            prompt_len=d["prompt_len"],
            meta=d.get("meta", {}),
        )

    def to_pandas(self):
        """One row per token: position, token, id, logprob, prob, rank, entropy, is_prompt, top-K."""
        import pandas as pd

        return pd.DataFrame(
            {
                "token": self.tokens,
                "token_id": self.token_ids,
                "logprob": self.logprobs,
                "prob": np.exp(self.logprobs),
                "rank": self.ranks,
                "entropy": self.entropy,
                "is_prompt": np.arange(len(self)) < self.prompt_len,
                "top_tokens": list(self.top_tokens),
                "top_logprobs": list(self.top_logprobs),
                "flags": self.flags,
            }
        ).rename_axis("position")

    # -- display -----------------------------------------------------------------------

    def plot(self, kind: str = "surprisal", **kwargs):
        """A plotly figure of this trace (see `logprob_viz.views.plots.plot`; needs ``logprob-viz[plot]``)."""
        from ..views.plots import plot

        return plot(self, kind, **kwargs)

    def view(self, **traits):
        """The LogprobView (a widget) of this trace, with `traits` (e.g. ``color_mode="rank"``)."""
        from ..views.logprob_view import LogprobView

        return LogprobView(self, **traits)

    def to_html(self, path=None, **view_traits):
        """This trace as one standalone, offline HTML page: written to `path` (and the path returned),
        or returned as a string without one (see `logprob_viz.views.page.to_html`)."""
        from ..views.page import to_html

        return to_html(self, path, **view_traits)

    def __repr__(self) -> str:
        source = self.meta.get("source", "?")
        model = self.meta.get("model", "?")
        return (
            f"<Trace {len(self)} tokens ({self.prompt_len} prompt), K={self.k}, "
            f"source={source}, model={model}, perplexity={self.perplexity():.3f}>"
        )

    def _repr_mimebundle_(self, **kwargs):
        # The last expression of a cell shows the widget; without a widget frontend, the repr.
        from ..views.logprob_view import LogprobView

        return LogprobView(self)._repr_mimebundle_(**kwargs)


def _as_list(value, name: str) -> list:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise TypeError(f"{name} must be a list, got {type(value).__name__}")
    return list(value)


def _check_len(name: str, got: int, n: int) -> None:
    if got != n:
        raise ValueError(f"{name} has {got} entries but there are {n} tokens; give one per token")


def _vector(name: str, value, n: int, dtype, fill) -> np.ndarray:
    if value is None:
        return np.full(n, fill, dtype=dtype)
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional (one value per token), got shape {arr.shape}")
    _check_len(name, arr.shape[0], n)
    return arr


def _matrix(name: str, value, n: int, k: int, dtype, fill) -> np.ndarray:
    if value is None:
        return np.full((n, k), fill, dtype=dtype)
    arr = np.asarray(value, dtype=dtype)
    if arr.ndim == 1 and arr.size == 0:
        arr = arr.reshape(n, 0) if n == 0 else arr
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"{name} must have shape [N={n}, K], got shape {arr.shape}")
    if arr.shape[1] < k:
        raise ValueError(f"{name} has {arr.shape[1]} columns but some token has {k} alternatives")
    return arr


def _floats_out(arr: np.ndarray) -> list:
    # float(np.float32) is exact in float64, and JSON keeps float64 exactly through repr.
    return [float(x) if math.isfinite(x) else str(float(x)) for x in arr.tolist()]


def _floats_in(values) -> np.ndarray:
    return np.array([float(x) for x in values], dtype=np.float32)
