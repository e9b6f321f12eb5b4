"""The one base of the views' widgets: each bundle declared once, its check, and the notebook's HTML fallback.

`BUNDLES` lists every bundle that ``js/build.mjs`` writes into ``views/static`` with its files; the
wheel's ensured targets (``pyproject.toml``) are the same files, and tests/views/test_bundled.py holds
the three to one set. A widget names its bundle once, ``class Panel(Bundled, bundle="fields")``;
`Bundled` loads the script and stylesheet into the class and checks, when a widget is made, that
they were built (`page.require_frontend`: the error names the file and the command that builds it).

`HtmlFallback` is the one ``_repr_mimebundle_`` of the views, composites and apps: the live widget
where a widget manager renders it, and ``fallback_html()`` as ``text/html`` where none does
(nbconvert's HTML, notebook viewers; `page.with_html_fallback`).
"""

from __future__ import annotations

import anywidget
import traitlets as t

from .defaults import check_size
from .page import STATIC, require_frontend, with_html_fallback

__all__ = ["BUNDLES", "Bundled", "HtmlFallback", "checked_size"]


def checked_size(view, proposal) -> str:
    """The `size` trait's check for a view that has one (``_check_size = t.validate("size")(checked_size)``):
    `defaults.check_size`, its error as the TraitError traitlets expects."""
    try:
        return check_size(proposal["value"])
    except ValueError as error:
        raise t.TraitError(str(error)) from None

# Every bundle js/build.mjs writes (its ENTRIES), with the files in views/static the package needs:
# a widget's script and stylesheet, or an offline page's script (the page inlines the widget's styles).
BUNDLES: dict[str, tuple[str, ...]] = {
    "widget": ("widget.js", "widget.css"),  # LogprobView
    "standalone": ("standalone.js",),  # a LogprobView's offline page (page.script_fragment)
    "compare": ("compare.js", "compare.css"),  # CompareView
    "lens": ("lens.js", "lens.css"),  # LensView
    "guess": ("guess.js", "guess.css"),  # GuessGame
    "corpus": ("corpus.js", "corpus.css"),  # CorpusTable, the table of a CorpusView
    "corpus_standalone": ("corpus_standalone.js",),  # a CorpusView's offline page
    "fields": ("fields.js", "fields.css"),  # FieldsPanel, the panel of a FieldsView
    "choices": ("choices.js", "choices.css"),  # ChoicesBars, the bars of a ChoicesView
    "explorer_host": ("explorer_host.js", "explorer_host.css"),  # the explorer's HostPanel
    "kernel_note": ("kernel_note.js", "kernel_note.css"),  # the explorer's KernelNote
    "divergence": ("divergence.js", "divergence.css"),  # DivergenceView
    "plot_fit": ("plot_fit.js", "plot_fit.css"),  # PlotFit, the reliability diagram's width keeper
}


class HtmlFallback:
    """``_repr_mimebundle_`` for a widget, or an object shown as one: the live widget's bundle
    (`live_mimebundle`) with ``fallback_html()`` added as ``text/html``. A display never fails over
    the HTML: where it cannot be made, the live bundle alone (`page.with_html_fallback`)."""

    def fallback_html(self) -> str | None:
        """What a notebook output shows where no widget manager renders the widget; None (the
        default, for a part shown inside a composite): the live widget alone."""
        return None

    def live_mimebundle(self, **kwargs):
        """The live widget's mime bundle: this widget's own (an object that shows another widget overrides it)."""
        return super()._repr_mimebundle_(**kwargs)

    def _repr_mimebundle_(self, **kwargs):
        return with_html_fallback(self.live_mimebundle(**kwargs), self.fallback_html)


class Bundled(HtmlFallback, anywidget.AnyWidget):
    """An anywidget whose script and styles are its bundle's (`BUNDLES`): ``views/static/<bundle>.js``
    and ``.css``. Where they are not built (a checkout before ``npm run build``) the class has
    neither, and making a widget raises FileNotFoundError naming the file and the build."""

    bundle: str = ""  # its key in BUNDLES, given once as the class keyword ``bundle=``

    def __init_subclass__(cls, bundle: str | None = None, **kwargs) -> None:
        if bundle is not None:
            if len(BUNDLES.get(bundle, ())) != 2:
                raise ValueError(f"{cls.__name__}: bundle must be a widget's bundle in BUNDLES, got {bundle!r}")
            cls.bundle = bundle
            for key, name in zip(("_esm", "_css"), BUNDLES[bundle], strict=True):
                if (STATIC / name).is_file():
                    setattr(cls, key, STATIC / name)  # (before anywidget reads them, below)
        super().__init_subclass__(**kwargs)

    def __init__(self, *args, **kwargs) -> None:
        require_frontend(type(self), *BUNDLES[self.bundle])
        super().__init__(*args, **kwargs)
