"""`lv.explore()`: one cell, one app. Type a prompt, stream a generation, step token by token,
branch from any alternative, switch between the branches.

The app is ipywidgets controls around one `LogprobView`; the view knows nothing about them.
Model work (generate, next token, branch, exact re-scoring) runs in one background thread at a
time (`worker.py`: a second job in this explorer is refused, a job on a runner another explorer
or a cell is using waits its turn), so the kernel stays responsive and Stop works; results reach
the browser as widget updates. Every failure becomes a visible message in the status line and
leaves the tree as it was; a generation a server broke off keeps every token it showed.
"""

from __future__ import annotations

import threading
import time

import ipywidgets as w

from ...records.trace import Trace
from .branches import BranchHere, BranchList
from .branching import append_row, as_trace
from .controls import Controls, settings_from
from .host_panel import MarimoDisplay
from .panels import NextTokenPanel, TemperatureReadout
from .settings import Settings, default_runner
from .temperature import exact_at
from .view import ExplorerView, empty_view
from .worker import Worker, ending_of

__all__ = ["Explorer", "ExplorerView", "explore"]

UPDATE_EVERY = 0.1  # s between view updates while streaming: smooth, and few messages


class Explorer(MarimoDisplay):  # (marimo renders no ipywidgets containers: host_panel.py)
    """The explorer app; see `explore`. ``.tree``, ``.view``, ``.runner``; ``.widget`` is the whole app."""

    def __init__(self, prompt: str | None = None, *, runner=None, **settings) -> None:
        settings = settings_from(settings)
        if prompt is not None and not isinstance(prompt, str):
            raise TypeError(f"the prompt must be a str, got {type(prompt).__name__}")
        self.runner = runner if runner is not None else default_runner()
        self.tree = None
        self.current: Trace | None = None  # the node (trace) on show
        self._base: Trace | None = None  # manual decoding: the text the next-token panel continues
        self._step: Trace | None = None  # manual decoding: the runner's record of the next position
        self._tree_input: dict | None = None  # the prompt / messages the tree grew from
        self._exact: tuple | None = None  # (trace, at, settings label, processed top-K logprobs)
        self._stop = threading.Event()

        self.controls = Controls(prompt or "", settings, self.runner)  # its limits are the runner's
        self.view = empty_view()
        self.view.runner = self.runner  # "why?" at a pinned token asks the runner the explorer drives
        self.branches = BranchList()
        self.branch_here = BranchHere()
        self.next_panel = NextTokenPanel()
        self.readout = TemperatureReadout()
        # The tree panel sits above the view, so the branches stay in sight however long the text is.
        side = w.VBox([self.branch_here.box, self.readout.box], layout=w.Layout(flex="1 1 50%"))
        self.branches.box.layout.flex = "1 1 50%"
        tree_panel = w.HBox([self.branches.box, side], layout=w.Layout(width="100%", flex_flow="row wrap"))
        self.widget = w.VBox(
            [self.controls.box, self.next_panel.box, tree_panel, self.view, self.branches.comparison],
            layout=w.Layout(width="100%"),
        )
        self.widget.add_class("lv-explore")
        self.worker = Worker(self.controls, self.runner, self._stop, on_busy=self.next_panel.disable)

        c = self.controls
        c.generate.on_click(lambda _: self.generate())
        c.next_token.on_click(lambda _: self.next_token())
        c.stop.on_click(lambda _: self.stop())
        self.branch_here.branch.on_click(lambda _: self.branch())
        self.next_panel.on_choose(self.choose)
        self.readout.exact.on_click(lambda _: self.rescore())
        self.branches.observe(self.switch)
        self.branches.compare_button.on_click(lambda _: self._compare())
        self.view.observe(self._pinned, names="selected")
        c.temperature.observe(lambda _: self._update_readout(), names="value")
        self.view.on_msg(self._on_view_message)

    # -- the buttons (each also callable from Python) ---------------------------------------

    def generate(self) -> None:
        """Generate from the prompt with the controls' settings, streaming into the view; a new tree."""
        try:
            settings, args = self._settings(), self._input()
        except (ValueError, TypeError) as error:
            return self._fail(error)
        self._end_manual()

        def job():
            started = time.perf_counter()
            shown = [None]  # the last snapshot on show: kept if the stream fails after it
            stream = self.runner.stream(
                **args,
                max_new_tokens=settings.max_new_tokens,
                top_logprobs=settings.top_logprobs,
                stop=self._stop,
                **settings.sampling(),
            )
            try:
                snapshot = self._stream_into_view(stream, started, shown)
            except Exception:
                if shown[0] is not None:  # what the view shows stays, as the tree's root
                    self._new_tree(shown[0], args)
                raise
            self._new_tree(snapshot, args)
            new = len(snapshot) - snapshot.prompt_len
            seconds = time.perf_counter() - started
            ending, kind = ending_of(snapshot, self._stop.is_set())
            if kind == "error":
                self.worker.last_error = f"ServerError: {snapshot.meta.get('error')}"
            self._say(
                f"Generated {new} tokens in {seconds:.1f} s ({new / max(seconds, 1e-9):.1f} tokens/s){ending}. "
                "Pin a token to branch from it.",
                kind,
            )

        self._run("Generate", job)

    def _stream_into_view(self, stream, started: float, shown: list) -> Trace:
        """Show the stream's snapshots (about every UPDATE_EVERY s); returns the last, the whole trace."""
        shown_at, snapshot = 0.0, None
        for snapshot in stream:
            now = time.perf_counter()
            if now - shown_at >= UPDATE_EVERY:
                shown_at = now
                self._show(snapshot, forks=[])
                shown[0] = snapshot
                new = len(snapshot) - snapshot.prompt_len
                self._say(f"Generating… {new} tokens, {new / max(now - started, 1e-9):.1f} tokens/s")
        if snapshot is None:
            raise RuntimeError("the runner's stream gave no trace")
        return snapshot

    def stop(self) -> None:
        """Ask the running generation to stop; what was generated so far stays."""
        self._stop.set()

    def next_token(self) -> None:
        """Show the next token's distribution after the text on show (or the prompt, if it changed)."""
        try:
            settings, args = self._settings(), self._input()
        except (ValueError, TypeError) as error:
            return self._fail(error)

        def job():
            base = self.current if self.current is not None and self._tree_input == args else None
            if base is None:
                step = self.runner.generate(
                    progress=False, **args, max_new_tokens=1, top_logprobs=settings.top_logprobs
                )
                base = step[: len(step) - 1]
                self._new_tree(base, args)
            else:
                step = self.runner.generate(
                    progress=False,
                    prompt_ids=base.token_ids.tolist(),
                    max_new_tokens=1,
                    top_logprobs=settings.top_logprobs,
                )
            self._base, self._step = base, step
            self.next_panel.show(step)
            self._say("Next-token distribution shown above the text: choose a token to append it.")

        self._run("Next token", job)

    def choose(self, token_id: int) -> None:
        """Manual decoding: append `token_id` to the text on show, then show the following distribution."""
        if self._base is None:
            return self._fail(ValueError("press Next token first: there is no distribution to choose from"))
        settings = self._settings()

        def job():
            ids = self._base.token_ids.tolist() + [int(token_id)]
            step = self.runner.generate(
                progress=False, prompt_ids=ids, max_new_tokens=1, top_logprobs=settings.top_logprobs
            )
            grown = append_row(self._base, step, len(step) - 2)
            self._replace_current(grown)
            self._base, self._step = grown, step
            self.next_panel.show(step)
            self._say(
                f"Appended {grown.tokens[-1]!r} ({len(grown) - grown.prompt_len} tokens after the prompt)."
            )

        self._run("Choose", job)

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

        def job():
            started = time.perf_counter()
            node = self.tree.branch(
                at=int(at),
                token=token,
                max_new_tokens=settings.max_new_tokens,
                parent=parent,
                stop=self._stop,
                progress=False,
                **settings.sampling(),
            )
            self.current = as_trace(node)
            self.branches.refresh(self.tree, node)
            self._show(self.current)
            ending, kind = ending_of(self.current, self._stop.is_set())
            if kind == "error":
                self.worker.last_error = f"ServerError: {self.current.meta.get('error')}"
            self._say(
                f"Branch #{len(self.tree.nodes) - 1} from token {at} with {self.current.tokens[at]!r}: "
                f"{len(self.current) - at} tokens in {time.perf_counter() - started:.1f} s{ending}.",
                kind,
            )

        self._run("Branch", job)

    def switch(self, node) -> None:
        """Show another node of the tree."""
        self.current = as_trace(node)
        self._end_manual()
        self.branches.refresh(self.tree, node)
        self._show(self.current)

    def rescore(self) -> None:
        """Exact numbers for the pinned position under the controls' sampling settings (one forward pass)."""
        trace, at = self.view.trace, self.view.selected
        if not 0 < at < len(trace):
            return self._fail(ValueError("pin a token first (click it): the readout is about the pinned token"))
        settings = self._settings()

        def job():
            label, exact = exact_at(self.runner, trace, at, settings)
            self._exact = (trace, at, label, exact)
            self._update_readout()
            self._say(f"Exact numbers at token {at} under {label}.")

        self._run("Exact", job)

    def _compare(self) -> None:
        try:
            self.branches.compare()
            self.controls.say("The branches, aligned by bytes, are below the text.")
        except (ValueError, TypeError) as error:
            self._fail(error)

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

    # -- internals ------------------------------------------------------------------------

    def _run(self, name: str, job) -> None:
        self.worker.start(name, job)

    def _fail(self, error: BaseException) -> None:
        self.worker.fail(error)

    def _say(self, message: str, kind: str = "info") -> None:
        self.worker.say(message, kind)

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
        self._base = self._step = None
        self.next_panel.hide()

    def _new_tree(self, root: Trace, args: dict | None = None) -> None:
        from ...records.tree import Tree

        if args is not None:
            self._tree_input = args
        self.tree = Tree(root, runner=self.runner)
        self.current = root
        self.branches.refresh(self.tree, root)
        self._show(root)

    def _replace_current(self, grown: Trace) -> None:
        """Manual decoding grew the text on show: a tree of one node restarts from it, else it becomes a branch."""
        if self.tree is None or len(self.tree.nodes) <= 1:
            return self._new_tree(grown)
        node = self.tree.branch(
            at=len(grown) - 1, token=int(grown.token_ids[-1]), max_new_tokens=0, parent=self.current, progress=False
        )
        self.current = as_trace(node)
        self.branches.refresh(self.tree, node)
        self._show(self.current)

    def _show(self, trace: Trace, forks: list[int] | None = None) -> None:
        self.view.trace = trace
        self.view.layout.display = None
        self.view.forks = self.branches.fork_points(trace) if forks is None else forks
        self._update_readout()

    def _pinned(self, change) -> None:
        self.branch_here.show(self.view.trace if self.current is not None else None, change["new"])
        self._update_readout()

    def _update_readout(self) -> None:
        trace, at = self.view.trace, self.view.selected
        exact = self._exact
        if exact is not None and (exact[0] is not trace or exact[1] != at):
            exact = self._exact = None
        self.readout.update(
            trace if self.current is not None else None,
            at,
            float(self.controls.temperature.value),
            exact=None if exact is None else exact[3],
            exact_label="" if exact is None else exact[2],
        )

    def _on_view_message(self, _widget, content, _buffers) -> None:
        # The view asks to branch: a click on an alternative bar, or a key on a pinned token.
        if not isinstance(content, dict) or content.get("event") != "alternative":
            return
        at = content.get("at")
        token_id = content.get("token_id")
        token = token_id if isinstance(token_id, int) and token_id >= 0 else content.get("token")
        if not isinstance(at, int):
            return self._fail(ValueError(f"the view asked to branch at {at!r}, which is not a token position"))
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
