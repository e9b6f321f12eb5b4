"""`lv.explore()`: one cell, one app. Type a prompt, stream a generation, step token by token,
branch from any alternative, switch between the branches.

The app is ipywidgets controls around one `LogprobView`; the view knows nothing about them.
Model work (generate, next token, branch, exact re-scoring; the job bodies are `jobs.py`) runs
in one background thread at a time (`worker.py`: a second job in this explorer is refused, a job
on a runner another explorer or a cell is using waits its turn), so the kernel stays responsive
and Stop works; results reach the browser as widget updates. Every failure becomes a visible
message in the status line and leaves the tree as it was; a generation a server broke off keeps
every token it showed.
"""

from __future__ import annotations

import ipywidgets as w

from ...records.fields import is_int
from ...records.trace import Trace
from .branches import BranchHere, BranchList
from .comparing import BranchComparison
from .controls import Controls, link_sampling, settings_from
from .history import History
from .host_panel import MarimoDisplay
from .jobs import branch_job, choose_job, generate_job, next_token_job, typed_token_job
from .panels import NextTokenPanel, TemperatureReadout
from .settings import Settings, default_runner
from .state import ExplorerState
from .tree_actions import TreeActions
from .view import ExplorerView, empty_view
from .worker import Worker, start_warm_up

__all__ = ["Explorer", "ExplorerView", "explore"]

