"""The explorer in hosts that render anywidgets but no ipywidgets containers (marimo).

marimo shows an anywidget (the LogprobView works there as it is) but answers every other Jupyter
widget, the explorer's VBox of controls included, with "Jupyter widgets are not supported". So
there the app shows as two anywidgets: `HostPanel`, the controls (js/explorer_host/panel.js), and
the explorer's own view. The panel is a mirror, not a second app: each of its traits is linked
to the explorer's ipywidget of the same meaning (the prompt box, the sliders) or follows the
app's state (`state.py`: the status line, the job running, Next token's choices) or the outline
(the branch list), and its buttons call the same actions, so every rule of the explorer (one job at a time, Stop
keeps what was generated, errors in the status line) holds in marimo as in JupyterLab. Branching
by a click on an alternative's bar is the view's own message to the explorer, unchanged.

Left out in marimo, and said so in docs/hosts.md: the temperature readout at a pinned token, the
branch-here dropdown (a click on a bar branches) and the Compare button (marimo lays a cell's
output out once, so a view made later would not appear: ``app.branches.compare()`` as a cell's
last expression shows it).
"""

from __future__ import annotations

import traitlets as t

from ..bundled import Bundled
from ..toolkit import percent_of_logprob
from .actions import from_panel, run
from .forks import visible
from .panels import choices_of

__all__ = ["HostPanel", "choice_labels", "marimo_layout"]

# (panel trait, attribute of the explorer's Controls whose .value it mirrors)
_LINKED = [
    ("prompt", "prompt"),
    ("temperature", "temperature"),
    ("top_p", "top_p"),
    ("min_p", "min_p"),
    ("top_k", "top_k"),
    ("max_new_tokens", "max_new_tokens"),
    ("top_logprobs", "top_logprobs"),
    ("seed", "seed"),
    ("chat", "chat"),
]


class HostPanel(Bundled, bundle="explorer_host"):
    """The explorer's controls, status line, next-token choices and branch list as one anywidget."""

    prompt = t.Unicode("").tag(sync=True)
    temperature = t.Float(0.0).tag(sync=True)
    top_p = t.Float(1.0).tag(sync=True)
    min_p = t.Float(0.0).tag(sync=True)
    min_p_available = t.Bool(True).tag(sync=True)
    top_k = t.Int(0).tag(sync=True)
    max_new_tokens = t.Int(32).tag(sync=True)
    top_logprobs = t.Int(5).tag(sync=True)
    top_logprobs_max = t.Int(20).tag(sync=True)
    seed = t.Int(0).tag(sync=True)
    chat = t.Bool(False).tag(sync=True)
    chat_available = t.Bool(False).tag(sync=True)
    running = t.Bool(False).tag(sync=True)
    status = t.Unicode("").tag(sync=True)
    status_kind = t.Unicode("info").tag(sync=True)
    choices = t.List(t.Tuple(t.Int(), t.Unicode())).tag(sync=True)  # (token id, label) of Next token
    branches = t.List(t.Unicode()).tag(sync=True)  # the branch list's labels, root first
    branch = t.Int(-1).tag(sync=True)  # the branch on show

    def __init__(self, state, controls, outline, actions: dict) -> None:
        """`state`: the app's `ExplorerState`; `controls`: its `Controls`; `outline`: its `BranchList`;
        `actions`: the app's action table (`actions.py`)."""
        c = controls
        # the controls' values first: a link copies its source (the panel) into its target
        values = {mine: getattr(c, theirs).value for mine, theirs in _LINKED}
        super().__init__(top_logprobs_max=int(c.top_logprobs.max), chat_available=not c.chat.disabled,
                         min_p_available=not c.min_p.disabled, **values)
        self.outline, self.actions = outline, actions
        self._links = [t.link((self, mine), (getattr(c, theirs), "value")) for mine, theirs in _LINKED]
        t.dlink((state, "running"), (self, "running"), lambda job: job is not None)
        t.dlink((state, "status"), (self, "status"), lambda status: status[1])
        t.dlink((state, "status"), (self, "status_kind"), lambda status: status[0])
        t.dlink((state, "step"), (self, "choices"), lambda step: choice_labels(choices_of(step) if step else []))
        # the outline is rebuilt (new rows) whenever the tree or the node on show changes
        outline.outline.observe(lambda _: self._branches(), names="children")
        self._branches()
        self.observe(self._picked, names="branch")
        self.on_msg(self._pressed)

    def _branches(self) -> None:
        outline = self.outline
        self.branches = [str(label) for label in outline.labels]
        shown = outline.index_of(outline.current)
        self.branch = -1 if shown is None else shown

    def _picked(self, change) -> None:
        outline = self.outline
        picked = change["new"]
        if 0 <= picked < len(outline.nodes) and picked != outline.index_of(outline.current):
            self.actions["switch"](outline.nodes[picked])  # as a click on the outline's row does

    def _pressed(self, _widget, content, _buffers) -> None:
        run(self.actions, from_panel(content))  # the app's action table (actions.py), as its buttons


def choice_labels(options: list[tuple[int, str, float]]) -> list[tuple[int, str]]:
    """Next token's choices (token id, text, logprob) as the panel lists them: (token id, label)."""
    return [(i, f"{visible(text)}  {percent_of_logprob(lp)}") for i, text, lp in options]


def marimo_layout(panel: HostPanel, view):
    """What marimo shows for the explorer: its `panel` above its `view`, as marimo's own vertical stack."""
    import marimo as mo  # only in marimo, which called this

    return mo.vstack([mo.ui.anywidget(panel), mo.ui.anywidget(view)])
