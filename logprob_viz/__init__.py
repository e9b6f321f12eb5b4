"""logprob_viz: see what a language model was choosing between, token by token.

    import logprob_viz as lv
    t = lv.generate("A robot may not injure a human being", max_new_tokens=32, top_logprobs=5)
    t        # the last expression of a cell shows the widget

Importing this package is cheap: torch, transformers and the widget load when first used.
"""

from __future__ import annotations

import logging
from importlib import import_module

from .trace import Trace

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())

# public name -> module that defines it, imported on first use
_LAZY = {
    "load": ".runners.transformers",
    "generate": ".runners.transformers",
    "score": ".runners.transformers",
    "TransformersRunner": ".runners.transformers",
    "default_model_path": ".default_model",
    "LogprobView": ".widget",
    "from_openai": ".adapters.openai",
    "read": ".adapters",
    "connect": ".runners.openai",
    "to_html": ".export",
    "Tree": ".tree",
    # the package is "explorer": a submodule named like the function would shadow lv.explore once imported
    "explore": ".explorer",
    "Explorer": ".explorer",
    "compare": ".comparison",
    "Comparison": ".comparison",
    "CompareView": ".compare_view",
    "link": ".linked",
    "Lens": ".lens",
    "LensView": ".lens_view",
}

__all__ = ["Trace", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'logprob_viz' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
