"""Traces side by side: alignment by bytes, whatever the tokenizers (`lv.compare`).

Two models' tokens rarely line up, so per-token numbers cannot be put next to each other; their
bytes can. `compare(traces)` cuts the shared text into *spans*, the coarsest pieces on which
every trace's token boundaries agree (and that hold whole characters), and gives each trace's
logprob of each span (the sum of its tokens' logprobs inside it). Bits per byte over the spans
every trace knows is the measure that is fair across tokenizers. When the texts differ (two
prompts, two samples), the traces are aligned on their common prefix and each one's rest (its
*tail*) is kept as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .tokens import display_token
from .trace import Trace
from .viewable import Viewable

__all__ = ["Comparison", "compare"]

_LN2 = math.log(2.0)


@dataclass
class _Row:
    """One trace cut at the aligned spans."""

    starts: np.ndarray  # (N,) int64: each token's first byte in the trace's text
    span_of: np.ndarray  # (N,) int64: the aligned span holding each token, -1 for the tail
    tail_from: int  # first token after the aligned part (== N when the texts are the same)


def _describe(traces) -> str:
    parts = []
    for i, tr in enumerate(traces):
        if isinstance(tr, Trace):
            n_bytes = len(b"".join(tr.token_bytes))
            parts.append(f"[{i}] {len(tr)} tokens, {n_bytes} bytes, model={tr.meta.get('model', '?')}")
        else:
            parts.append(f"[{i}] {type(tr).__name__}")
    return "; ".join(parts)


def _check(traces, labels) -> tuple[list[Trace], list[str]]:
    if isinstance(traces, Trace):
        raise TypeError("compare needs a list of two or more traces, got one Trace; e.g. lv.compare([t1, t2])")
    if isinstance(traces, dict):
        labels = list(traces) if labels is None else labels
        traces = list(traces.values())
    try:
        traces = list(traces)
    except TypeError:
        raise TypeError(f"compare needs a list of two or more traces, got {type(traces).__name__}") from None
    if len(traces) < 2:
        raise ValueError(f"compare needs two or more traces to put side by side, got {len(traces)}")
    for i, tr in enumerate(traces):
        if not isinstance(tr, Trace):
            raise TypeError(
                f"compare compares logprob_viz.Trace objects; item {i} is a {type(tr).__name__} "
                "(make traces with lv.score, lv.generate or lv.from_openai)"
            )
        if len(tr) == 0:
            raise ValueError(f"trace {i} has no tokens, so there is nothing to align ({_describe(traces)})")
        if np.isnan(tr.logprobs).all():
            raise ValueError(
                f"trace {i} has no known logprob (all NaN): there is nothing to compare. "
                f"Ask its source for logprobs (e.g. logprobs=True / prompt_logprobs). Compared: {_describe(traces)}"
            )
    if labels is None:
        labels = _default_labels(traces)
    labels = [str(x) for x in labels]
    if len(labels) != len(traces):
        raise ValueError(f"give one label per trace: {len(traces)} traces, {len(labels)} labels")
    if len(set(labels)) != len(labels):
        raise ValueError(f"labels must be distinct, got {labels}")
    return traces, labels


def _default_labels(traces: list[Trace]) -> list[str]:
    labels = []
    for i, tr in enumerate(traces):
        name = str(tr.meta.get("model") or tr.meta.get("source") or "trace")
        name = name.rstrip("/").rsplit("/", 1)[-1]
        labels.append(f"{i}: {name}")
    return labels


def _unknown_start_hint(traces: list[Trace]) -> str:
    # A server that does not say what the first prompt token was (vLLM's prompt_logprobs) leaves
    # that token without bytes, so its text starts later than the others'.
    lost = [i for i, tr in enumerate(traces) if tr.flags[0] and {"first_token_unknown", "no_bytes"} & set(tr.flags[0])]
    if not lost:
        return ""
    return (
        f" Trace(s) {lost} do not know their first token's text (flag first_token_unknown/no_bytes); if that is "
        "the only difference, leave the first token out of every trace: lv.compare([t[1:] for t in traces])."
    )


def _common_prefix(texts: list[bytes]) -> int:
    """Length of the longest byte prefix every text shares."""
    first = texts[0]
    end = min(len(t) for t in texts)
    for other in texts[1:]:
        # compare in blocks, then narrow down: texts are up to megabytes
        lo = 0
        while lo < end and first[lo : lo + 4096] == other[lo : lo + 4096]:
            lo += 4096
        while lo < end and first[lo] == other[lo]:
            lo += 1
        end = min(end, lo)
    return end


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
    traces, labels = _check(traces, labels)
    texts = [b"".join(tr.token_bytes) for tr in traces]
    prefix = _common_prefix(texts)
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
        raise ValueError(
            "these traces have nothing in common to align on: "
            + (
                f"their texts differ from the first byte ({_describe(traces)})"
                if prefix == 0
                else f"their texts share only {prefix} bytes ({display_token(texts[0][:prefix])!r}) and no token "
                f"boundary inside them ({_describe(traces)})"
            )
            + ". compare() aligns the same text (or texts with a common beginning) by bytes."
            + _unknown_start_hint(traces)
        )
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
        self._rows = rows
        self._texts = texts
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
        text = self._texts[0]
        bounds = zip(self.span_starts.tolist(), self.span_ends.tolist(), strict=True)
        return [display_token(text[a:b]) for a, b in bounds]

    def token_spans(self, label_or_index) -> np.ndarray:
        """For each token of one trace, the index of the span holding it (-1: in its tail)."""
        return self._rows[self._index(label_or_index)].span_of

    @property
    def tails(self) -> dict[str, Trace]:
        """Each trace's part after the aligned text (empty traces when the texts are the same)."""
        rows = zip(self.labels, self.traces, self._rows, strict=True)
        return {label: tr[row.tail_from :] for label, tr, row in rows}

    def _index(self, label_or_index) -> int:
        if isinstance(label_or_index, (int, np.integer)) and not isinstance(label_or_index, bool):
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

    def bits_per_byte(self) -> dict[str, float]:
        """Per label: −Σ logprob / ln 2 / bytes over the spans every trace knows.

        Fair across tokenizers: every trace pays for the same bytes. NaN when no span is known
        to all traces.
        """
        known, n_bytes = self.known, self.known_bytes()
        out = {}
        for label, lps in zip(self.labels, self.span_logprobs, strict=True):
            out[label] = float(-lps[known].sum() / _LN2 / n_bytes) if n_bytes else math.nan
        return out

    def perplexity(self) -> dict[str, float]:
        """Per label: exp(−mean token logprob) over its tokens in the spans every trace knows.

        Per token, so it depends on the tokenizer: put models with different tokenizers side by
        side with `bits_per_byte`.
        """
        known = self.known
        out = {}
        for label, tr, row in zip(self.labels, self.traces, self._rows, strict=True):
            mine = row.span_of >= 0
            mine[mine] = known[row.span_of[mine]]
            lps = tr.logprobs[mine].astype(np.float64)
            out[label] = float(math.exp(-lps.mean())) if lps.size else math.nan
        return out

    def difference(self, a=0, b=1) -> np.ndarray:
        """(S,) span logprob of trace `a` minus that of trace `b` (labels or indices); NaN where unknown."""
        return self.span_logprobs[self._index(a)] - self.span_logprobs[self._index(b)]

    def summary(self):
        """A pandas table, one row per label: bits per byte, perplexity, tokens, bytes, tail."""
        import pandas as pd

        bpb, ppl = self.bits_per_byte(), self.perplexity()
        return pd.DataFrame(
            {
                "bits_per_byte": [bpb[x] for x in self.labels],
                "perplexity": [ppl[x] for x in self.labels],
                "tokens": [len(tr) for tr in self.traces],
                "aligned_tokens": [row.tail_from for row in self._rows],
                "bytes": [len(t) for t in self._texts],
                "tail_bytes": [len(t) - self.shared_bytes for t in self._texts],
            },
            index=pd.Index(self.labels, name="label"),
        )

    def to_pandas(self):
        """One row per aligned span: start, end, text, then per label its logprob and token count.

        Columns ``logprob:<label>`` (NaN where unknown) and ``tokens:<label>``. The tails (text
        after the first difference) are not spans; see `tails`.
        """
        import pandas as pd

        columns = {"start": self.span_starts, "end": self.span_ends, "text": self.span_texts}
        for label, lps in zip(self.labels, self.span_logprobs, strict=True):
            columns[f"logprob:{label}"] = lps
        for label, counts in zip(self.labels, self.span_tokens, strict=True):
            columns[f"tokens:{label}"] = counts
        return pd.DataFrame(columns).rename_axis("span")

    # -- display -----------------------------------------------------------------------

    def plot(self, kind: str = "difference", a=0, b=1, **kwargs):
        """A plotly figure: ``"difference"`` (span logprob a − b along the text) or ``"bits_per_byte"``."""
        from ..views.plots import plot_comparison

        return plot_comparison(self, kind, a=a, b=b, **kwargs)

    def view(self, **traits):
        """The compare view (`logprob_viz.CompareView`) of this comparison."""
        from ..views.compare_view import CompareView

        return CompareView(self, **traits)

    def __repr__(self) -> str:
        bpb = self.bits_per_byte()
        rows = ", ".join(f"{label}: {v:.3f} bits/byte" for label, v in bpb.items())
        where = (
            "same text"
            if self.same_text
            else f"texts differ from byte {self.common_prefix}, aligned {self.shared_bytes} bytes"
        )
        return f"<Comparison of {len(self.traces)} traces, {len(self)} spans, {where}; {rows}>"
