"""How a record finds its view without importing the views layer: a table the views fill in.

The records layer comes first (records → sources → views): a record knows nothing of the widgets
that draw it. Its display methods (``view``, ``plot``, ``to_html``, ``to_svg``, ``to_latex``)
each call ``show(self, "view", ...)``, which looks the record's type up (through its bases, so a
subclass of `Corpus` shows as a corpus) in what `register` was given. ``views/shows.py`` is where
every record's views are registered, in one table; the package (``logprob_viz/__init__.py``)
hands ``load_views_with`` a loader that imports it, run once before the first lookup, so
``import logprob_viz`` stays cheap and a record never imports a view.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Viewable", "ViewNotRegistered", "register", "show", "load_views_with", "find_registered"]

_SHOWS: dict[type, dict[str, Callable]] = {}
_loader: list[Callable[[], object]] = []  # the views' loader, until it has run


class ViewNotRegistered(ImportError):
    """No view is registered for this record and this kind of picture.

    An ImportError, since the usual cause is a views layer that could not be loaded: the display
    methods' callers that fall back to a plain table on ImportError (no plotly, no widgets) keep
    doing so."""


def register(record_type: type, **shows: Callable) -> None:
    """`record_type`'s pictures: ``view=``, ``plot=``, ``to_html=``, ... each a function of the record
    (and the method's arguments) returning what that method returns."""
    _SHOWS.setdefault(record_type, {}).update(shows)


def load_views_with(loader: Callable[[], object]) -> None:
    """`loader` imports the module that registers the views; it runs before the first lookup."""
    _loader[:] = [loader]


def show(record, what: str, *args, **kwargs):
    """``record``'s `what` ("view", "plot", "to_html", ...) from its registered view, with the arguments."""
    return _registered(type(record), what)(record, *args, **kwargs)


def find_registered(table: dict[type, dict[str, Callable]], loader: list, record_type: type,
                    what: str) -> Callable | None:
    """`what` of `record_type` or its nearest base in `table`; where it is not there yet, `loader`'s
    function (which fills the table) runs once first. None when it is not registered at all.
    (The readers' table, records/readable.py, is looked up the same way.)"""
    while True:
        for klass in record_type.__mro__:
            found = table.get(klass, {}).get(what)
            if found is not None:
                return found
        if not loader:
            return None
        loader[0]()  # (a loader that raises stays, so the next call says the same real cause)
        loader.clear()


def _registered(record_type: type, what: str) -> Callable:
    found = find_registered(_SHOWS, _loader, record_type, what)
    if found is not None:
        return found
    raise ViewNotRegistered(
        f"{record_type.__name__} has no {what!r}: no view is registered for it. Import logprob_viz (which loads "
        "logprob_viz.views.shows) before displaying a record; a record type of your own registers its views "
        "with logprob_viz.records.viewable.register")


class Viewable:
    """``view``, ``to_html`` and ``_repr_mimebundle_`` for a record whose views are registered."""

    def view(self, **traits):
        """This record's view (a widget), with `traits`."""
        return show(self, "view", **traits)

    def to_html(self, path=None, **view_traits):
        """This record as one standalone, offline HTML page: written to `path` (and the path returned),
        or returned as a string without one (see `logprob_viz.views.page.to_html`)."""
        return show(self, "to_html", path, **view_traits)

    def _repr_mimebundle_(self, **kwargs):
        return self.view()._repr_mimebundle_(**kwargs)
