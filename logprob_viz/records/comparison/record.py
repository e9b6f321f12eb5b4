"""Traces side by side: alignment by bytes, whatever the tokenizers (`lv.compare`).

Two models' tokens rarely line up, so per-token numbers cannot be put next to each other; their
bytes can. `compare(traces)` cuts the shared text into *spans*, the coarsest pieces on which
every trace's token boundaries agree (and that hold whole characters), and gives each trace's
logprob of each span (the sum of its tokens' logprobs inside it). Bits per byte over the spans
every trace knows is the measure that is fair across tokenizers. When the texts differ (two
prompts, two samples, two branches), the traces are aligned on their common prefix and each one's
rest (its *tail*, its own continuation) is kept as it is and scored on its own: every number says
over which part it is taken (`Comparison.scored`, `logprob_viz.records.comparison.scored`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from ..tokens import display_token
from ..trace import Trace
from ..trace_fields import is_int
from ..viewable import Viewable, show
from .checks import check_input, common_prefix, describe, unknown_start_hint
from .scored import PARTS, Scored, scored_aligned, scored_rows

__all__ = ["Comparison", "ComparisonWarning", "compare"]


class ComparisonWarning(UserWarning):
    """A number of a comparison is NaN: the warning says why and what to compare instead."""


@dataclass
class _Row:
    """One trace cut at the aligned spans."""

    starts: np.ndarray  # (N,) int64: each token's first byte in the trace's text
    span_of: np.ndarray  # (N,) int64: the aligned span holding each token, -1 for the tail
    tail_from: int  # first token after the aligned part (== N when the texts are the same)


def compare(traces, labels=None) -> Comparison:
    """Align two or more traces by bytes and put them side by side.

    Parameters
    ----------
    traces : list of Trace (or dict label -> Trace)
        Two or more traces. Same text: aligned over the whole text, whatever their tokenizers.
        Different texts: aligned over their common prefix (up to the last byte offset where
        every trace has a token boundary); the rest of each is its tail.
    labels : list of str, optional
        One distinct label per trace; default: its index and model name.

    Returns
    -------
    Comparison
        Shows itself as the compare view; ``.to_pandas()``, ``.bits_per_byte()``, ``.plot()``.
    """
    traces, labels = check_input(traces, labels)
    texts = [b"".join(tr.token_bytes) for tr in traces]
    prefix = common_prefix(texts)
    same = all(len(t) == prefix for t in texts)
    # Token start offsets; a boundary is a byte offset where a token starts or the text ends.
    starts = []
    for tr in traces:
        lengths = np.fromiter((len(b) for b in tr.token_bytes), dtype=np.int64, count=len(tr))
        starts.append(np.concatenate([[0], np.cumsum(lengths)[:-1]]))
    boundaries = None
    for st, text in zip(starts, texts, strict=True):
        own = np.union1d(st, [len(text)])
        own = own[own <= prefix]
        boundaries = own if boundaries is None else np.intersect1d(boundaries, own)
    # Cut only between whole characters: where two tokenizers split a character at the same byte,
    # the span keeps the character whole, so every span's text reads as text.
    head = np.frombuffer(texts[0][:prefix], dtype=np.uint8)
    inside_char = np.append((head & 0xC0) == 0x80, False)  # (prefix + 1,): a UTF-8 continuation byte
    boundaries = boundaries[~inside_char[boundaries]]
    shared = int(boundaries[-1]) if boundaries.size else 0  # bytes [0, shared) are aligned
    if shared == 0:
        raise _nothing_in_common(traces, texts, prefix)
    cuts = boundaries[boundaries <= shared]  # (S + 1,) from 0 to shared
    rows = []
    for st in starts:
        # A token belongs to the span holding its first byte; an empty token (no bytes) to the span
        # starting at its offset, or the last span when it sits at the very end of the shared part.
        span_of = np.searchsorted(cuts, st, side="right") - 1
        in_shared = st < shared
        tail_from = int(np.argmin(in_shared)) if not in_shared.all() else len(st)
        # an empty token right at `shared` with the texts identical belongs to the last span
        if same:
            span_of = np.minimum(span_of, len(cuts) - 2)
            tail_from = len(st)
        span_of[tail_from:] = -1
        rows.append(_Row(starts=st, span_of=span_of, tail_from=tail_from))
    return Comparison(traces, labels, cuts, rows, texts, prefix, same)


def _nothing_in_common(traces, texts: list[bytes], prefix: int) -> ValueError:
    """The error for traces without one shared token boundary: what they share, and what compare() aligns."""
    return ValueError(
        "these traces have nothing in common to align on: "
        + (
            f"their texts differ from the first byte ({describe(traces)})"
            if prefix == 0
            else f"their texts share only {prefix} bytes ({display_token(texts[0][:prefix])!r}) and no token "
            f"boundary inside them ({describe(traces)})"
        )
        + ". compare() aligns the same text (or texts with a common beginning) by bytes."
        + unknown_start_hint(traces)
    )


class Comparison(Viewable):
    """Traces aligned by bytes (made by `compare`).

    Attributes
    ----------
    traces, labels : list
        The traces, and one label each.
    span_starts, span_ends : int arrays [S]
        Each aligned span's byte range in the shared text.
    span_logprobs : float64 array [R, S]
        Per trace, the sum of its tokens' logprobs in each span; NaN where any is unknown.
    span_tokens : int array [R, S]
        Per trace, how many of its tokens each span holds.
    shared_bytes : int
        How many bytes from the start are aligned (the whole text when the texts are the same).
    same_text : bool
        Whether every trace has exactly the same bytes.
    """

    def __init__(self, traces, labels, cuts, rows, texts, prefix, same):
        self.traces: list[Trace] = traces
        self.labels: list[str] = labels
        self.span_starts = cuts[:-1].astype(np.int64)
        self.span_ends = cuts[1:].astype(np.int64)
        self.shared_bytes = int(cuts[-1])
        self.common_prefix = int(prefix)
        self.same_text = bool(same)
        self.aligned_rows = rows  # per trace: which span holds each token (span_of), where its tail starts
        self.byte_texts = texts  # per trace: its whole text as bytes (what the spans cut)
        n_spans = len(self.span_starts)
        self.span_logprobs = np.zeros((len(traces), n_spans), dtype=np.float64)
        self.span_tokens = np.zeros((len(traces), n_spans), dtype=np.int64)
        for r, (tr, row) in enumerate(zip(traces, rows, strict=True)):
            mine = row.span_of[: row.tail_from]
            # np.add.at with NaN: any unknown token makes its span unknown, as it must
            np.add.at(self.span_logprobs[r], mine, tr.logprobs[: row.tail_from].astype(np.float64))
            np.add.at(self.span_tokens[r], mine, 1)

    # -- the parts ---------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.span_starts)

    @property
    def span_texts(self) -> list[str]:
        """Each span's text (a piece of a split character shown by its bytes)."""
        text = self.byte_texts[0]
        bounds = zip(self.span_starts.tolist(), self.span_ends.tolist(), strict=True)
        return [display_token(text[a:b]) for a, b in bounds]

    def token_spans(self, label_or_index) -> np.ndarray:
        """For each token of one trace, the index of the span holding it (-1: in its tail)."""
        return self.aligned_rows[self.index_of(label_or_index)].span_of

    @property
    def tails(self) -> dict[str, Trace]:
        """Each trace's part after the aligned text (empty traces when the texts are the same)."""
        rows = zip(self.labels, self.traces, self.aligned_rows, strict=True)
        return {label: tr[row.tail_from :] for label, tr, row in rows}

    def index_of(self, label_or_index) -> int:
        if is_int(label_or_index):
            if not -len(self.labels) <= label_or_index < len(self.labels):
                raise IndexError(f"row {label_or_index} out of range: there are {len(self.labels)} traces")
            return int(label_or_index) % len(self.labels)
        if label_or_index in self.labels:
            return self.labels.index(label_or_index)
        raise KeyError(f"no trace labelled {label_or_index!r}; the labels are {self.labels}")

    # -- numbers -----------------------------------------------------------------------

    @property
    def known(self) -> np.ndarray:
        """(S,) bool: spans whose logprob every trace knows, the part bits per byte is taken over."""
        return ~np.isnan(self.span_logprobs).any(axis=0)

    def known_bytes(self) -> int:
        """How many bytes the spans every trace knows cover."""
        return int((self.span_ends - self.span_starts)[self.known].sum())

    def scored(self, over: str = "aligned") -> dict[str, Scored]:
        """Per label: its numbers over one part of its text, and what they are computed over.

        ``over="aligned"``: the aligned spans every row knows (the same bytes for every row; fair
        across tokenizers). ``"own"``: each row's own continuation, the bytes after the part every
        row shares (where branches and prompts differ). ``"text"``: each row's whole text. Each
        `Scored` has ``bits_per_byte``, ``perplexity``, the ``tokens`` and ``bytes`` counted, the
        byte range, and a ``reason`` when nothing could be counted.
        """
        if over not in PARTS:
            raise ValueError(f"over must be one of {', '.join(map(repr, PARTS))}, got {over!r}")
        rows = scored_aligned(self) if over == "aligned" else scored_rows(self, over)
        return dict(zip(self.labels, rows, strict=True))

    def _numbers(self, over: str, name: str) -> dict[str, float]:
        scored = self.scored(over)
        reasons = {label: s.reason for label, s in scored.items() if s.reason}
        if reasons:
            said = "; ".join(dict.fromkeys(reasons.values()))  # one reason shared by every row is said once
            warnings.warn(f"{name}(over={over!r}) is NaN for {', '.join(reasons)}: {said}", ComparisonWarning,
                          stacklevel=3)
        return {label: getattr(s, name) for label, s in scored.items()}

    def bits_per_byte(self, over: str | None = None) -> dict[str, float]:
        """Per label: −Σ log2 p / bytes over one part of the texts (see `scored`; default the aligned spans).

        Over ``"aligned"`` every trace pays for the same bytes: fair across tokenizers. Where the
        texts differ (two prompts, two branches) that is only the part they share, the same number
        for one model in every row: with no ``over`` given a `ComparisonWarning` then says what the
        numbers cover and how to ask for each row's own continuation (``over="own"``); naming
        ``over="aligned"`` asks for the shared part without it. Where a number cannot be computed
        it is NaN and a `ComparisonWarning` says why and what to do.
        """
        if over is None and not self.same_text:
            warnings.warn(f"bits_per_byte() covers only the {self.shared_bytes} bytes every row shares (the texts "
                          "differ after them): over='own' gives each row's own continuation, over='aligned' names "
                          "the shared part", ComparisonWarning, stacklevel=2)
        return self._numbers("aligned" if over is None else over, "bits_per_byte")

    def perplexity(self, over: str = "aligned") -> dict[str, float]:
        """Per label: exp(−mean token logprob) over its tokens in one part of the texts (see `scored`).

        Per token, so it depends on the tokenizer: put models with different tokenizers side by
        side with `bits_per_byte`. NaN with a `ComparisonWarning` where nothing is counted.
        """
        return self._numbers(over, "perplexity")

    def difference(self, a=0, b=1) -> np.ndarray:
        """(S,) span logprob of trace `a` minus that of trace `b` (labels or indices); NaN where unknown."""
        return self.span_logprobs[self.index_of(a)] - self.span_logprobs[self.index_of(b)]

    def summary(self):
        """A pandas table, one row per label: the numbers over the aligned part and over its own continuation.

        ``bits_per_byte``/``perplexity`` over the aligned spans every row knows (``aligned_bytes``
        bytes, ``aligned_scored`` of this row's tokens); ``own_bits_per_byte``/``own_perplexity``
        over its own continuation (``own_scored`` tokens, ``own_bytes`` bytes with a logprob, of
        ``tail_bytes``); ``note`` says why a number is NaN. ``aligned_tokens``: tokens before the tail.
        """
        import pandas as pd  # optional dependency: only the tables need it

        aligned, own = self.scored("aligned"), self.scored("own")
        notes = ["; ".join(dict.fromkeys(r for r in (aligned[x].reason, own[x].reason) if r)) for x in self.labels]
        return pd.DataFrame(
            {
                "bits_per_byte": [aligned[x].bits_per_byte for x in self.labels],
                "perplexity": [aligned[x].perplexity for x in self.labels],
                "aligned_bytes": [aligned[x].bytes for x in self.labels],
                "aligned_scored": [aligned[x].tokens for x in self.labels],
                "own_bits_per_byte": [own[x].bits_per_byte for x in self.labels],
                "own_perplexity": [own[x].perplexity for x in self.labels],
                "own_scored": [own[x].tokens for x in self.labels],
                "own_bytes": [own[x].bytes for x in self.labels],
                "tokens": [len(tr) for tr in self.traces],
                "aligned_tokens": [row.tail_from for row in self.aligned_rows],
                "bytes": [len(t) for t in self.byte_texts],
                "tail_bytes": [len(t) - self.shared_bytes for t in self.byte_texts],
                "note": notes,
            },
            index=pd.Index(self.labels, name="label"),
        )

    def to_pandas(self):
        """One row per aligned span: start, end, text, then per label its logprob and token count.

        Columns ``logprob:<label>`` (NaN where unknown) and ``tokens:<label>``. The tails (text
        after the first difference) are not spans; see `tails`.
        """
        import pandas as pd  # optional dependency: only the tables need it

        columns = {"start": self.span_starts, "end": self.span_ends, "text": self.span_texts}
        for label, lps in zip(self.labels, self.span_logprobs, strict=True):
            columns[f"logprob:{label}"] = lps
        for label, counts in zip(self.labels, self.span_tokens, strict=True):
            columns[f"tokens:{label}"] = counts
        return pd.DataFrame(columns).rename_axis("span")

    # -- display -----------------------------------------------------------------------

    def plot(self, kind: str = "difference", a=0, b=1, **kwargs):
        """A plotly figure: ``"difference"`` (span logprob a − b along the text) or ``"bits_per_byte"``."""
        return show(self, "plot", kind, a=a, b=b, **kwargs)

    def view(self, **traits):
        """The compare view (`logprob_viz.CompareView`) of this comparison."""
        return show(self, "view", **traits)

    def __repr__(self) -> str:
        def part(over: str) -> str:
            scored = self.scored(over)
            reasons = [s.reason for s in scored.values() if s.reason]
            if len(reasons) == len(scored):
                return f"{over}: nothing to compare ({reasons[0]})" if len(set(reasons)) == 1 else f"{over}: nothing"
            rows = ", ".join(f"{label}: {s.bits_per_byte:.3f}" for label, s in scored.items())
            return f"{over} ({rows} bits/byte)"

        if self.same_text:
            return f"<Comparison of {len(self.traces)} traces, {len(self)} spans, same text; {part('aligned')}>"
        return (
            f"<Comparison of {len(self.traces)} traces, {len(self)} spans, texts differ from byte "
            f"{self.common_prefix}, aligned {self.shared_bytes} bytes; {part('aligned')}; {part('own')}>"
        )
