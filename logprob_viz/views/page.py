"""Every view's HTML outside a widget manager: the one page template and the one notebook fallback.

The frontend files (`static_file`): the esbuild bundles and stylesheets in ``views/static``; a
missing one is an error that names it and the command that builds it, never a view without its
script or styles.

``to_html(record_or_view, path=None)`` writes a standalone, offline page (`page`: one file,
nothing fetched): a trace (or a LogprobView) with its view's script and state inlined, so hover,
pinning, colour modes and palettes work in the page; a comparison (CompareView) or a lens
(LensView) as static HTML (`logprob_viz.views.static_html`); anything else with its own
``to_html`` (the explorer) through it. With a `path` it returns the path; without, the page.

``with_html_fallback(bundle, make_html)`` adds ``text/html`` to a widget's mime bundle: what a
notebook output shows where no widget manager renders the widget (a notebook opened without a
kernel or untrusted, nbconvert's HTML export, notebook viewers). Every view's
``_repr_mimebundle_`` goes through it; `fallback_html` says what each record or view shows there.

Safety: token texts are never put into HTML unescaped. A LogprobView's state is base64 (A–Z, a–z,
0–9, +, /, =) inside a ``<script type="application/vnd.logprob-viz.state+base64">`` element that
the browser never runs; the script decodes it and the view inserts token text with textContent.
The text shown before the script runs is escaped with ``html.escape``, as is all static HTML.
"""

from __future__ import annotations

import base64
import contextlib
import html
import json
import logging
import re
import uuid
from pathlib import Path

from ..records.trace import Trace
from .codec import split_buffers

__all__ = [
    "static_file",
    "require_frontend",
    "page",
    "written",
    "to_html",
    "fallback_html",
    "with_html_fallback",
    "html_fragment",
    "mimebundle_with_fallback",
    "view_state",
    "state_parts",
]

logger = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
STATE_TYPE = "application/vnd.logprob-viz.state+base64"
HTML_MIME = "text/html"

# Traits that the page does not need: the bundle and CSS (inlined once, separately) and
# ipywidgets' layout model reference (an IPY_MODEL_ id that means nothing outside a kernel).
_SKIP = ("_esm", "_css", "layout", "tabbable", "tooltip", "_dom_classes")

_MISSING = (
    "logprob_viz's frontend file {path} is missing: the JavaScript build has not run. In a source "
    "checkout, build it with `npm install && npm run build` in js/ (or `pip install -e .`, which runs "
    "that build), then restart the kernel. An installed wheel ships it: reinstall with "
    "`pip install --force-reinstall logprob-viz`."
)
# What may not appear in an inline <script> or <style>: it would end the element early or switch
# the HTML parser into its "script data escaped" states.
_UNSAFE_INLINE = re.compile(r"</script|<!--|<script|</style", re.IGNORECASE)


def static_file(name: str) -> Path:
    """The built frontend file `name` (e.g. ``"widget.css"``); FileNotFoundError naming it and the build if missing."""
    path = STATIC / name
    if not path.is_file():
        raise FileNotFoundError(_MISSING.format(path=path))
    return path


def require_frontend(view_class, *names: str) -> None:
    """Check that a view's bundle and stylesheet (`names`) were built and loaded with its class."""
    for name in names:
        static_file(name)
    if not (hasattr(view_class, "_esm") and hasattr(view_class, "_css")):
        raise FileNotFoundError(
            f"{view_class.__name__}'s frontend files ({', '.join(names)}) were not built when logprob_viz was "
            "imported: build them with `npm install && npm run build` in js/ (or `pip install -e .`), then "
            "restart the kernel to load them"
        )


def _read_static(name: str) -> str:
    path = static_file(name)
    text = path.read_text(encoding="utf-8")
    if _UNSAFE_INLINE.search(text):
        # esbuild escapes "</script" in strings; anything else would be a bundle we can't inline.
        raise ValueError(f"{path} holds '</script', '<script', '</style' or '<!--' and cannot be inlined in HTML")
    return text


# -- the one page template ------------------------------------------------------------------


