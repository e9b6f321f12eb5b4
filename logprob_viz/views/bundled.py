"""The base of the views' anywidgets that ship a bundle of their own (`Bundled`)."""

from __future__ import annotations

import anywidget

from .page import STATIC

__all__ = ["Bundled"]


class Bundled(anywidget.AnyWidget):
    """An anywidget whose script and styles are ``views/static/<bundle>.js`` and ``.css``:
    ``class Panel(Bundled, bundle="fields")``. Where they are not built (a checkout before
    ``npm run build``) the class has neither, and `page.require_frontend` says how to build them."""

    def __init_subclass__(cls, bundle: str | None = None, **kwargs) -> None:
        if bundle is not None:
            for key, suffix in (("_esm", "js"), ("_css", "css")):
                if (STATIC / f"{bundle}.{suffix}").is_file():
                    setattr(cls, key, STATIC / f"{bundle}.{suffix}")  # (before anywidget reads them, below)
        super().__init_subclass__(**kwargs)
