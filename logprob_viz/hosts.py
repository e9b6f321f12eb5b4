"""What a host that is not Jupyter needs from the package, written once here.

Panel (1.9, through ipywidgets_bokeh 1.8) loads each widget's frontend module from a CDN:
``{cdn}/{package}@{version}/dist/{file}`` (``https://unpkg.com`` by default, a per-model ``cdn``
property of ``ipywidgets_bokeh.widget.IPyWidget``). The views' own modules travel inside the widget
state (anywidget's ``_esm``), so the only module the page must fetch is anywidget's; `panel()` serves
that one from the installed ``anywidget`` package, with no network and no server route: the ``cdn``
of every Panel ipywidget becomes a ``data:`` URL holding anywidget's AMD bundle, followed by ``//``
so that the path the loader appends is a JavaScript comment.
"""

from __future__ import annotations

import functools
import urllib.parse
from pathlib import Path

__all__ = ["panel"]

_MARK = "_logprob_viz_offline"  # set on IPyWidget.__init__ once it is wrapped (idempotent across sessions)


@functools.lru_cache(maxsize=1)
def anywidget_cdn() -> str:
    """A ``data:`` URL that ipywidgets_bokeh's loader fetches as anywidget's module, whatever path it appends."""
    import anywidget  # only the Panel host needs it: `import logprob_viz` stays light

    bundle = Path(anywidget.__file__).parent / "nbextension" / "index.js"
    if not bundle.exists():
        raise FileNotFoundError(f"{bundle} is missing: reinstall anywidget (pip install --force-reinstall anywidget)")
    return "data:text/javascript;charset=utf-8," + urllib.parse.quote(bundle.read_text() + "\n//", safe="")


def panel() -> None:
    """Make Panel show the views and the explorer offline: call it once in the app script (each
    session may call it again; it wraps ipywidgets_bokeh's model only once), before the first
    ``pn.panel(widget)``.

    Only anywidget's module is served this way; another widget library's module (bqplot, …) would
    still be fetched from ipywidgets_bokeh's default CDN, which fails offline.
    """
    try:
        from ipywidgets_bokeh.widget import IPyWidget  # an optional host package: only Panel users have it
    except ImportError as error:
        raise ImportError("lv.hosts.panel() needs Panel's ipywidgets support: "
                          "pip install panel ipywidgets_bokeh") from error
    if getattr(IPyWidget.__init__, _MARK, False):
        return
    original = IPyWidget.__init__

    @functools.wraps(original)
    def offline_init(self, *, widget, **kwargs):
        kwargs.setdefault("cdn", anywidget_cdn())
        original(self, widget=widget, **kwargs)

    setattr(offline_init, _MARK, True)
    IPyWidget.__init__ = offline_init
