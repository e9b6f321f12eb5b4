"""Standalone, offline HTML of the view: one file, nothing fetched.

``to_html(trace)`` writes the LogprobView of a trace as one self-contained HTML page: the
widget's bundle and its CSS inlined, the widget's state (the same ``get_state()`` the notebook
receives, its buffers split out by the wire codec's `split_buffers`) inlined as base64 JSON,
and a minimal model object in place of a kernel (``js/standalone.js``). Hover, pinning, colour
modes and palettes work in the page; nothing goes back to Python.

``html_fragment(view)`` is the same view as an HTML fragment for a notebook output's
``text/html``: shown where no widget manager renders the widget (a notebook opened without a
kernel or untrusted, nbconvert's HTML export, notebook viewers). ``mimebundle_with_fallback``
adds it to a widget's mime bundle.

Safety: token texts are never put into HTML. The state is base64 (A–Z, a–z, 0–9, +, /, =) inside a
``<script type="application/vnd.logprob-viz.state+base64">`` element that the browser never
runs; the script decodes it and the view inserts token text with textContent. The text fallback
shown before the script runs is escaped with ``html.escape``.
"""

from __future__ import annotations

import base64
import html
import json
import logging
import re
import uuid
from pathlib import Path

from ..records.trace import Trace
from .codec import split_buffers

__all__ = ["to_html", "html_fragment", "mimebundle_with_fallback", "view_state", "state_parts"]

logger = logging.getLogger(__name__)

_STATIC = Path(__file__).parent / "static"
_STANDALONE = _STATIC / "standalone.js"
_STYLES = _STATIC / "widget.css"
STATE_TYPE = "application/vnd.logprob-viz.state+base64"
HTML_MIME = "text/html"

# Traits that the page does not need: the bundle and CSS (inlined once, separately) and
# ipywidgets' layout model reference (an IPY_MODEL_ id that means nothing outside a kernel).
_SKIP = ("_esm", "_css", "layout", "tabbable", "tooltip", "_dom_classes")

_MISSING = (
    "The standalone bundle is missing: {path}. In a source checkout, build it with "
    "`npm install && npm run build` in js/ (or `pip install -e .`, which runs that build)."
)
# What may not appear in an inline <script> or <style>: it would end the element early or switch
# the HTML parser into its "script data escaped" states.
_UNSAFE_INLINE = re.compile(r"</script|<!--|<script|</style", re.IGNORECASE)


def _read_static(path: Path) -> str:
    if not path.is_file():
        raise FileNotFoundError(_MISSING.format(path=path))
    text = path.read_text(encoding="utf-8")
    if _UNSAFE_INLINE.search(text):
        # esbuild escapes "</script" in strings; anything else would be a bundle we can't inline.
        raise ValueError(f"{path} holds '</script', '<script', '</style' or '<!--' and cannot be inlined in HTML")
    return text


def _as_view(obj, view_traits: dict):
    """(view, created): the LogprobView of a trace (a new one, closed by the caller) or the view given."""
    from .logprob_view import LogprobView

    if isinstance(obj, LogprobView):
        if view_traits:
            raise TypeError("view traits can only be given with a Trace; set them on the view instead")
        return obj, False
    if not isinstance(obj, Trace):
        raise TypeError(
            f"to_html exports a logprob_viz.Trace or LogprobView, got {type(obj).__name__}; "
            "make one with lv.generate(...), lv.score(...) or lv.from_openai(...)"
        )
    return LogprobView(obj, **view_traits), True


def state_parts(view) -> tuple[dict, list, list]:
    """(JSON state, buffer paths, buffers): ``view.get_state()`` less the bundle, the CSS and the
    layout reference, its binary buffers taken out as a widget message carries them
    (`logprob_viz.views.codec.split_buffers`)."""
    flush = getattr(view, "flush", None)
    if flush is not None:
        flush()  # a view mid-stream: its state gets the tokens not folded in yet
    return split_buffers({k: v for k, v in view.get_state().items() if k not in _SKIP})


def view_state(view) -> dict:
    """The view's state as the page reads it: ``{"state", "buffer_paths", "buffers"}`` (buffers base64)."""
    state, paths, buffers = state_parts(view)
    return {
        "state": state,
        "buffer_paths": paths,
        "buffers": [base64.b64encode(bytes(b)).decode("ascii") for b in buffers],
    }