def page(body: str, title: str) -> str:
    """A standalone HTML page around `body` (trusted HTML) that may load nothing from the network."""
    return (
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


def written(text: str, path) -> str | Path:
    """`text` itself, or (with a `path`) the path it was written to: a cell's last line then shows
    a path, not a whole page."""
    if path is None:
        return text
    path = Path(path)
    path.write_text(text, encoding="utf-8")
    return path


# -- the LogprobView as a fragment with its own script ------------------------------------------


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
    "export it with lv.to_html(trace, 'trace.html'))"
)


def _fragment(view, *, max_state_bytes: int | None = None) -> str:
    box_id = f"lv-{uuid.uuid4().hex}"
    state = _state_b64(view)
    if max_state_bytes is not None and len(state) > max_state_bytes:
        return f'<div class="lv-standalone" id="{box_id}">{_text_fallback(view, _NOTE_LARGE)}</div>'
    return "".join(
        [
            f'<div class="lv-standalone" id="{box_id}">',
            f"<style>{_read_static('widget.css')}</style>",
            # Shown until the script replaces it, and where scripts do not run (an untrusted notebook).
            f'<div class="lv-standalone-host">{_text_fallback(view, _NOTE_SCRIPT)}</div>',
            f'<script type="{STATE_TYPE}">{state}</script>',
            f"<script>{_read_static('standalone.js')}</script>",
            "</div>",
        ]
    )


class _DetachedComm:
    """A comm that reaches no frontend. A view made only for its state (an HTML copy) gets one, so
    no widget is announced to the browser and closed at once (its widget manager would then report
    "[anywidget] Failed to initialize model")."""

    target_name = "jupyter.widget"  # what a widget's comm has, and hosts read (Panel's ipywidgets hook)
    kernel = None
    primary = True

    def __init__(self) -> None:
        self.comm_id = uuid.uuid4().hex

    def on_msg(self, callback) -> None:
        pass

    def send(self, *args, **kwargs) -> None:
        pass

    def close(self, *args, **kwargs) -> None:
        pass


@contextlib.contextmanager
def _logprob_view(obj, view_traits: dict):
    """The LogprobView of a trace (a detached one, closed afterwards) or the view given."""
    from ipywidgets import Layout

    from .logprob_view import LogprobView

    if isinstance(obj, LogprobView):
        if view_traits:
            raise TypeError("view traits can only be given with a Trace; set them on the view instead")
        yield obj
        return
    layout = Layout(comm=_DetachedComm())  # a DOMWidget's layout is a widget of its own
    view = LogprobView(obj, comm=_DetachedComm(), layout=layout, **view_traits)
    try:
        yield view
    finally:
        view.close()
        layout.close()


def html_fragment(obj, **view_traits) -> str:
    """The view of a trace (or a LogprobView) as a self-contained HTML fragment with its own script.

    About 45 KB (bundle + CSS) plus the trace's state (~4/3 of the widget's binary payload, as
    base64) per fragment. Meant for a notebook output's ``text/html``.
    """
    with _logprob_view(obj, view_traits) as view:
        return _fragment(view)


# -- what each record and view shows as HTML --------------------------------------------------

_WHAT = (
    "to_html shows a logprob_viz record or view (Trace, Comparison, Lens, LogprobView, CompareView, "
    "LensView, or the explorer), got {name}; make a trace with lv.generate(...), lv.score(...) or lv.read(...)"
)


def _static_source(obj):
    """("comparison" | "lens", record) for a comparison or a lens (or their views); None for anything else."""
    from ..records.comparison import Comparison
    from ..records.lens import Lens

    record = obj
    for inner in (getattr(obj, "comparison", None), getattr(obj, "lens", None)):  # a view: its record
        if inner is not None:
            record = inner
    if isinstance(record, Comparison):
        return "comparison", record
    if isinstance(record, Lens):
        return "lens", record
    return None


