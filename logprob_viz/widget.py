"""The notebook widget: a trace's text as a heatmap of token probabilities.

`LogprobView(trace)` shows each token coloured by its probability; hovering a token shows a
bar chart of the top-K alternatives the model weighed. The frontend is the esbuild bundle of
``js/`` in ``logprob_viz/static``. Per-token arrays cross to the browser as binary buffers
(`encode_trace`), never as JSON lists.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import anywidget
import numpy as np
import traitlets as t

from .trace import Trace

__all__ = ["LogprobView", "encode_trace"]

logger = logging.getLogger(__name__)

_STATIC = Path(__file__).parent / "static"
_BUNDLE = _STATIC / "widget.js"
_STYLES = _STATIC / "widget.css"

_MISSING_BUNDLE = (
    "The widget's JavaScript bundle is missing: {path}. In a source checkout, build it with "
    "`npm install && npm run build` in js/ (or `pip install -e .`, which runs that build), then "
    "restart the kernel. An installed wheel ships the bundle: reinstall with "
    "`pip install --force-reinstall logprob-viz`."
)


def _buffer(name: str, values, dtype: str) -> memoryview:
    """Little-endian bytes of `values` as `dtype`, as a flat byte memoryview (a widget buffer)."""
    arr = np.asarray(values)
    target = np.dtype(dtype)
    if target.kind in "iu" and arr.size and arr.dtype.kind in "iu":
        info = np.iinfo(target)
        lo, hi = int(arr.min()), int(arr.max())
        if lo < info.min or hi > info.max:
            raise ValueError(f"{name} has values from {lo} to {hi}, which do not fit the widget's {target.name}")
    return memoryview(np.ascontiguousarray(arr, dtype=dtype)).cast("B")


def encode_trace(trace: Trace) -> dict:
    """The `_payload` trait: a trace's per-token arrays as binary buffers.

    Numbers are little-endian; 2-D arrays [N, K] are flattened row by row. All texts (the N
    tokens, then the K alternatives of each token, row by row, "" where a token has fewer) are
    one UTF-8 blob, ``text``; text ``s`` is ``text[text_offsets[s]:text_offsets[s + 1]]``.

    Returns
    -------
    dict
        ``n``, ``k`` (ints); ``token_ids``, ``ranks``, ``top_ids``, ``top_counts`` (int32);
        ``logprobs``, ``entropy``, ``top_logprobs`` (float32); ``text`` (bytes) and
        ``text_offsets`` (uint32); ``processed_logprobs`` and ``processed_top_logprobs``
        (float32) when the trace has them, else None.
    """
    n, k = len(trace), trace.k
    top_counts = np.array([len(row) for row in trace.top_tokens], dtype=np.int64)
    texts = list(trace.tokens)
    for row in trace.top_tokens:
        texts.extend(row)
        texts.extend([""] * (k - len(row)))
    encoded = [s.encode("utf-8", errors="surrogatepass") for s in texts]
    lengths = np.array([len(b) for b in encoded], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])  # (N + N*K + 1,)
    payload = {
        "n": n,
        "k": k,
        "token_ids": _buffer("token_ids", trace.token_ids, "<i4"),
        "logprobs": _buffer("logprobs", trace.logprobs, "<f4"),
        "ranks": _buffer("ranks", trace.ranks, "<i4"),
        "entropy": _buffer("entropy", trace.entropy, "<f4"),
        "top_logprobs": _buffer("top_logprobs", trace.top_logprobs.reshape(-1), "<f4"),  # (N*K,)
        "top_ids": _buffer("top_ids", trace.top_ids.reshape(-1), "<i4"),  # (N*K,)
        "top_counts": _buffer("top_counts", top_counts, "<i4"),
        "text": b"".join(encoded),
        "text_offsets": _buffer("text_offsets", offsets, "<u4"),  # 4 GiB of text at most
        "processed_logprobs": None,
        "processed_top_logprobs": None,
    }
    if trace.processed_logprobs is not None:
        payload["processed_logprobs"] = _buffer("processed_logprobs", trace.processed_logprobs, "<f4")
        flat = trace.processed_top_logprobs.reshape(-1)  # (N*K,)
        payload["processed_top_logprobs"] = _buffer("processed_top_logprobs", flat, "<f4")
    return payload


_MODES = ("probability", "logprob", "entropy", "rank", "ratio")
_MODE_ALIASES = {"surprisal": "logprob", "prob": "probability"}
_PALETTES = ("viridis", "cividis", "magma")


def _mean_known(values) -> float:
    """Mean of the values that are not NaN (NaN if none is): e.g. entropy where the source gave it."""
    arr = np.asarray(values, dtype=np.float64)
    known = arr[~np.isnan(arr)]
    return float(known.mean()) if known.size else math.nan


def _finite_or_none(x: float) -> float | None:
    # JSON has no NaN/inf; the view shows "?" for None.
    return float(x) if math.isfinite(x) else None


def _json_safe(value, depth: int = 0):
    """`value` with what JSON cannot hold replaced: non-finite floats by None, the rest by str."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return _finite_or_none(value)
    if isinstance(value, np.generic):
        return _json_safe(value.item(), depth)
    if depth < 4 and isinstance(value, dict):
        return {str(k): _json_safe(v, depth + 1) for k, v in value.items()}
    if depth < 4 and isinstance(value, (list, tuple)):
        return [_json_safe(v, depth + 1) for v in value]
    return str(value)


