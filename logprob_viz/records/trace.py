"""The trace: the one record type that connects every part of logprob_viz.

Everything that produces logprobs (the local runner, the OpenAI-compatible adapters) builds a
`Trace`; everything that shows or exports logprobs (the widget, plots, exports) reads one.
N tokens, K alternatives per token (K may be 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import chain, compress, pairwise
from typing import Any

import numpy as np

from .flags import flag_warnings
from .json.fields import fields_of
from .tokens import display_token
from .trace_fields import FIELDS, PER_TOKEN, PROCESSED, as_array, as_list, as_list_of, check_len, is_int, matrix, vector
from .trace_json import trace_from_dict, trace_to_dict
from .viewable import Viewable, show
from .vocab_rows import NO_FLAGS, VocabRows

__all__ = ["Trace"]


class SparseFlags:
    """`Trace.flags`, kept as None while no token has a flag (most traces: a local one always).

    A list of one shared empty row per token is 8 bytes a token; it is made when `flags` is first
    read (and kept, so ``trace.flags[i] = [...]`` stays), never for the trace's own uses (slices,
    joins, warnings, exports read ``_flag_rows``). As a dataclass field's default, its
    ``__get__`` on the class gives None.
    """

    def __get__(self, trace, owner=None):
        if trace is None:
            return None
        rows = trace._flag_rows
        if rows is None:
            rows = trace._flag_rows = [NO_FLAGS] * len(trace.tokens)
        return rows

    def __set__(self, trace, value) -> None:
        trace.__dict__["_flag_rows"] = value


@dataclass(eq=False, repr=False)
class Trace(Viewable):
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
        Model, sampling settings, source ("transformers", "vllm", "openai"), ...;
        ``meta["warnings"]``: the source's notes about the response as a whole (`warnings` adds
        the flags' words to them).

    The numeric fields' dtypes and "unknown" values are `logprob_viz.records.trace_fields.FIELDS`.
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
    flags: list[list[str]] | None = SparseFlags()  # type: ignore[assignment]  (None by default)
    prompt_len: int = 0
    vocab: Any = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tokens = as_list_of(str, self.tokens, "tokens")
        n = len(self.tokens)
        if self.token_bytes is None:
            self.token_bytes = [t.encode("utf-8") for t in self.tokens]
        self.token_bytes = as_list_of(bytes, self.token_bytes, "token_bytes")
        check_len("token_bytes", len(self.token_bytes), n)
        for name in PER_TOKEN:
            setattr(self, name, vector(name, getattr(self, name), n))

        if self.vocab is not None and self.top_tokens is None:
            self._init_vocab_alternatives(n)
        else:
            self.vocab = None
            self._init_listed_alternatives(n)
        k = self.top_logprobs.shape[1]

        if (self.processed_logprobs is None) != (self.processed_top_logprobs is None):
            raise ValueError("processed_logprobs and processed_top_logprobs go together: give both or neither")
        if self.processed_logprobs is not None:
            self.processed_logprobs = vector("processed_logprobs", self.processed_logprobs, n)
            self.processed_top_logprobs = matrix("processed_top_logprobs", self.processed_top_logprobs, n, k)

        rows = self._flag_rows
        if rows is not None:
            rows = as_list(rows, "flags")
            check_len("flags", len(rows), n)
            # one shared empty row for the (usual) tokens where nothing was lost: 8 bytes, not 64
            rows = [list(map(str, row)) if row else NO_FLAGS for row in rows] if any(rows) else None
        self._flag_rows = rows  # None: no token lost anything (no list kept until `flags` is read)

        if not is_int(self.prompt_len) or not 0 <= self.prompt_len <= n:
            raise ValueError(
                f"prompt_len must be an int between 0 and the number of tokens ({n}), got {self.prompt_len!r}"
            )
        self.prompt_len = int(self.prompt_len)
        if not isinstance(self.meta, dict):
            raise TypeError(f"meta must be a dict, got {type(self.meta).__name__}")

    def _init_listed_alternatives(self, n: int) -> None:
        if self.top_tokens is None:
            self.top_tokens = [[] for _ in range(n)]
        rows = as_list(self.top_tokens, "top_tokens")
        # Readers build 100,000s of rows: when every entry is already a str, copy the rows in C.
        if set(map(type, chain.from_iterable(rows))) <= {str}:
            self.top_tokens = list(map(list, rows))
        else:
            self.top_tokens = [[str(a) for a in row] for row in rows]
        check_len("top_tokens", len(self.top_tokens), n)
        longest = max(map(len, self.top_tokens), default=0)
        self.top_logprobs = matrix("top_logprobs", self.top_logprobs, n, longest)
        k = self.top_logprobs.shape[1]
        for i, row in enumerate(self.top_tokens if longest > k else ()):
            if len(row) > k:
                raise ValueError(
                    f"top_tokens[{i}] has {len(row)} alternatives but top_logprobs has only {k} "
                    "columns; give one logprob per alternative"
                )
        self.top_ids = matrix("top_ids", self.top_ids, n, k)

    def _init_vocab_alternatives(self, n: int) -> None:
        if self.top_ids is None:
            raise ValueError("vocab= reads the alternatives' texts by id: give top_ids too")
        if isinstance(self.vocab, (str, bytes)) or not hasattr(self.vocab, "__getitem__"):
            raise TypeError(f"vocab must be a sequence of token texts indexed by id, got {type(self.vocab).__name__}")
        self.top_ids = as_array("top_ids", self.top_ids)
        if self.top_ids.ndim != 2 or self.top_ids.shape[0] != n:
            raise ValueError(f"top_ids must have shape [N={n}, K], got shape {self.top_ids.shape}")
        k = self.top_ids.shape[1]
        self.top_logprobs = matrix("top_logprobs", self.top_logprobs, n, k)
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
        return Trace(
            tokens=self.tokens[start:stop],
            token_bytes=self.token_bytes[start:stop],
            top_tokens=None if self.vocab is not None else self.top_tokens[start:stop],
            flags=None if self._flag_rows is None else self._flag_rows[start:stop],
            prompt_len=min(max(self.prompt_len - start, 0), stop - start),
            meta=dict(self.meta),
            vocab=self.vocab,
            **{name: getattr(self, name)[start:stop] for name in self._array_names()},
        )

    def _array_names(self) -> tuple[str, ...]:
        """The numeric fields this trace holds (the processed pair only when it has one)."""
        names = (*PER_TOKEN, "top_logprobs", "top_ids")
        return names if self.processed_logprobs is None else (*names, *PROCESSED)

    @classmethod
    def concat(cls, *traces: Trace) -> Trace:
        """One trace of `traces` in order: a scored prompt and its completion, a stream's chunks,
        a token appended by hand.

        K becomes the largest K, shorter rows padded as a trace pads them (-inf, id -1). The
        sampled-from logprobs are kept when any part has them (NaN / -inf for the rows of a part
        that has none). The shared vocabulary is kept when every part reads its alternatives from
        the same one; otherwise the alternatives' texts are copied. ``meta`` is merged (later
        parts win), the source's warnings kept from every part. A part with prompt tokens may only
        follow parts that are all prompt: a trace's prompt comes first.
        """
        if not traces or not all(isinstance(t, Trace) for t in traces):
            raise TypeError("Trace.concat joins one or more Traces: Trace.concat(head, tail, ...)")
        for before, part in pairwise(traces):
            if part.prompt_len and before.prompt_len != len(before):
                raise ValueError(f"cannot append a trace with a prompt of {part.prompt_len} tokens after generated "
                                 "tokens (a trace's prompt comes first); append its generated part (trace.completion)")
        k = max(t.k for t in traces)
        arrays = {}
        for name in (*PER_TOKEN, "top_logprobs", "top_ids", *PROCESSED):
            if name in PROCESSED and all(t.processed_logprobs is None for t in traces):
                continue
            field = FIELDS[name]
            parts = [getattr(t, name) if name in t._array_names() else field.empty(len(t), k) for t in traces]
            arrays[name] = np.concatenate([field.widen(p, k) if field.per_alternative else p for p in parts])
        vocabs = {id(t.vocab): t.vocab for t in traces if len(t)}
        (vocab,) = vocabs.values() if len(vocabs) == 1 else (None,)
        meta = {key: value for t in traces for key, value in t.meta.items()}
        notes = list(dict.fromkeys(w for t in traces for w in t.meta.get("warnings", ())))
        if notes:
            meta["warnings"] = notes
        return cls(
            tokens=list(chain.from_iterable(t.tokens for t in traces)),
            token_bytes=list(chain.from_iterable(t.token_bytes for t in traces)),
            top_tokens=None if vocab is not None else [list(row) for t in traces for row in t.top_tokens],
            flags=None if all(t._flag_rows is None for t in traces) else list(chain.from_iterable(
                t.flags for t in traces)),
            prompt_len=sum(t.prompt_len for t in traces),
            meta=meta,
            vocab=vocab,
            **arrays,
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

    @property
    def warnings(self) -> list[str]:
        """What the source lost or left ambiguous, in words: the source's own notes
        (``meta["warnings"]``, about the response as a whole) and one sentence per kind of flag,
        with its positions, derived from ``flags`` when asked (so it follows slices and joins)."""
        return [*self.meta.get("warnings", ()), *flag_warnings(self._flag_rows or ())]

    @property
    def flags_if_any(self) -> list[list[str]] | None:
        """`flags`, or None when no token has a flag (without making the per-token list of empty rows)."""
        return self._flag_rows

    def flagged(self) -> dict[int, list[str]]:
        """{position: codes} of the tokens whose source lost something (`flags` without its empty rows;
        reads no per-token list when no token has a flag)."""
        rows = self._flag_rows
        return {} if rows is None else dict(compress(enumerate(rows), rows))  # (in C: no loop here)

    def mean_logprob(self) -> float:
        """Mean logprob over the tokens whose logprob is known (NaN if none is)."""
        known = self.logprobs[~np.isnan(self.logprobs)]
        return float(known.astype(np.float64).mean()) if known.size else math.nan

    def perplexity(self) -> float:
        """exp(-mean logprob) over the tokens whose logprob is known."""
        return math.exp(-self.mean_logprob())

    def fields(self):
        """A row per leaf value of the JSON in the completion (the whole text when there is none), or of
        the tool calls' arguments: path, value, first/last token, logprob, prob, the least likely
        token, the alternatives; ``.error`` says where a broken JSON broke, or that there is no JSON
        (then there are no rows: it never raises for that) (`lv.Fields`, see
        `logprob_viz.records.json.fields`)."""
        return fields_of(self)

    # -- exports -----------------------------------------------------------------------

    def to_dict(self) -> dict:
        """A JSON-safe dict from which `Trace.from_dict` rebuilds this trace exactly (see `trace_json`)."""
        return trace_to_dict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Trace:
        """Rebuild a trace written by `to_dict`."""
        return trace_from_dict(cls, d)

    def to_pandas(self):
        """One row per token: position, token, id, logprob, prob, rank, entropy, is_prompt, top-K."""
        import pandas as pd  # optional dependency: only the table needs it

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
                "flags": self._flag_rows or [NO_FLAGS] * len(self),
            }
        ).rename_axis("position")

    # -- display -----------------------------------------------------------------------

    def plot(self, kind: str = "surprisal", **kwargs):
        """A plotly figure of this trace (see `logprob_viz.views.plots.plot`; needs ``logprob-viz[plot]``)."""
        return show(self, "plot", kind, **kwargs)

    def view(self, **traits):
        """The LogprobView (a widget) of this trace, with `traits` (e.g. ``color_mode="rank"``)."""
        return show(self, "view", **traits)

    def to_svg(self, color_mode: str = "probability", palette: str = "viridis", width: int = 720,
               pinned: int | None = None, **options) -> str:
        """The heatmap as SVG text, in the view's colours; ``pinned``: a token whose alternatives are
        drawn beside it (see `logprob_viz.views.export_svg.to_svg`)."""
        return show(self, "to_svg", color_mode=color_mode, palette=palette, width=width, pinned=pinned, **options)

    def to_latex(self, color_mode: str = "probability", palette: str = "viridis", **options) -> str:
        """A ``\\colorbox`` per token, LaTeX specials escaped (see `logprob_viz.views.pictures.to_latex`)."""
        return show(self, "to_latex", color_mode=color_mode, palette=palette, **options)

    def __repr__(self) -> str:
        source = self.meta.get("source", "?")
        model = self.meta.get("model", "?")
        return (
            f"<Trace {len(self)} tokens ({self.prompt_len} prompt), K={self.k}, "
            f"source={source}, model={model}, perplexity={self.perplexity():.3f}>"
        )
