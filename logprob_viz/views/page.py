"""Every view's HTML outside a widget manager: the one page template and the one notebook fallback.

Generic: this module knows no view. What each record or view shows goes through one protocol:

- a view that can be a page provides ``page_html(max_state_bytes=None)`` (its HTML fragment: the
  LogprobView its own script and state through `script_fragment`, a comparison or a lens static
  HTML) and ``page_title()``;
- a record provides ``view(**traits)``, its view widget; `record_page` (a record's ``to_html``)
  and `fallback_html` make it `detached` (no comm to the browser) and ask that view;
- a record or app provides ``to_html(path)``: `record_page` for most records, its own pages for a
  corpus, fields, the explorer (one per branch).

The frontend files (`static_file`): the esbuild bundles and stylesheets in ``views/static``; a
missing one is an error that names it and the command that builds it, never a view without its
script or styles.

``to_html(record_or_view, path=None)`` writes a standalone, offline page (`page`: one file,
nothing fetched); with a `path` it returns the path; without, the page. For a record or an app it
is ``x.to_html(path)``; for a view, the view's page (`view_page`).
``with_html_fallback(bundle, make_html)`` adds ``text/html`` to a widget's mime bundle: what a
notebook output shows where no widget manager renders the widget (a notebook opened without a
kernel or untrusted, nbconvert's HTML export, notebook viewers). The views' one
``_repr_mimebundle_`` (`bundled.HtmlFallback`) goes through it.

Safety: token texts are never put into HTML unescaped. A view's state is base64 (A–Z, a–z,
0–9, +, /, =) inside a ``<script type="application/vnd.logprob-viz.state+base64">`` element that
the browser never runs (`script_fragment`); the view's script decodes it and inserts token text
with textContent. The text shown before the script runs is escaped with ``html.escape``, as is all
static HTML.
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

from ipywidgets import Layout

from .codec import split_buffers

__all__ = [
    "static_file",
    "require_frontend",
    "page",
    "written",
    "to_html",
    "view_page",
    "record_page",
    "fallback_html",
    "with_html_fallback",
    "script_fragment",
    "detached",
    "DetachedComm",
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


# -- a view's saved state, and a view as a fragment with its own script ------------------------


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


def state_b64(view) -> str:
    """`view_state` as the base64 of its UTF-8 JSON: what a page's state element holds (js/toolkit/saved_state.js)."""
    # allow_nan=False: the state must be JSON that the browser's JSON.parse reads.
    raw = json.dumps(view_state(view), separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    return base64.b64encode(raw.encode("utf-8")).decode("ascii")


NOTE_SCRIPT = (
    "(logprob_viz: the {what} did not run here: its script is blocked, e.g. in an untrusted notebook; "
    "in JupyterLab, trust the notebook)"
)


def script_fragment(widget, *, box: str, css: str, script: str, text: str, large_note: str,
                    what: str = "view", max_state_bytes: int | None = None) -> str:
    """A widget as a self-contained fragment that its standalone bundle mounts (js/toolkit/saved_state.js).

    ``<div class=box>``: a ``box-host`` showing `text` (escaped) until the script replaces it (and where
    scripts do not run), the state as base64 in a script element the browser never runs, the
    stylesheet `css` and the bundle `script` inlined. A state beyond `max_state_bytes` (base64
    characters) becomes `text` and `large_note` instead.
    """
    box_id = f"{box}-{uuid.uuid4().hex}"
    state = state_b64(widget)
    fallback = f'<pre class="{box}-fallback">{html.escape(text)}\n{{}}</pre>'
    if max_state_bytes is not None and len(state) > max_state_bytes:
        return f'<div class="{box}" id="{box_id}">{fallback.format(html.escape(large_note))}</div>'
    return "".join([
        f'<div class="{box}" id="{box_id}">',
        f"<style>{_read_static(css)}</style>",
        f'<div class="{box}-host">{fallback.format(html.escape(NOTE_SCRIPT.format(what=what)))}</div>',
        f'<script type="{STATE_TYPE}">{state}</script>',
        f"<script>{_read_static(script)}</script>",
        "</div>",
    ])


class DetachedComm:
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


_DetachedComm = DetachedComm  # the name benchmarks/corpus_view.py imports


@contextlib.contextmanager
def detached(make, *args, **traits):
    """``make(*args, **traits)`` (a widget class, or a record's ``view``) made with a `DetachedComm`
    (its layout too: a DOMWidget's layout is a widget of its own), closed afterwards."""
    layout = Layout(comm=DetachedComm())
    widget = make(*args, comm=DetachedComm(), layout=layout, **traits)
    try:
        yield widget
    finally:
        widget.close()
        layout.close()


# -- what a record or view shows as HTML: one protocol ------------------------------------------
#
# A view that can be a page provides ``page_html(max_state_bytes=None)`` (its HTML fragment: its
# own script and state, or static HTML) and ``page_title()``. A record provides ``view(**traits)``
# (its view widget), which must accept the widget keywords ``comm`` and ``layout`` (`detached`),
# and ``to_html(path)``. An app (the explorer: a page per branch) provides ``to_html(path)``.

_WHAT = (
    "to_html shows a logprob_viz record or view (a Trace, Comparison or Lens, their views, a Corpus, "
    "Fields, or the explorer), got {name}; make a trace with lv.generate(...), lv.score(...) or lv.read(...)"
)


def _is_page_view(obj) -> bool:
    return callable(getattr(obj, "page_html", None))


@contextlib.contextmanager
def _page_view(obj, view_traits: dict):
    """The view that shows `obj` as a page: `obj` itself, or a record's detached view with `view_traits`."""
    if _is_page_view(obj):
        if view_traits:
            raise TypeError(f"view traits ({', '.join(view_traits)}) can only be given with a record; "
                            f"set them on the {type(obj).__name__} instead")
        yield obj
        return
    if not callable(getattr(obj, "view", None)):
        raise TypeError(_WHAT.format(name=type(obj).__name__))
    with detached(obj.view, **view_traits) as view:
        if not _is_page_view(view):
            raise TypeError(f"a {type(obj).__name__}'s view ({type(view).__name__}) has no offline page yet; "
                            "show it in a notebook, or export its traces (lv.to_html(trace))")
        yield view


def fallback_html(obj, *, max_state_bytes: int | None = None) -> str:
    """What `obj` (a record or view) shows as HTML, through its view's ``page_html``: a trace its
    LogprobView with the view's script, a comparison or a lens static HTML. A state beyond
    `max_state_bytes` becomes a note."""
    with _page_view(obj, {}) as view:
        return view.page_html(max_state_bytes=max_state_bytes)


def view_page(view, path: str | Path | None = None, *, title: str | None = None) -> str | Path:
    """A page view's (``page_html``, ``page_title``) standalone, offline page; written to `path` if given."""
    return written(page(view.page_html(), title or view.page_title()), path)


def record_page(obj, path: str | Path | None = None, *, title: str | None = None, **view_traits) -> str | Path:
    """A record's page (``Trace.to_html``: what `shows` registers for every record): its view, made
    with `view_traits`, as a page (`view_page`)."""
    with _page_view(obj, view_traits) as view:
        return view_page(view, path, title=title)


def to_html(obj, path: str | Path | None = None, *, title: str | None = None, **view_traits) -> str | Path:
    """A standalone, offline HTML page of a record or view, written to `path` if given: a view's
    page, or ``obj.to_html(path, ...)`` (a record's, an app's).

    Parameters
    ----------
    obj : Trace, Comparison, Lens, or their view (LogprobView, CompareView, LensView); a Corpus, Fields, the explorer
        What to show. A view is exported with its current traits (mode, palette, selection); a
        record shows in its view with `view_traits`. A trace's page runs its view's script; a
        comparison or a lens is static HTML.
    path : str or Path, optional
        Where to write the page (UTF-8).
    title : str, optional
        The page's title; default: the view's (e.g. "logprob_viz: <model>").
    **view_traits
        The view's traits for a record's page, e.g. ``color_mode="entropy"``, ``palette="magma"``,
        ``selected=3`` for a trace's LogprobView.

    Returns
    -------
    str or Path
        The page (it loads nothing: scripts, CSS and data are inside it); with `path`, that path.
    """
    if _is_page_view(obj):  # a view, with its current traits
        if view_traits:
            raise TypeError(f"view traits ({', '.join(view_traits)}) can only be given with a record; "
                            f"set them on the {type(obj).__name__} instead")
        return view_page(obj, path, title=title)
    if not callable(getattr(obj, "to_html", None)):
        raise TypeError(_WHAT.format(name=type(obj).__name__))
    # a record's or an app's own page: a trace's is its view's (`record_page`), a corpus's the table
    # and one trace, the explorer's every branch
    return obj.to_html(path, **({"title": title} if title is not None else {}), **view_traits)


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
    plotly absent), the bundle alone, with a warning; where ``make_html()`` gives None, the bundle alone.
    """
    if bundle is None:
        return None
    data, metadata = bundle if isinstance(bundle, tuple) else (bundle, None)
    try:
        text = make_html()
    except (FileNotFoundError, ValueError, ImportError) as exc:
        logger.warning("no text/html fallback for the view: %s", exc)
        return bundle
    if text is None:  # a widget without a fallback of its own (`bundled.HtmlFallback`)
        return bundle
    data = {**data, HTML_MIME: text}
    return (data, metadata) if isinstance(bundle, tuple) else data
