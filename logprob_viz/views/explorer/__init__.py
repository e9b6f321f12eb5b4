"""The explorer app, `lv.explore()`: prompt, sampling controls, streaming, manual decoding and branches
around one LogprobView (see `app.py`)."""

from __future__ import annotations

from .app import Explorer, explore
from .view import ExplorerView

__all__ = ["Explorer", "ExplorerView", "explore"]
