"""The lens view: a `Lens` as a layers x tokens heatmap in a notebook (an anywidget).

Each cell is one layer's prediction of one token: coloured by the probability that layer gave
the actual token, labelled with the layer's top guess. Hovering a cell lists that layer's
alternatives; pinning (clicking) a token plots its probability and rank across the layers.
The frontend is the esbuild bundle of ``js/lens/`` in ``logprob_viz/views/static/lens.js``
and ``lens.css``.

Arrays cross through the wire codec (`logprob_viz.views.codec`): self-describing binary buffers.
Every layer's top-K goes with the payload only while that is small (``inline_limit``); for
longer texts the view asks the kernel for a token's alternatives when it is pinned: a custom
message ``{"type": "lens-detail", "id", "position"}`` answered by `Lens.detail` with the same id,
as a codec message (``{"type", "id", "buffer_paths", "payload"}``, the payload's ``top_logprobs``
and ``top_ids`` arrays [L, K]), or with an ``error`` saying what went wrong.
"""

from __future__ import annotations

import logging

import numpy as np
import traitlets as t

from ...records.lens import Lens
from ..bundled import Bundled
from ..codec import array, message, texts
from ..static_html import lens_html

__all__ = ["LensView", "encode_lens"]

log = logging.getLogger(__name__)

# Cells x alternatives up to which every layer's top-K is sent with the view (~8 bytes each):
# 30 layers x 400 tokens x K=5. Beyond it, alternatives come from the kernel per pinned token.
INLINE_LIMIT = 60_000


def encode_lens(lens, inline: bool) -> dict:
    """The `_payload` trait: the lens's [L, N] arrays, each ``{"dtype", "shape", "buffer"}``.

    Texts are sent once per distinct token id: ``texts`` (``{"blob", "offsets"}``) is the table;
    ``token_text`` [N], ``top1_text`` [L, N] and ``top_text`` [L, N, K] are entry numbers (uint32),
    equal exactly where the token ids are. ``top_text`` / ``top_logprobs`` are None unless ``inline``.
    """
    n_layers, n = lens.shape
    k = lens.k
    top1 = lens.top_ids[:, :, 0] if k else np.full((n_layers, n), -1, np.int32)  # (L, N)
    used = [lens.token_ids, top1.reshape(-1)]
    if inline:
        used.append(lens.top_ids.reshape(-1))
    ids = np.unique(np.concatenate(used))  # sorted; -1 (none: entry 0) first when present
    text_of = lens.text_of

    def refs(name, values):
        return array(name, np.searchsorted(ids, np.asarray(values)), "uint32")

    top1_logprobs = lens.top_logprobs[:, :, 0] if k else np.full((n_layers, n), -np.inf, np.float32)
    return {
        "n": n,
        "n_layers": n_layers,
        "n_blocks": lens.n_blocks,
        "layers": lens.layers.tolist(),
        "k": k,
        "inline": bool(inline),
        "texts": texts("texts", ["" if i < 0 else text_of(i) for i in ids.tolist()]),
        "token_text": refs("token_text", lens.token_ids),
        "logprobs": array("logprobs", lens.logprobs, "float32"),
        "ranks": array("ranks", lens.ranks, "int32"),
        "entropy": array("entropy", lens.entropy, "float32"),
        "kl_to_final": array("kl_to_final", lens.kl_to_final, "float32"),
        "top1_text": refs("top1_text", top1),
        "top1_logprobs": array("top1_logprobs", top1_logprobs, "float32"),
        "top_text": refs("top_text", lens.top_ids) if inline else None,
        "top_logprobs": array("top_logprobs", lens.top_logprobs, "float32") if inline else None,
    }


def decided_traits(lens, trace) -> dict:
    """The "decided" mode's traits of a lens: its commitment(top=1) per token and its blocks."""
    if not isinstance(lens, Lens):
        raise TypeError(f"lens must be a logprob_viz Lens (runner.lens(text)), got {type(lens).__name__}")
    if len(lens) != len(trace):
        raise ValueError(f"the lens has {len(lens)} tokens and the trace {len(trace)}: "
                         "show the lens's own trace, LogprobView(lens.trace, lens=lens)")
    return {"_decided": array("decided", lens.commitment(top=1), "int32"), "decided_blocks": int(lens.n_blocks)}

class LensView(Bundled, bundle="lens"):
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

    _payload = t.Dict().tag(sync=True)
    model_name = t.Unicode("").tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    request_timeout = t.Float(60.0).tag(sync=True)

    def __init__(self, lens, *, detail: str = "auto", **kwargs) -> None:
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
        answer = {
            "position": detail["position"],
            "token_id": int(self._lens.token_ids[detail["position"]]),
            "texts": detail["top_tokens"],  # [L][K] strings: shown with textContent
            "top_logprobs": array("top_logprobs", detail["top_logprobs"], "float32"),  # (L, K)
            "top_ids": array("top_ids", detail["top_ids"], "int32"),  # (L, K)
        }
        content, buffers = message("lens-detail", answer, id=request_id)
        self.send(content, buffers)

    # -- the page protocol (`logprob_viz.views.page`) -------------------------------------------

    def page_html(self, max_state_bytes: int | None = None) -> str:
        """A static HTML copy (no script): the layers x tokens table (`static_html.lens_html`)."""
        return lens_html(self.lens)

    def page_title(self) -> str:
        return f"logprob_viz: {self.lens.meta.get('model', 'lens')}"

    def fallback_html(self) -> str:
        """Where no widget manager renders the view (nbconvert's HTML, viewers): a static HTML table
        of the layers' top guesses, no script."""
        return self.page_html()

    def __repr__(self) -> str:
        return f"LensView({self._lens!r})" if hasattr(self, "_lens") else object.__repr__(self)
