"""The compare view: traces aligned by bytes, one heatmap row per trace (`lv.CompareView`).

Hovering an aligned span highlights it in every row and lists each row's tokens in it with
their alternatives side by side; the "difference" colour mode colours each span by the logprob
difference between two chosen rows. The frontend is ``js/compare/``, bundled into
``logprob_viz/views/static/compare.js`` and ``compare.css``. Arrays and texts cross through the
wire codec (`logprob_viz.views.codec`): self-describing binary buffers.
"""

from __future__ import annotations

import math

import numpy as np
import traitlets as t

from ...records.comparison import Comparison, compare
from ...records.tokens import split_groups
from ..bundled import Bundled
from ..codec import array, texts
from ..plots import plot_comparison
from ..static_html import comparison_html

__all__ = ["CompareView", "auto_range", "encode_comparison"]

MAX_ROWS = 8  # more rows than this do not fit a notebook cell side by side


def _encode_row(trace, span_of: np.ndarray) -> dict:
    counts = [len(row) for row in trace.top_tokens]
    alt_start = np.concatenate([[0], np.cumsum(counts, dtype=np.int64)])  # (N + 1,)
    has = np.arange(trace.k) < np.asarray(counts, dtype=np.int64)[:, None]  # (N, K)
    # a character split across tokens is shown whole in the row, on the token that completes it
    groups = split_groups(trace.token_bytes)
    return {
        "n": len(trace),
        "tokens": texts("tokens", trace.tokens),
        "logprobs": array("logprobs", trace.logprobs, "float32"),
        "ranks": array("ranks", trace.ranks, "int32"),
        "span_of": array("span_of", span_of, "int32"),
        "alt_start": array("alt_start", alt_start, "uint32"),
        "alt_texts": texts("alt_texts", [a for row in trace.top_tokens for a in row]),
        "alt_logprobs": array("alt_logprobs", trace.top_logprobs[has], "float32"),
        "split_tokens": array("split_tokens", [i for start, end, _ in groups for i in range(start, end)], "int32"),
        "split_texts": texts("split_texts", [shown for _, _, run in groups for shown in run]),
    }


def encode_comparison(cmp: Comparison) -> dict:
    """The `_payload` trait, every array ``{"dtype", "shape", "buffer"}`` and every list of texts
    ``{"blob", "offsets"}`` (`logprob_viz.views.codec`).

    ``span_starts``/``span_ends`` (uint32 [S]), ``span_logprobs`` (float32 [R, S], NaN unknown),
    ``span_texts``; ``rows``: per trace its ``tokens``, ``logprobs``, ``ranks``, ``span_of`` (int32,
    -1 in the tail) and its alternatives flattened (``alt_start`` [N + 1] says where each token's
    begin; ``alt_texts``, ``alt_logprobs``); ``split_tokens`` (int32) and ``split_texts``: the tokens
    of characters split across tokens and what each completes (`logprob_viz.records.tokens.split_groups`),
    so the row shows the character whole.
    """
    return {
        "n_rows": len(cmp.traces),
        "n_spans": len(cmp),
        "span_starts": array("span_starts", cmp.span_starts, "uint32"),
        "span_ends": array("span_ends", cmp.span_ends, "uint32"),
        "span_logprobs": array("span_logprobs", cmp.span_logprobs, "float32"),
        "span_texts": texts("span_texts", cmp.span_texts),
        "rows": [_encode_row(tr, cmp.token_spans(i)) for i, tr in enumerate(cmp.traces)],
    }


_NICE_RANGES = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)  # nats at full colour: a legend with a round end


def auto_range(cmp: Comparison, a: int = 0, b: int = 1) -> float:
    """The difference drawn at full colour for rows a and b: the 90th percentile of |a − b| over the
    spans both know, rounded up to a round number of nats (4 where they know none or never differ)."""
    d = np.abs(cmp.difference(a, b))
    d = d[np.isfinite(d) & (d > 0)]
    if not d.size:
        return 4.0
    q = float(np.quantile(d, 0.9))
    return next((x for x in _NICE_RANGES if x >= q), _NICE_RANGES[-1])


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