class LogprobView(anywidget.AnyWidget):
    """A trace shown as a heatmap of token probabilities, with the alternatives on hover.

    Parameters
    ----------
    trace : Trace
        What to show. Assigning ``view.trace = other`` shows another trace.
    **kwargs
        Trait values, e.g. ``selected=5``.

    Attributes
    ----------
    selected : int
        The pinned token's index, -1 for none. Clicking a token pins it (and sets this trait);
        arrow keys move it, Escape releases it; setting it from Python pins that token.
    color_mode : str
        What colours a token: ``"probability"``, ``"logprob"`` (surprisal, −logprob in nats;
        ``"surprisal"`` is accepted), ``"entropy"``, ``"rank"`` (GLTR's buckets: top 1 / 10 /
        100 / 1000) or ``"ratio"`` (p / p(top-1)).
    color_range : list of two floats or None
        The legend's [min, max] (values outside are clamped); None: the mode's default.
    palette : str
        ``"viridis"``, ``"cividis"`` or ``"magma"``: all perceptually uniform and colour-blind safe.
    show_ids : bool
        Show token ids in the alternatives chart.
    prompt_len, k, n_tokens, perplexity, mean_logprob, mean_entropy, meta
        Read-only summaries of the trace, synced for the view's header.
    """

    if _BUNDLE.is_file():
        _esm = _BUNDLE
    if _STYLES.is_file():
        _css = _STYLES

    _payload = t.Dict().tag(sync=True)
    prompt_len = t.Int(0).tag(sync=True)
    k = t.Int(0).tag(sync=True)
    n_tokens = t.Int(0).tag(sync=True)
    perplexity = t.Float(None, allow_none=True).tag(sync=True)
    mean_logprob = t.Float(None, allow_none=True).tag(sync=True)
    meta = t.Dict().tag(sync=True)
    mean_entropy = t.Float(None, allow_none=True).tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    color_mode = t.Unicode("probability").tag(sync=True)
    color_range = t.List(t.Float(), default_value=None, allow_none=True, minlen=2, maxlen=2).tag(sync=True)
    palette = t.Enum(_PALETTES, default_value="viridis").tag(sync=True)
    show_ids = t.Bool(False).tag(sync=True)

    def __init__(self, trace: Trace, **kwargs) -> None:
        if not hasattr(type(self), "_esm"):
            raise FileNotFoundError(_MISSING_BUNDLE.format(path=_BUNDLE))
        # Set the trace's traits in the constructor so the view opens with them in one message.
        super().__init__(**self._traits_of(trace), **kwargs)
        self._trace = trace

    @staticmethod
    def _traits_of(trace: Trace) -> dict:
        if not isinstance(trace, Trace):
            raise TypeError(
                f"LogprobView shows a logprob_viz.Trace, got {type(trace).__name__}; "
                "make one with lv.generate(...), lv.score(...) or lv.from_openai(...)"
            )
        return {
            "_payload": encode_trace(trace),
            "prompt_len": trace.prompt_len,
            "k": trace.k,
            "n_tokens": len(trace),
            "perplexity": _finite_or_none(trace.perplexity()),
            "mean_logprob": _finite_or_none(trace.mean_logprob()),
            "mean_entropy": _finite_or_none(_mean_known(trace.entropy)),
            "meta": _json_safe(trace.meta),
        }

    @property
    def trace(self) -> Trace:
        """The trace on show."""
        return self._trace

    @trace.setter
    def trace(self, trace: Trace) -> None:
        traits = self._traits_of(trace)
        with self.hold_sync():
            self._trace = trace
            self.set_trait("selected", -1)  # the pinned index may not exist in the new trace
            for name, value in traits.items():
                self.set_trait(name, value)

    @t.validate("selected")
    def _check_selected(self, proposal):
        value = proposal["value"]
        n = self.n_tokens
        if not -1 <= value < max(n, 0):
            raise t.TraitError(f"selected must be -1 (none) or a token index between 0 and {n - 1}, got {value}")
        return value

    @t.validate("color_mode")
    def _check_color_mode(self, proposal):
        value = _MODE_ALIASES.get(proposal["value"], proposal["value"])
        if value not in _MODES:
            raise t.TraitError(f"color_mode must be one of {', '.join(_MODES)} (or 'surprisal'), got {proposal['value']!r}")
        return value

    @t.validate("color_range")
    def _check_color_range(self, proposal):
        value = proposal["value"]
        if value is not None and not (math.isfinite(value[0]) and math.isfinite(value[1]) and value[0] < value[1]):
            raise t.TraitError(f"color_range must be [min, max] with finite min < max, or None, got {value}")
        return value

    def __repr__(self) -> str:
        trace = getattr(self, "_trace", None)
        return f"LogprobView({trace!r})" if trace is not None else object.__repr__(self)