def _state_b64(view) -> str:
    # allow_nan=False: the state must be JSON that the browser's JSON.parse reads.
    raw = json.dumps(view_state(view), separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return base64.b64encode(raw.encode("utf-8")).decode("ascii")


def _text_fallback(view, note: str) -> str:
    text = repr(view.trace) if hasattr(view, "trace") else repr(view)
    return f'<pre class="lv-standalone-fallback">{html.escape(text)}\n{html.escape(note)}</pre>'


_NOTE_SCRIPT = (
    "(logprob_viz: the view did not run here: its script is blocked, e.g. in an untrusted notebook; "
    "in JupyterLab, trust the notebook)"
)
_NOTE_LARGE = (
    "(logprob_viz: this trace is too large to embed in the notebook as HTML; "
    "export it with logprob_viz.views.page.to_html(trace, 'trace.html'))"
)


def _fragment(view, *, css: bool = True, max_state_bytes: int | None = None) -> str:
    box_id = f"lv-{uuid.uuid4().hex}"
    state = _state_b64(view)
    if max_state_bytes is not None and len(state) > max_state_bytes:
        return f'<div class="lv-standalone" id="{box_id}">{_text_fallback(view, _NOTE_LARGE)}</div>'
    parts = [f'<div class="lv-standalone" id="{box_id}">']
    if css:
        parts.append(f"<style>{_read_static(_STYLES)}</style>")
    parts += [
        # Shown until the script replaces it, and where scripts do not run (an untrusted notebook).
        f'<div class="lv-standalone-host">{_text_fallback(view, _NOTE_SCRIPT)}</div>',
        f'<script type="{STATE_TYPE}">{state}</script>',
        f"<script>{_read_static(_STANDALONE)}</script>",
        "</div>",
    ]
    return "".join(parts)


def html_fragment(obj, **view_traits) -> str:
    """The view of a trace (or a LogprobView) as a self-contained HTML fragment with its own script.

    About 30 KB (bundle + CSS) plus the trace's state (~4/3 of the widget's binary payload, as
    base64) per fragment. Meant for a notebook output's ``text/html``.
    """
    view, created = _as_view(obj, view_traits)
    try:
        return _fragment(view)
    finally:
        if created:
            view.close()


def to_html(trace, path: str | Path | None = None, *, title: str | None = None, **view_traits) -> str:
    """A standalone, offline HTML page showing `trace` as the LogprobView; written to `path` if given.

    Parameters
    ----------
    trace : Trace or LogprobView
        What to show (a view is exported with its current traits: mode, palette, selection).
    path : str or Path, optional
        Where to write the page (UTF-8).
    title : str, optional
        The page's title; default: "logprob_viz: <model>".
    **view_traits
        LogprobView traits for the page, e.g. ``color_mode="entropy"``, ``palette="magma"``,
        ``selected=3``.

    Returns
    -------
    str
        The HTML. It loads nothing: the view's script, its CSS and the data are inside it.
    """
    view, created = _as_view(trace, view_traits)
    try:
        body = _fragment(view)
        shown = view.trace
    finally:
        if created:
            view.close()
    if title is None:
        title = f"logprob_viz: {shown.meta.get('model', 'trace')}"
    page = (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # Nothing may load from the network; inline styles/scripts only.
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
        f"<title>{html.escape(str(title))}</title>\n"
        "<style>body { margin: 16px; font-family: system-ui, sans-serif; }</style>\n"
        f"</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
    if path is not None:
        Path(path).write_text(page, encoding="utf-8")
    return page


# The most state (base64 characters) a notebook output embeds as its text/html view: beyond it the
# output carries a text note instead (the notebook file would grow by 4/3 of the payload per view).
FALLBACK_MAX_STATE_BYTES = 2_000_000


def mimebundle_with_fallback(view, bundle, max_state_bytes: int | None = FALLBACK_MAX_STATE_BYTES):
    """`bundle` (a widget's ``_repr_mimebundle_`` result) with the view's HTML added as ``text/html``.

    A widget manager that knows the model shows the live widget (JupyterLab and Notebook 7 prefer
    the widget's MIME type in a trusted notebook); where none does (nbconvert's HTML of a notebook
    without saved widget state, notebook viewers, other frontends), the frontend shows
    ``text/html``: the same view, self-contained (~31 KB of bundle and CSS plus 4/3 of the state per
    output). An untrusted notebook in JupyterLab sanitizes it: the text fallback shows. A state
    larger than `max_state_bytes` (None: no limit) is replaced by a text note. Accepts anywidget's
    ``(data, metadata)`` tuple or a plain data dict, and returns the same shape.
    """
    if bundle is None:
        return None
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, None)
    data = dict(data)
    try:
        data[HTML_MIME] = _fragment(view, max_state_bytes=max_state_bytes)
    except (FileNotFoundError, ValueError) as exc:
        # A display must not fail: without the standalone bundle (a source checkout not built), the widget alone.
        logger.warning("no text/html fallback for the view: %s", exc)
        return bundle
    return (data, metadata) if isinstance(bundle, tuple) else data