def fallback_html(obj, *, max_state_bytes: int | None = None) -> str:
    """What `obj` (a record or view) shows as HTML: a trace its LogprobView with the view's script,
    a comparison or a lens static HTML. A trace's state beyond `max_state_bytes` becomes a note."""
    from .logprob_view import LogprobView

    if isinstance(obj, (Trace, LogprobView)):
        with _logprob_view(obj, {}) as view:
            return _fragment(view, max_state_bytes=max_state_bytes)
    source = _static_source(obj)
    if source is None:
        raise TypeError(_WHAT.format(name=type(obj).__name__))
    from .static_html import comparison_html, lens_html

    kind, record = source
    return comparison_html(record) if kind == "comparison" else lens_html(record)


def to_html(obj, path: str | Path | None = None, *, title: str | None = None, **view_traits) -> str | Path:
    """A standalone, offline HTML page of a record or view; written to `path` if given.

    Parameters
    ----------
    obj : Trace, Comparison, Lens, or their view (LogprobView, CompareView, LensView), or the explorer
        What to show. A LogprobView is exported with its current traits (mode, palette, selection);
        a trace shows in a LogprobView with `view_traits`. A comparison or a lens is static HTML.
    path : str or Path, optional
        Where to write the page (UTF-8).
    title : str, optional
        The page's title; default: "logprob_viz: <model>".
    **view_traits
        LogprobView traits for a trace's page, e.g. ``color_mode="entropy"``, ``palette="magma"``,
        ``selected=3``.

    Returns
    -------
    str or Path
        The page (it loads nothing: scripts, CSS and data are inside it); with `path`, that path.
    """
    from .logprob_view import LogprobView

    if isinstance(obj, (Trace, LogprobView)):
        with _logprob_view(obj, view_traits) as view:
            body, meta = _fragment(view), view.trace.meta
        what = "trace"
    else:
        if view_traits:
            raise TypeError(f"view traits ({', '.join(view_traits)}) only apply to a Trace's LogprobView")
        source = _static_source(obj)
        if source is None:
            if callable(getattr(obj, "to_html", None)):
                return obj.to_html(path)  # the explorer: every branch, its own page
            raise TypeError(_WHAT.format(name=type(obj).__name__))
        body, (what, record) = fallback_html(obj), source
        meta = getattr(record, "meta", {})
    if title is None:
        title = f"logprob_viz: {meta.get('model', what)}"
    return written(page(body, title), path)


# -- the notebook output's text/html ---------------------------------------------------------------

# The most state (base64 characters) a notebook output embeds as its text/html view: beyond it the
# output carries a text note instead (the notebook file would grow by 4/3 of the payload per view).
FALLBACK_MAX_STATE_BYTES = 2_000_000


def with_html_fallback(bundle, make_html):
    """`bundle` (a widget's ``_repr_mimebundle_`` result) with ``make_html()`` added as ``text/html``.

    A widget manager that knows the model shows the live widget (JupyterLab and Notebook 7 prefer
    the widget's MIME type in a trusted notebook); where none does (nbconvert's HTML of a notebook
    without saved widget state, notebook viewers, other frontends), the frontend shows
    ``text/html``. Accepts anywidget's ``(data, metadata)`` tuple or a plain data dict, and returns
    the same shape. A display must not fail: when the HTML cannot be made (a frontend file missing,
    plotly absent), the bundle alone, with a warning.
    """
    if bundle is None:
        return None
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, None)
    try:
        data = {**data, HTML_MIME: make_html()}
    except (FileNotFoundError, ValueError, ImportError) as exc:
        logger.warning("no text/html fallback for the view: %s", exc)
        return bundle
    return (data, metadata) if isinstance(bundle, tuple) else data


def mimebundle_with_fallback(view, bundle, max_state_bytes: int | None = FALLBACK_MAX_STATE_BYTES):
    """`bundle` with the view's HTML (`fallback_html`) added as ``text/html`` (see `with_html_fallback`).

    A LogprobView's HTML is the same view, self-contained (~45 KB of bundle and CSS plus 4/3 of the
    state per output); a state larger than `max_state_bytes` (None: no limit) is replaced by a text
    note. An untrusted notebook in JupyterLab sanitizes it: the text fallback shows.
    """
    return with_html_fallback(bundle, lambda: fallback_html(view, max_state_bytes=max_state_bytes))
