"""Defaults for every view made from now on, set once at the top of a notebook: ``lv.settings``.

    import logprob_viz as lv
    lv.settings.size = "projector"   # every LogprobView after this line, for a class

A view's own trait (``view.size = "normal"``) still changes that one view; the setting only
decides what a new view starts with. Pure Python (no widget import), so ``lv.settings`` is cheap.
"""

from __future__ import annotations

# A growing view (a stream, the explorer's generation) reaches the browser at most this often while
# tokens arrive (LogprobView's batches, the explorer's updates): the sources' number, one for both.
from ..sources.request import UPDATE_S

__all__ = ["settings", "Settings", "SIZES", "UPDATE_S", "check_size"]

SIZES = ("normal", "projector")  # projector: everything in the view at 1.25 times (js/toolkit/theme.css)


def check_size(value) -> str:
    """`value` if it is one of SIZES; else a ValueError that says which ones there are."""
    if value not in SIZES:
        raise ValueError(f"size must be one of {', '.join(repr(s) for s in SIZES)} "
                         f"('projector' scales text, header, legend and chart for a class), got {value!r}")
    return value


class Settings:
    """What new views start with. ``size``: "normal" or "projector" (see `SIZES`)."""

    __slots__ = ("_size",)

    def __init__(self) -> None:
        self._size = "normal"

    @property
    def size(self) -> str:
        return self._size

    @size.setter
    def size(self, value: str) -> None:
        self._size = check_size(value)

    def __repr__(self) -> str:
        return f"lv.settings(size={self._size!r})"


settings = Settings()