class Explorer(TreeActions, MarimoDisplay):  # (marimo renders no ipywidgets containers: host_panel.py)
    """The explorer app; see `explore`. ``.tree``, ``.view``, ``.runner``; ``.widget`` is the whole app."""

    def __init__(self, prompt: str | None = None, *, runner=None, **settings) -> None:
        settings = settings_from(settings)
        if prompt is not None and not isinstance(prompt, str):
            raise TypeError(f"the prompt must be a str, got {type(prompt).__name__}")
        self.runner = runner if runner is not None else default_runner()
        self.tree = None  # the tree on show (the history holds every tree made here)
        self.history = History()
        self.current: Trace | None = None  # the node (trace) on show
        self.state = ExplorerState()  # what the jobs read and the actions change (state.py)

        self.controls = Controls(prompt or "", settings, self.runner)  # its limits are the runner's
        self.view = empty_view()
        self.view.runner = self.runner  # "why?" at a pinned token asks the runner the explorer drives
        self.branches = BranchList()
        self.branch_here = BranchHere()
        self.next_panel = NextTokenPanel(self.view)  # drawn in the view's column, in the chart's place
        self.readout = TemperatureReadout()
        c = self.controls
        # Behind "more": branch with any token, and the tree's tools (layout.py says where all goes).
        c.more_box.children = (*c.more_box.children, self.branch_here.box, self.branches.tools)
        # Below the view, so nothing above moves when they appear: the tree (once it branches; Compare in
        # its outline's place), then the pinned token's whole table and bands.
        self.widget = w.VBox([c.box, self.view, self.branches.box, self.readout.box], layout=w.Layout(width="100%"))
        self.widget.add_class("lv-explore")
        self.worker = Worker(self.controls, self.runner, self.state.stop, on_busy=self.next_panel.disable)
        link_sampling(c, self.view)  # the view's sliders are these controls' values

        c.generate.on_click(lambda _: self.generate())
        c.next_token.on_click(lambda _: self.next_token())
        c.stop.on_click(lambda _: self.stop())
        self.branch_here.branch.on_click(lambda _: self.branch())
        self.branches.observe(self.switch)
        self.branches.delete.on_click(lambda _: self.delete())
        self.branches.undo.on_click(lambda _: self.undo())
        self.branches.earlier.on_click(lambda _: self.show_tree(-1))
        self.branches.later.on_click(lambda _: self.show_tree(1))
        self.branches.name.observe(lambda change: self.rename(change["new"]), names="value")
        self.comparing = BranchComparison(self)  # the Compare button's view, in the outline's place
        self.view.observe(self._pinned, names="selected")
        c.temperature.observe(lambda _: self._update_readout(), names="value")
        self.view.on_msg(self._on_view_message)
        start_warm_up(self.runner)  # the model's one-time costs, before the first click (warmup.py)

    # -- the buttons (each also callable from Python) ---------------------------------------

    def generate(self) -> None:
        """Generate from the prompt with the controls' settings, streaming into the view; a new tree."""
        try:
            settings, args = self._settings(), self._input()
        except (ValueError, TypeError) as error:
            return self._fail(error)
        self._end_manual()
        self._run("Generate", lambda: generate_job(self, settings, args))

    def stop(self) -> None:
        """Ask the running generation to stop; what was generated so far stays."""
        self.state.stop.set()

    def next_token(self) -> None:
        """Show the next token's distribution after the text on show (or the prompt, if it changed)."""
        try:
            settings, args = self._settings(), self._input()
        except (ValueError, TypeError) as error:
            return self._fail(error)
        self._run("Next token", lambda: next_token_job(self, settings, args))

    def choose(self, token_id: int) -> None:
        """Manual decoding: append `token_id` to the text on show, then show the following distribution."""
        if not self.state.decoding_by_hand:
            return self._fail(ValueError("press Next token first: there is no distribution to choose from"))
        settings = self._settings()
        self._run("Choose", lambda: choose_job(self, settings, token_id))

    def branch(self, at: int | None = None, token=None) -> None:
        """Branch from the text on show at position `at` (default: the pinned token) with `token` (id or text)."""
        if self.tree is None or self.current is None:
            return self._fail(ValueError("generate first: there is no text to branch from"))
        at = self.view.selected if at is None else at
        token = self.branch_here.token() if token is None else token
        if token is None or token == "":
            return self._fail(ValueError("pick an alternative (or type a token) to branch with"))
        settings = self._settings()
        parent = self.current
        self._end_manual()
        self._run("Branch", lambda: branch_job(self, settings, parent, at, token))

    def token_p(self, text: str) -> None:
        """Next token's "type a token": the p of `text` (one token) at the position Next token shows."""
        if self.state.step is None:
            return self._fail(ValueError("press Next token first: there is no distribution to look a token up in"))
        base, step = self.state.base, self.state.step
        self._run("Token p", lambda: typed_token_job(self, base, step, str(text)))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running job (if any); True when none is running any more."""
        return self.worker.wait(timeout)

    @property
    def running(self) -> bool:
        return self.worker.running

    @property
    def last_error(self) -> str | None:
        """The status line's last error (a job that failed or was refused), None after a job went well."""
        return self.worker.last_error

    # -- what a job does to what the person sees (jobs.py; each also callable from Python) ----

    def say(self, message: str, kind: str = "info") -> None:
        """The status line says `message` (kind "error" shows it as an error)."""
        self.worker.say(message, kind)

    def new_tree(self, root: Trace, args: dict | None = None) -> None:
        """A new tree from `root`, after the earlier ones (which stay in the history)."""
        from ...records.tree import Tree

        self.tree = Tree(root, runner=self.runner)
        self.state.tree_input = args if args is not None else self.state.tree_input
        self.history.add(self.tree, self.state.tree_input, root)
        self.current = root
        self.refresh()
        self.show(root)

    def replace_current(self, grown: Trace) -> None:
        """Manual decoding grew the text on show: that node grows in place (one branch, not one per token)."""
        if self.tree is None:
            return self.new_tree(grown)
        self.history.remember()
        self.current = self.tree.grow(self.current, grown)
        self.refresh()
        self.show(self.current)

    def show(self, trace: Trace, forks: list[int] | None = None, pin: int | None = None) -> None:
        """Show `trace` in the view (its forks marked, default from the tree), `pin` pinned again."""
        self.view.trace = trace  # (which releases the pin: `pin` pins that token of the new text again)
        if pin is not None and 0 <= pin < len(trace):
            self.view.selected = pin
        self.view.forks = self.branches.fork_points(trace) if forks is None else forks
        self.view.explored = self._explored(trace) if forks is None else {}
        self._update_readout()

    # -- internals ------------------------------------------------------------------------

    def _run(self, name: str, job) -> None:
        self.worker.start(name, job)

    def _fail(self, error: BaseException) -> None:
        self.worker.fail(error)

    def _settings(self) -> Settings:
        settings = self.controls.settings()
        settings.check(*self.controls.top_logprobs_limit)
        return settings

    def _input(self) -> dict:
        text = self.controls.prompt.value
        if not text.strip():
            raise ValueError("the prompt is empty: type some text to start from")
        if self.controls.chat.value:
            return {"messages": [{"role": "user", "content": text}]}
        return {"prompt": text}

    def _end_manual(self) -> None:
        """Close the next-token panel: its distribution belongs to a text no longer on show."""
        self.state.base = self.state.step = None
        self.next_panel.hide()

    def _pinned(self, change) -> None:
        self.branch_here.show(self.view.trace if self.current is not None else None, change["new"])
        self._update_readout()

    def _update_readout(self) -> None:
        self.readout.show(self)  # the pinned token, exactly, under the controls' settings (pinned.py)

    def _on_view_message(self, _widget, content, _buffers) -> None:
        # The view asks to branch (a click on an alternative bar, or a key on a pinned token), to
        # append a Next token choice, for a typed token's p, or passes on a key (Ctrl+Enter, n, s, u).
        if not isinstance(content, dict):
            return
        event = content.get("event")
        if event == "key":
            return self._on_key(content.get("action"))
        if event == "choose" and is_int(content.get("token_id")):
            return self.choose(content["token_id"])
        if event == "next_close":
            return self._end_manual()
        if event == "next_typed":
            return self.token_p(content.get("text", ""))
        if event != "alternative":
            return
        at = content.get("at")
        token_id = content.get("token_id")
        token = token_id if is_int(token_id) and token_id >= 0 else content.get("token")
        if not is_int(at):
            return self._fail(ValueError(f"the view asked to branch at {at!r}, which is not a token position"))
        existing = self._existing_branch(at, token)
        if existing is not None:  # that alternative has its branch already: show it
            return self.switch(existing)
        self.branch(at=at, token=token)

    # -- display --------------------------------------------------------------------------

    def _repr_mimebundle_(self, **kwargs):
        from ..page import with_html_fallback  # the live app; without a widget manager, every branch as HTML

        return with_html_fallback(self.widget._repr_mimebundle_(**kwargs), self.offline_html)

    def offline_html(self, max_branches: int = 8) -> str:
        """The app as self-contained HTML where no kernel and no widget manager is (nbconvert, viewers)."""
        from .offline import offline_html

        if self.tree is not None:
            self.branches.refresh(self.tree, self.current)
        return offline_html(self, max_branches)

    def to_html(self, path=None):
        """Every branch as one standalone, offline HTML page (hover and pin work); with `path`, written
        there and the path returned, else the page."""
        from .offline import offline_page

        if self.tree is not None:
            self.branches.refresh(self.tree, self.current)
        return offline_page(self, path)

    def __repr__(self) -> str:
        nodes = len(self.tree.nodes) if self.tree is not None else 0
        return f"<Explorer {getattr(self.runner, 'name', type(self.runner).__name__)}, {nodes} nodes>"


def explore(prompt: str | None = None, *, runner=None, **settings) -> Explorer:
    """The explorer app: prompt, sampling controls, Generate / Next token / Stop, branches.

    Parameters
    ----------
    prompt : str, optional
        The prompt box's starting text.
    runner : optional
        A runner (``lv.load(...)`` or ``lv.connect(url)``); default: the default local model.
    **settings
        Starting values of the controls: ``temperature`` (0: greedy), ``top_p``, ``top_k``,
        ``max_new_tokens``, ``top_logprobs``, ``seed``, ``chat`` (wrap the prompt as a user message).

    Returns
    -------
    Explorer
        Shows itself as the last expression of a cell; ``.tree``, ``.view``, ``.runner``.
    """
    return Explorer(prompt, runner=runner, **settings)
