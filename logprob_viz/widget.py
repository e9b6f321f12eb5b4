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

from .flags import SHOWN_BY_THE_CHART, TOKEN_FLAGS
from .tokens import split_groups
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


def _flag_notes(trace: Trace) -> dict[str, list[str]]:
    notes = {}
    for i, row in enumerate(trace.flags):
        lost = [f"{code}: {TOKEN_FLAGS.get(code, code)}" for code in row if code not in SHOWN_BY_THE_CHART]
        if lost:
            notes[str(i)] = lost
    return notes


def _narrowest(largest: int) -> str:
    """"u2" when values from 0 to `largest` fit uint16, else "u4" (which `_buffer` checks)."""
    return "u2" if 0 <= largest <= 0xFFFF else "u4"


def encode_trace(trace: Trace) -> dict:
    """The `_payload` trait: a trace's per-token arrays as binary buffers.

    Numbers are little-endian; 2-D arrays [N, K] are flattened row by row.

    Texts are sent once each: a table of the distinct (token id, text) pairs, its texts one
    UTF-8 blob ``text`` (entry ``e`` is ``text[text_offsets[e]:text_offsets[e + 1]]``) and its
    ids as ``text_ids`` = id + 1 (0: no id). Tokens and alternatives are references into it,
    ``token_text`` [N] and ``top_text`` [N*K]: reference ``r`` is entry ``r - 1``, 0 is none (the
    padding after a token's alternatives, so a token has as many alternatives as leading
    non-zero references). ``dtypes`` says how ``text_offsets``, ``text_ids`` and the references
    (``refs``: ``token_text``, ``top_text``, ``split_text``) are stored: "u2" (uint16) when
    their values fit, else "u4" (uint32).

    A character split across tokens (`split_groups`): ``split_starts``/``split_ends`` (int32 [G])
    are the runs of tokens; for each token in them, in order, ``split_text`` (a reference) is
    the text it completes and ``split_bytes`` / ``split_byte_offsets`` (uint32 [M + 1]) its raw
    bytes.

    Returns
    -------
    dict
        ``n``, ``k``, ``dtypes`` (dict of str); ``text`` (bytes), ``text_offsets``, ``text_ids``,
        ``token_text``, ``top_text``; ``logprobs``, ``top_logprobs``
        (float32), ``ranks`` (int32); ``entropy`` (float32, None when no token has one);
        ``processed_logprobs`` and ``processed_top_logprobs`` (float32) when the trace has them,
        else None; the split fields above.
    """
    n, k = len(trace), trace.k
    groups = split_groups(trace.token_bytes)
    members = [i for start, end, _ in groups for i in range(start, end)]
    split_raw = [trace.token_bytes[i] for i in members]
    counts = np.array([len(row) for row in trace.top_tokens], dtype=np.int64)
    has_alt = np.arange(k) < counts[:, None]  # (N, K): row by row, padding after each row's alternatives
    # Every text to send: the tokens, the alternatives (row by row), the split pieces' texts.
    all_texts = list(trace.tokens)
    for row in trace.top_tokens:
        all_texts.extend(row)
    all_texts.extend(shown for _, _, run in groups for shown in run)
    all_ids = np.concatenate([trace.token_ids, trace.top_ids[has_alt], np.full(len(members), -1)]).astype(np.int64)
    # Distinct (id, text) pairs: texts numbered by a dict (str hashes are cached), then the pairs
    # as one int64 each, made unique by numpy; 2.1M texts at N=100k, K=20.
    numbers: dict[str, int] = {}
    put = numbers.setdefault
    text_no = np.fromiter((put(t, len(numbers)) for t in all_texts), dtype=np.int64, count=len(all_texts))
    id_plus_one = np.maximum(all_ids + 1, 0)  # 0: no id (-1, or any negative)
    if id_plus_one.size and int(id_plus_one.max()) > 0xFFFFFFFE:
        raise ValueError(f"token ids go up to {int(all_ids.max())}, which do not fit the widget's uint32")
    pairs, inverse = np.unique((text_no << 32) | id_plus_one, return_inverse=True)
    refs = inverse.reshape(-1) + 1  # (N + alternatives + split pieces,)
    distinct = list(numbers)
    texts = [distinct[j] for j in (pairs >> 32).tolist()]
    ids_plus_one = pairs & 0xFFFFFFFF  # (U,)
    token_refs = refs[:n]
    top_refs = np.zeros((n, k), dtype=np.int64)
    top_refs[has_alt] = refs[n : len(refs) - len(members)]
    split_refs = refs[len(refs) - len(members) :]

    encoded = [s.encode("utf-8", errors="surrogatepass") for s in texts]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded], dtype=np.int64)])  # (U + 1,)
    byte_offsets = np.concatenate([[0], np.cumsum([len(b) for b in split_raw], dtype=np.int64)])  # (M + 1,)
    dtypes = {
        "text_offsets": _narrowest(int(offsets[-1])),
        "text_ids": _narrowest(int(ids_plus_one.max(initial=0))),
        "refs": _narrowest(len(texts)),
    }
    ref_dtype = "<" + dtypes["refs"]
    entropy = trace.entropy
    payload = {
        "n": n,
        "k": k,
        "dtypes": dtypes,
        "text": b"".join(encoded),
        "text_offsets": _buffer("text_offsets", offsets, "<" + dtypes["text_offsets"]),  # 4 GiB of text at most
        "text_ids": _buffer("text_ids", ids_plus_one, "<" + dtypes["text_ids"]),
        "token_text": _buffer("token_text", token_refs, ref_dtype),
        "top_text": _buffer("top_text", top_refs.reshape(-1), ref_dtype),  # (N*K,)
        "logprobs": _buffer("logprobs", trace.logprobs, "<f4"),
        "ranks": _buffer("ranks", trace.ranks, "<i4"),
        "entropy": None if np.isnan(entropy).all() else _buffer("entropy", entropy, "<f4"),
        "top_logprobs": _buffer("top_logprobs", trace.top_logprobs.reshape(-1), "<f4"),  # (N*K,)
        "processed_logprobs": None,
        "processed_top_logprobs": None,
        "split_starts": _buffer("split_starts", [g[0] for g in groups], "<i4"),
        "split_ends": _buffer("split_ends", [g[1] for g in groups], "<i4"),
        "split_text": _buffer("split_text", split_refs, ref_dtype),
        "split_bytes": b"".join(split_raw),
        "split_byte_offsets": _buffer("split_byte_offsets", byte_offsets, "<u4"),
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
    # {token index: [what the source lost there, in words]}: sparse, for the view to mark (Trace.flags)
    flag_notes = t.Dict().tag(sync=True)
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
            "flag_notes": _flag_notes(trace),
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

    def _repr_mimebundle_(self, **kwargs):
        # The live widget where a widget manager renders it; elsewhere (nbconvert's HTML,
        # notebook viewers) the same view as self-contained HTML.
        from .export import mimebundle_with_fallback

        return mimebundle_with_fallback(self, super()._repr_mimebundle_(**kwargs))

    def __repr__(self) -> str:
        trace = getattr(self, "_trace", None)
        return f"LogprobView({trace!r})" if trace is not None else object.__repr__(self)
