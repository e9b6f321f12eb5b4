"""What every record with a view shares: its offline page and its notebook display, through the view.

A record class inherits `Viewable` and defines ``view(**traits)`` (its own view widget). Views are
imported inside the methods, never at module level: records must load without the views layer.
"""

from __future__ import annotations

__all__ = ["Viewable"]


class Viewable:
    """``to_html`` and ``_repr_mimebundle_`` for a record whose ``view()`` returns its widget."""

    def view(self, **traits):
        raise NotImplementedError

    def to_html(self, path=None, **view_traits):
        """This record as one standalone, offline HTML page: written to `path` (and the path returned),
        or returned as a string without one (see `logprob_viz.views.page.to_html`)."""
        from ..views.page import to_html

        return to_html(self, path, **view_traits)

    def _repr_mimebundle_(self, **kwargs):
        return self.view()._repr_mimebundle_(**kwargs)
