"""The lens view: a `Lens` as a layers x tokens heatmap in a notebook (an anywidget).

Each cell is one layer's prediction of one token: coloured by the probability that layer gave
the actual token, labelled with the layer's top guess. Hovering a cell lists that layer's
alternatives; pinning (clicking) a token plots its probability and rank across the layers.
The frontend is the esbuild bundle of ``js/lens/`` in ``logprob_viz/views/static/lens.js``.

Arrays cross as binary buffers. Every layer's top-K goes with the payload only while that is
small (``inline_limit``); for longer texts the view asks the kernel for a token's alternatives
when it is pinned: a custom message ``{"type": "lens-detail", "id", "position"}`` answered by
`Lens.detail` with the same id, or with an ``error`` saying what went wrong.
"""

from __future__ import annotations

import logging
from pathlib import Path

import anywidget
import numpy as np
import traitlets as t

__all__ = ["LensView", "encode_lens"]

log = logging.getLogger(__name__)

_STATIC = Path(__file__).parent / "static"
_BUNDLE = _STATIC / "lens.js"
_STYLES = _STATIC / "lens.css"
# Cells x alternatives up to which every layer's top-K is sent with the view (~8 bytes each):
# 30 layers x 400 tokens x K=5. Beyond it, alternatives come from the kernel per pinned token.
INLINE_LIMIT = 60_000

_MISSING_BUNDLE = (
    "The lens view's JavaScript bundle is missing: {path}. In a source checkout, build it with "
    "`npm install && npm run build` in js/ (or `pip install -e .`), then restart the kernel."
)


def _buffer(values, dtype: str) -> memoryview:
    return memoryview(np.ascontiguousarray(values, dtype=dtype)).cast("B")


def encode_lens(lens, inline: bool) -> dict:
    """The `_payload` trait: the lens's [L, N] arrays (row by row) as little-endian buffers.

    Texts are sent once per distinct token id: ``text`` is one UTF-8 blob, entry ``e`` is
    ``text[text_offsets[e]:text_offsets[e + 1]]``; ``token_text`` [N], ``top1_text`` [L*N] and
    ``top_text`` [L*N*K] are entry numbers (uint32), equal exactly where the token ids are.
    ``top_text`` / ``top_logprobs`` are None unless ``inline``.
    """
    n_layers, n = lens.shape
    k = lens.k
    top1 = lens.top_ids[:, :, 0] if k else np.full((n_layers, n), -1, np.int32)  # (L, N)
    used = [lens.token_ids, top1.reshape(-1)]
    if inline:
        used.append(lens.top_ids.reshape(-1))
    ids = np.unique(np.concatenate(used))  # sorted; -1 (none: column 0) first when present
    text_of = lens._text_of
    texts = ["" if i < 0 else text_of(i) for i in ids.tolist()]
    encoded = [s.encode("utf-8", errors="surrogatepass") for s in texts]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded])])

    def refs(values):
        return _buffer(np.searchsorted(ids, np.asarray(values).reshape(-1)), "<u4")

    top1_logprobs = lens.top_logprobs[:, :, 0] if k else np.full((n_layers, n), -np.inf, np.float32)
    return {
        "n": n,
        "n_layers": n_layers,
        "n_blocks": lens.n_blocks,
        "layers": lens.layers.tolist(),
        "k": k,
        "inline": bool(inline),
        "text": b"".join(encoded),
        "text_offsets": _buffer(offsets, "<u4"),
        "token_text": refs(lens.token_ids),
        "logprobs": _buffer(lens.logprobs.reshape(-1), "<f4"),
        "ranks": _buffer(lens.ranks.reshape(-1), "<i4"),
        "entropy": _buffer(lens.entropy.reshape(-1), "<f4"),
        "top1_text": refs(top1),
        "top1_logprobs": _buffer(top1_logprobs.reshape(-1), "<f4"),
        "top_text": refs(lens.top_ids) if inline else None,
        "top_logprobs": _buffer(lens.top_logprobs.reshape(-1), "<f4") if inline else None,
    }


class LensView(anywidget.AnyWidget):
    """A `Lens` as a layers x tokens heatmap; alternatives on hover, a per-layer plot on pin.

    Parameters
    ----------
    lens : Lens
        What to show (``lv.load().lens(text)``).
    detail : "auto", "inline" or "request"
        Where a cell's alternatives come from: sent with the view ("inline"), or asked of the
        kernel when a token is pinned ("request"); "auto" sends them while that is small.
    **kwargs
        Trait values, e.g. ``selected=5``.

    Attributes
    ----------
    selected : int
        The pinned token, -1 for none. Clicking a token (a cell or its label) pins it.
    request_timeout : float
        Seconds the view waits for the kernel's answer before it says that none came.
    """

    if _BUNDLE.is_file():
        _esm = _BUNDLE
    if _STYLES.is_file():
        _css = _STYLES

    _payload = t.Dict().tag(sync=True)
    model_name = t.Unicode("").tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    request_timeout = t.Float(60.0).tag(sync=True)

    def __init__(self, lens, *, detail: str = "auto", **kwargs) -> None:
        from ..sources.local.lens import Lens

        if not hasattr(type(self), "_esm"):
            raise FileNotFoundError(_MISSING_BUNDLE.format(path=_BUNDLE))
        if not isinstance(lens, Lens):
            raise TypeError(f"LensView shows a logprob_viz Lens (runner.lens(text)), got {type(lens).__name__}")
        if detail not in ("auto", "inline", "request"):
            raise ValueError(f"detail must be 'auto', 'inline' or 'request', got {detail!r}")
        n_layers, n = lens.shape
        inline = detail == "inline" or (detail == "auto" and n_layers * n * lens.k <= INLINE_LIMIT)
        super().__init__(_payload=encode_lens(lens, inline), model_name=str(lens.meta.get("model", "")), **kwargs)
        self._lens = lens
        self.on_msg(self._answer)

    @property
    def lens(self):
        """The lens on show."""
        return self._lens

    @t.validate("selected")
    def _check_selected(self, proposal):
        value = proposal["value"]
        n = self._payload.get("n", 0)
        if not -1 <= value < n:
            raise t.TraitError(f"selected must be -1 (none) or a token index between 0 and {n - 1}, got {value}")
        return value

    def _answer(self, _widget, content, _buffers) -> None:
        """Answer the view's request for one token's per-layer alternatives (`Lens.detail`)."""
        if not isinstance(content, dict) or content.get("type") != "lens-detail":
            return
        request_id = content.get("id")
        try:
            detail = self._lens.detail(content.get("position"))
        except Exception as error:  # the view shows the message instead of waiting
            log.warning("lens detail request failed: %s", error)
            self.send({"type": "lens-detail", "id": request_id, "error": f"{type(error).__name__}: {error}"})
            return
        reply = {
            "type": "lens-detail",
            "id": request_id,
            "position": detail["position"],
            "k": int(detail["top_ids"].shape[1]),
            "token_id": int(self._lens.token_ids[detail["position"]]),
            "texts": detail["top_tokens"],  # [L][K] strings: shown with textContent
        }
        buffers = [_buffer(detail["top_logprobs"].reshape(-1), "<f4"), _buffer(detail["top_ids"].reshape(-1), "<i4")]
        self.send(reply, buffers)

    def __repr__(self) -> str:
        return f"LensView({self._lens!r})" if hasattr(self, "_lens") else object.__repr__(self)
