"""The explorer in hosts that render anywidgets but no ipywidgets containers (marimo).

marimo shows an anywidget (the LogprobView works there as it is) but answers every other Jupyter
widget, the explorer's VBox of controls included, with "Jupyter widgets are not supported". So
there the app shows as two anywidgets: `HostPanel`, the controls (js/explorer_host/panel.js), and
the explorer's own view. The panel is a mirror, not a second app: each of its traits is linked
to the explorer's ipywidget of the same meaning (the prompt box, the sliders, the branch list…),
and its buttons call the same methods, so every rule of the explorer (one job at a time, Stop
keeps what was generated, errors in the status line) holds in marimo as in JupyterLab. Branching
by a click on an alternative's bar is the view's own message to the explorer, unchanged.

Left out in marimo, and said so in docs/hosts.md: the temperature readout at a pinned token, the
branch-here dropdown (a click on a bar branches) and the Compare button (marimo lays a cell's
output out once, so a view made later would not appear: ``app.branches.compare()`` as a cell's
last expression shows it).
"""

from __future__ import annotations

import anywidget
import traitlets as t

from ...records.fields import is_int
from ..page import STATIC, require_frontend
from ..toolkit import percent_of_logprob
from .branching import visible

__all__ = ["HostPanel", "MarimoDisplay", "marimo_layout"]

_BUNDLE = STATIC / "explorer_host.js"
_STYLES = STATIC / "explorer_host.css"
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


class HostPanel(anywidget.AnyWidget):
    """The explorer's controls, status line, next-token choices and branch list as one anywidget."""

    if _BUNDLE.is_file():
        _esm = _BUNDLE
    if _STYLES.is_file():
        _css = _STYLES

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

    def __init__(self, explorer) -> None:
        require_frontend(type(self), "explorer_host.js", "explorer_host.css")
        c = explorer.controls
        # the controls' values first: a link copies its source (the panel) into its target
        values = {mine: getattr(c, theirs).value for mine, theirs in _LINKED}
        super().__init__(top_logprobs_max=int(c.top_logprobs.max), chat_available=not c.chat.disabled,
                         min_p_available=not c.min_p.disabled, **values)
        self.explorer = explorer
        self._links = [t.link((self, mine), (getattr(c, theirs), "value")) for mine, theirs in _LINKED]
        c.stop.observe(lambda change: setattr(self, "running", not change["new"]), names="disabled")
        self.running = not c.stop.disabled
        c.state.observe(lambda _: self._status(), names=["message", "kind"])
        self._status()
        explorer.view.observe(lambda _: self._choices(), names="next_step")
        # the outline is rebuilt (new rows) whenever the tree or the node on show changes
        explorer.branches.outline.observe(lambda _: self._branches(), names="children")
        self._branches()
        self.observe(self._picked, names="branch")
        self.on_msg(self._pressed)

    def _status(self) -> None:
        state = self.explorer.controls.state  # the status line as data (layout.Status)
        self.status, self.status_kind = state.message, state.kind

    def _choices(self) -> None:
        options = self.explorer.next_panel.options
        self.choices = [(i, f"{visible(text)}  {percent_of_logprob(lp)}") for i, text, lp in options]

    def _branches(self) -> None:
        outline = self.explorer.branches
        self.branches = [str(label) for label in outline.labels]
        shown = outline.index_of(outline.current)
        self.branch = -1 if shown is None else shown

    def _picked(self, change) -> None:
        outline = self.explorer.branches
        picked = change["new"]
        if 0 <= picked < len(outline.nodes) and picked != outline.index_of(outline.current):
            self.explorer.switch(outline.nodes[picked])  # as a click on the outline's row does

    def _pressed(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict) or content.get("type") != "press":
            return
        app, name = self.explorer, content.get("name")
        if name == "choose" and is_int(content.get("token_id")):
            app.choose(content["token_id"])
        elif name in ("generate", "next_token", "stop"):
            getattr(app, name)()


def marimo_layout(explorer):
    """What marimo shows for the explorer: the panel above the view, as marimo's own vertical stack."""
    import marimo as mo

    panel = explorer.__dict__.get("_host_panel")
    if panel is None:
        panel = explorer._host_panel = HostPanel(explorer)
    return mo.vstack([mo.ui.anywidget(panel), mo.ui.anywidget(explorer.view)])


class MarimoDisplay:
    """The explorer's `_display_`, which marimo calls (before any other display method) to show it."""

    def _display_(self):
        return marimo_layout(self)
