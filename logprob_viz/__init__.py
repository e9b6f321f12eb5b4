"""logprob_viz: see what a language model was choosing between, token by token.

    import logprob_viz as lv
    t = lv.generate("A robot may not injure a human being", max_new_tokens=32, top_logprobs=5)
    t        # the last expression of a cell shows the widget

Importing this package is cheap: torch, transformers and the widget load when first used.

The rooms, each importing only those before it:
- `records`: the Trace and everything computed from records alone (corpus, comparison, JSON fields, ...);
- `sources`: what makes records: the local runner, the server clients (`lv.connect`), the readers (`lv.read`);
- `views`: what a person sees: the widgets, the pages, the explorer (`lv.explore`);
- `servers`: local vLLM and llama.cpp server processes; `ray`: `lv.ray`, Ray Data past one machine;
  `hosts`: what a host that is not Jupyter (Panel) needs.
"""

from __future__ import annotations

import logging
from importlib import import_module

from .records.readable import load_readers_with
from .records.trace import Trace
from .records.viewable import load_views_with

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())


def _load_views() -> None:
    # The records find their views in a table the views fill in (records/viewable.py): loaded at the
    # first display, not here, so that importing the package does not import the widgets.
    from .views import shows  # noqa: F401 (imported for its registrations)


load_views_with(_load_views)


def _load_readers() -> None:
    # Corpus.from_responses and the other readings of server responses are the readers' (records/readable.py):
    # loaded at the first such call, so that a record imports nothing above it.
    from .sources.readers import corpus  # noqa: F401 (imported for its registrations)


load_readers_with(_load_readers)

# public name -> module that defines it, imported on first use
_LAZY = {
    "load": ".sources.local.loading",
    "generate": ".sources.local.loading",
    "score": ".sources.local.loading",
    "TransformersRunner": ".sources.local.runner",
    "default_model_path": ".sources.local.default_model",
    "connect": ".sources.remote",
    "read": ".sources.readers",
    "from_openai": ".sources.readers",
    "read_lm_eval": ".sources.readers.lm_eval",
    "LogprobFormatError": ".sources.errors",
    "ServerError": ".sources.errors",
    "CorpusIncomplete": ".sources.remote.corpus",
    "ParquetPartError": ".records.corpus",
    "Tree": ".records.tree",
    "compare": ".records.comparison",
    "Comparison": ".records.comparison",
    "ComparisonWarning": ".records.comparison",
    "Lens": ".records.lens",
    "Attribution": ".records.attribution",
    "Corpus": ".records.corpus",
    "Fields": ".records.json",
    "FieldRow": ".records.json",
    "JSONBreak": ".records.json",
    "compare_corpora": ".records.corpus",
    "Choices": ".records.choices",
    "calibration": ".records.calibration",
    "Calibration": ".records.calibration",
    "sampled_from": ".records.samplers",
    "audit": ".sources.audit",
    "Audit": ".records.audit",
    "divergence": ".sources.divergence",
    "read_kld": ".sources.divergence",
    "read_rollouts": ".sources.divergence",
    "Rollouts": ".records.divergence",
    "Divergence": ".records.divergence",
    "Divergences": ".records.divergence",
    "LogprobView": ".views.logprob.view",
    "CompareView": ".views.compare.view",
    "LensView": ".views.lens.view",
    "CorpusView": ".views.corpus.view",
    "FieldsView": ".views.fields.view",
    "link": ".views.plot_link",
    "to_html": ".views.page",
    "settings": ".views.defaults",
    "guess": ".views.guess.game",
    "GuessGame": ".views.guess.game",
    # the package is "explorer": a submodule named like the function would shadow lv.explore once imported
    "explore": ".views.explorer",
    "Explorer": ".views.explorer",
}

# submodules reached as attributes, imported on first use (lv.ray imports ray, lv.hosts.panel() panel:
# never at import time)
_SUBMODULES = ("ray", "hosts")

__all__ = ["Trace", *_LAZY, *_SUBMODULES]


def __getattr__(name: str):
    if name in _SUBMODULES:
        return import_module(f".{name}", __name__)
    if name in _LAZY:
        return getattr(import_module(_LAZY[name], __name__), name)
    if name == "OpenAIResponseError":  # deprecated, not in __all__: the old name of ServerError, with a warning
        return import_module(".sources.errors", __name__).deprecated_alias(__name__, name)
    raise AttributeError(f"module 'logprob_viz' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
