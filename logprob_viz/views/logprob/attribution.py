"""The "why?" requests of a LogprobView: the browser asks, the kernel runs `runner.attribute`.

The browser sends a custom message ``{"type": "why", "id", "at", "contrast", "method"}`` (contrast:
an alternative's token id, or its text, or None). The kernel answers ``{"type": "why-answer", "id",
"ok", "key"}`` (or ``"error"`` in words) and puts the scores into the view's ``attributions`` trait,
a list of `encode_attribution` dicts (scores as one float32 ``{dtype, shape, buffer}`` array), so a
saved notebook and the offline HTML keep every attribution computed. The trait is the only way the
scores cross: the answer says which entry to show, by its key.
"""

from __future__ import annotations

import logging
import math
import warnings

from ...records.trace_fields import is_int
from ..codec import array, json_safe

__all__ = ["METHODS", "attribution_key", "encode_attribution", "answer_why", "NO_RUNNER"]

logger = logging.getLogger(__name__)

METHODS = ("gradient_x_input", "integrated_gradients", "occlusion")
NO_RUNNER = (
    "no runner: the view needs the model that made the trace to ask why; "
    "make it with LogprobView(trace, runner=runner) or set view.runner = runner"
)


def attribution_key(at: int, method: str, contrast_id: int | None) -> str:
    """What names one attribution of a view: position, method and contrast ("-" for none)."""
    return f"{at}|{method}|{'-' if contrast_id is None else contrast_id}"


def encode_attribution(attr) -> dict:
    """One `Attribution` as the view reads it: JSON fields and its scores as a float32 array."""
    meta = json_safe(attr.meta)
    value = float(attr.value)
    return {
        "key": attribution_key(attr.position, attr.method, attr.contrast_id),
        "at": int(attr.position),
        "method": attr.method,
        "target": attr.target,
        "target_id": int(attr.target_id),
        "contrast": attr.contrast,
        "contrast_id": None if attr.contrast_id is None else int(attr.contrast_id),
        "quantity": attr.quantity,
        "value": value if math.isfinite(value) else None,
        "scores": array("scores", attr.scores, "float32"),
        "meta": meta,
    }


def _request(content: dict, n_tokens: int) -> tuple[int, str, int | str | None]:
    """(at, method, contrast) of a "why" message, checked; ValueError in words when wrong."""
    at, method, contrast = content.get("at"), content.get("method", "gradient_x_input"), content.get("contrast")
    if not is_int(at) or not 1 <= at < n_tokens:
        raise ValueError(f"why? needs a token with tokens before it (1..{n_tokens - 1}), got {at!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if contrast is not None and not isinstance(contrast, (int, str)):
        raise ValueError(f"contrast must be a token id or text, got {contrast!r}")
    return at, method, contrast


def answer_why(view, content: dict) -> dict:
    """Run the attribution a "why" message asks for and keep it in ``view.attributions``.

    Returns the answer to send: ``{"type": "why-answer", "id", "ok": True, "key"}`` or, when the
    request or the runner failed, ``{"ok": False, "error": what went wrong}``. An attribution
    already in the trait is answered from there (the kernel does not run the model again).
    """
    reply = {"type": "why-answer", "id": content.get("id")}
    runner = view.runner
    if runner is None:
        return {**reply, "ok": False, "error": NO_RUNNER}
    try:
        at, method, contrast = _request(content, len(view.trace))
        known = {a["key"]: a for a in view.attributions}
        if is_int(contrast) or contrast is None:
            key = attribution_key(at, method, contrast)
            if key in known:
                return {**reply, "ok": True, "key": key}
        with warnings.catch_warnings():  # IG's "not converged" is shown in the view, in words
            warnings.simplefilter("ignore")
            attr = runner.attribute(view.trace, at=at, contrast=contrast, method=method)
    except Exception as exc:  # noqa: BLE001 - any failure is told to the browser, in words
        logger.debug("why? failed", exc_info=True)
        return {**reply, "ok": False, "error": f"{type(exc).__name__}: {exc}"}
    encoded = encode_attribution(attr)
    kept = [a for a in view.attributions if a["key"] != encoded["key"]]
    view.attributions = [*kept, encoded]
    return {**reply, "ok": True, "key": encoded["key"]}
