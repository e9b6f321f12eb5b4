"""Which view draws which record: the one table the records' display methods look up.

A record's ``view()``, ``plot()``, ``to_html()``, ``to_svg()`` and ``to_latex()`` call
``records.viewable.show(record, "view", ...)``, which finds here the function that makes it, so
the records never import a view (see records/viewable.py). Importing this module registers them;
the package's loader does that before the first display. A record type of your own adds its row
with `logprob_viz.records.viewable.register`.
"""

from __future__ import annotations

from ..records.calibration import Calibration
from ..records.choices import Choices
from ..records.comparison import Comparison
from ..records.corpus import Corpus
from ..records.divergence import Divergence
from ..records.divergence.rollouts import Rollouts
from ..records.json import Fields
from ..records.lens import Lens
from ..records.trace import Trace
from ..records.viewable import Viewable, register
from .calibration_plot import reliability_diagram, reliability_figure
from .choices.view import ChoicesView
from .compare.view import CompareView
from .corpus.view import CorpusView, corpus_html
from .divergence.rollout import RolloutView
from .divergence.view import DivergenceView
from .export_svg import to_svg
from .fields.view import FieldsView, fields_html
from .lens.view import LensView
from .logprob.view import LogprobView
from .page import record_page
from .pictures import to_latex
from .plots import plot, plot_comparison

__all__: list[str] = []

register(Viewable, to_html=record_page)  # any record: its view's page
register(Trace, view=LogprobView, plot=plot, to_svg=to_svg, to_latex=to_latex)  # to_html: Viewable's
register(Comparison, view=CompareView, plot=plot_comparison)
register(Lens, view=LensView)
register(Corpus, view=CorpusView, to_html=corpus_html)
register(Fields, view=FieldsView, to_html=fields_html)
register(Choices, view=ChoicesView)
register(Calibration, view=reliability_diagram, plot=reliability_figure)
register(Divergence, view=DivergenceView)
register(Rollouts, view=RolloutView)