class CompareView(Bundled, bundle="compare"):
    """Two to eight traces aligned by bytes, one heatmap row each.

    Parameters
    ----------
    comparison : Comparison or list of Trace
        What to show; a list is compared first (``labels=`` is passed on).
    **kwargs
        Trait values, e.g. ``color_mode="difference", diff_rows=[0, 2]``.

    Attributes
    ----------
    selected : int
        The pinned span's index, -1 for none (click a span; Escape releases it).
    color_mode : str
        ``"probability"``: each row's tokens by their own probability; ``"difference"``: each
        span by logprob(row a) − logprob(row b), on a diverging colour-blind-safe scale.
    diff_rows : [int, int]
        The rows a and b of the difference mode.
    diff_range : float
        The difference (nats) drawn at full colour; larger ones are clamped. Unless given, it
        follows the data: the 90th percentile of |a − b| over the spans, rounded up to 0.25,
        0.5, 1, 2, 4, 8 or 16 nats, so small differences are not drawn all grey.
    labels, bits_per_byte, perplexity, n_spans, shared_bytes, same_text
        Read-only summaries for the header (bits per byte and perplexity over the aligned spans).
    numbers : dict
        Read-only: ``{"aligned": [...], "own": [...]}``, per row what
        `Comparison.scored` gives (`Scored.to_dict`): bits per byte, perplexity, the tokens and
        bytes counted, the byte range, and the reason where nothing is counted.
    """

    _payload = t.Dict().tag(sync=True)
    labels = t.List(t.Unicode()).tag(sync=True)
    bits_per_byte = t.List(t.Float(allow_none=True)).tag(sync=True)
    perplexity = t.List(t.Float(allow_none=True)).tag(sync=True)
    n_tokens = t.List(t.Int()).tag(sync=True)
    n_spans = t.Int(0).tag(sync=True)
    shared_bytes = t.Int(0).tag(sync=True)
    same_text = t.Bool(True).tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    color_mode = t.Enum(("probability", "difference"), default_value="probability").tag(sync=True)
    diff_rows = t.List(t.Int(), default_value=[0, 1], minlen=2, maxlen=2).tag(sync=True)
    diff_range = t.Float(4.0).tag(sync=True)
    numbers = t.Dict().tag(sync=True)

    def __init__(self, comparison, labels=None, **kwargs) -> None:
        if not isinstance(comparison, Comparison):
            comparison = compare(comparison, labels=labels)
        rows = len(comparison.traces)
        if rows > MAX_ROWS:
            raise ValueError(f"the compare view shows 2 to {MAX_ROWS} traces, got {rows}; compare fewer at a time")
        aligned, own = comparison.scored("aligned"), comparison.scored("own")
        labels = comparison.labels
        self._comparison = comparison
        auto = "diff_range" not in kwargs  # the scale follows the rows compared unless given
        if auto:
            kwargs["diff_range"] = auto_range(comparison, *kwargs.get("diff_rows", (0, 1)))
        super().__init__(
            _payload=encode_comparison(comparison),
            labels=labels,
            bits_per_byte=[_finite_or_none(aligned[x].bits_per_byte) for x in labels],
            perplexity=[_finite_or_none(aligned[x].perplexity) for x in labels],
            numbers={"aligned": [aligned[x].to_dict() for x in labels], "own": [own[x].to_dict() for x in labels]},
            n_tokens=[len(tr) for tr in comparison.traces],
            n_spans=len(comparison),
            shared_bytes=comparison.shared_bytes,
            same_text=comparison.same_text,
            **kwargs,
        )
        self._auto_range = auto

    @property
    def comparison(self) -> Comparison:
        """The comparison on show."""
        return self._comparison

    @t.validate("selected")
    def _check_selected(self, proposal):
        value, n = proposal["value"], self.n_spans
        if not -1 <= value < max(n, 0):
            raise t.TraitError(f"selected must be -1 (none) or a span index between 0 and {n - 1}, got {value}")
        return value

    @t.validate("diff_rows")
    def _check_diff_rows(self, proposal):
        a, b = proposal["value"]
        rows = len(self.labels) or MAX_ROWS
        if not (0 <= a < rows and 0 <= b < rows and a != b):
            raise t.TraitError(f"diff_rows must be two different row indices between 0 and {rows - 1}, got {[a, b]}")
        return [a, b]

    @t.validate("diff_range")
    def _check_diff_range(self, proposal):
        value = proposal["value"]
        if not (math.isfinite(value) and value > 0):
            raise t.TraitError(f"diff_range must be a positive number of nats, got {value}")
        return value

    @t.observe("diff_rows")
    def _follow_rows(self, change):
        if getattr(self, "_auto_range", False):
            self.diff_range = auto_range(self._comparison, *change["new"])
            self._auto_range = True  # set by the view itself: it keeps following

    @t.observe("diff_range")
    def _range_set(self, change):
        self._auto_range = False  # set by the user: kept from now on (the line above re-arms it)

    # -- the page protocol (`logprob_viz.views.page`) and the linked figure's (`plot_link`) --------

    def page_html(self, max_state_bytes: int | None = None) -> str:
        """A static HTML copy (no script): the header and the coloured rows (`static_html.comparison_html`)."""
        return comparison_html(self._comparison)

    def page_title(self) -> str:
        return "logprob_viz: comparison"

    def plot(self, kind: str = "difference", **kwargs):
        """The comparison's figure for `logprob_viz.link` (point i is span i; see `plots.plot_comparison`)."""
        return plot_comparison(self._comparison, kind, **kwargs)

    @property
    def pin_count(self) -> int:
        """How many items a linked figure's click can pin: the spans."""
        return int(self.n_spans)

    def fallback_html(self) -> str:
        """Where no widget manager renders the view (nbconvert's HTML, viewers): a static HTML copy,
        the header and the coloured rows, no script."""
        return self.page_html()

    def __repr__(self) -> str:
        cmp = getattr(self, "_comparison", None)
        return f"CompareView({cmp!r})" if cmp is not None else object.__repr__(self)
