"""`lv.explore()`: one cell, one app. Type a prompt, stream a generation, step token by token,
branch from any alternative, switch between the branches.

The app is ipywidgets controls around one `LogprobView`; the view knows nothing about them.
Model work (generate, next token, branch, exact re-scoring; the job bodies are `model_work.py`) runs
in one background thread at a time (`worker.py`: a second job in this explorer is refused, a job
on a runner another explorer or a cell is using waits its turn), so the kernel stays responsive
and Stop works; results reach the browser as widget updates. Every failure becomes a visible
message in the status line and leaves the tree as it was; a generation a server broke off keeps
every token it showed.

What the app remembers is one declared object, ``app.state`` (`state.py`): the actions
(`actions.py` names them all) and the jobs' results change it in one place (`Explorer.apply`),
and the panels follow its traits.
"""

from __future__ import annotations

import functools
import time

import ipywidgets as w

from ...records.trace import Trace
from ...records.trace_fields import is_int
from ..bundled import HtmlFallback
from . import model_work
from .actions import action_table, from_view, run
from .branches import BranchHere, BranchList
from .comparing import BranchComparison
from .controls import Controls, checked_arguments, link_sampling
from .engine_choice import engine_of
from .forks import explored
from .host_panel import HostPanel, marimo_layout
from .offline import offline_html, offline_page
from .panels import NextTokenPanel, TemperatureReadout
from .sampling_settings import Settings, default_runner
from .state import ExplorerState
from .tree_edits import MANUAL_ENDED, TreeEdits
from .view import ExplorerView, empty_view, follow_work
from .worker import Worker, ending_of, start_warm_up

__all__ = ["Explorer", "ExplorerView", "explore"]


class Explorer(HtmlFallback):
    """The explorer app; see `explore`. ``.state`` (what it remembers), ``.actions`` (what it does),
    ``.view``, ``.runner``; ``.widget`` is the whole app."""

    def __init__(self, prompt: str | None = None, *, runner=None, engine: str | None = None, **settings) -> None:
        settings, engine = checked_arguments(prompt, engine, settings)  # (before the model loads: a typo fails fast)
        self.runner = runner if runner is not None else default_runner()
        self.state = ExplorerState(settings=settings, engine=engine or engine_of(self.runner))
        self.trees = TreeEdits(self.state, self.runner, self.apply)  # new tree, switch, delete, undo... (widget-free)
        self.view = empty_view()
        self.view.runner = self.runner  # "why?" at a pinned token asks the runner the explorer drives
        self._drawn: tuple | None = None
        # Before the panels' observers: the view shows the new text (which releases the pin) before the
        # panels that follow the text and the pin draw theirs.
        self.state.observe(self._draw, names=["tree", "current", "preview", "edits"])
        w.link((self.view, "selected"), (self.state, "pinned"))
        self.controls = Controls(prompt or "", settings, self.runner, self.state)  # its limits are the runner's
        self._make_panels()
        self.worker = Worker(self.state, self.runner)
        follow_work(self.state, self.view)  # the status, in the column where the click was, too
        link_sampling(self.controls, self.view)  # the view's sliders are these controls' values
        self.actions = action_table(self)
        self._wire()
        start_warm_up(self.runner)  # the model's one-time costs, before the first click (warmup.py)

    def _make_panels(self) -> None:
        """The panels, each given the state and what it may ask the app for (never the app)."""
        state, c = self.state, self.controls
        self.comparing = BranchComparison(state, say=self.say, fail=self._fail, show_outline=self._show_outline)
        self.branches = BranchList(beside_outline=self.comparing.box)
        self.branch_here = BranchHere()
        self.next_panel = NextTokenPanel(state, self.view)  # drawn in the view's column, in the chart's place
        self.readout = TemperatureReadout(state, self.runner, publish=lambda data: setattr(self.view, "readout", data))
        # Behind "more": branch with any token, and the tree's tools (layout.py says where all goes).
        c.more_box.children = (*c.more_box.children, self.branch_here.box, self.branches.tools)
        # Below the view, so nothing above moves when they appear: the tree (once it branches; Compare in
        # its outline's place), then the pinned token's whole table and bands.
        self.widget = w.VBox([c.box, self.view, self.branches.box, self.readout.box], layout=w.Layout(width="100%"))
        self.widget.add_class("lv-explore")

    def _wire(self) -> None:
        """The buttons, the view's messages (and the keys it passes on): each runs its action."""
        c, b, act = self.controls, self.branches, self.actions
        for button, name in [(c.generate, "generate"), (c.next_token, "next_token"), (c.stop, "stop"),
                             (self.branch_here.branch, "branch"), (b.delete, "delete"), (b.undo, "undo"),
                             (b.earlier, "earlier"), (b.later, "later"), (b.compare_button, "compare")]:
            button.on_click(lambda _, name=name: act[name]())
        b.observe(act["switch"])
        b.name.observe(lambda change: act["rename"](change["new"]), names="value")
        self.view.on_msg(lambda _view, content, _buffers: run(act, from_view(content)))
        self.state.observe(lambda _: self._offer_branch(), names=["pinned", "current", "preview"])

    # -- what the explorer remembers (the state's traits, for reading) --------------------------

    @property
    def tree(self):
        """The tree on show (``state.tree``); settable to a tree made in Python, shown from its root."""
        return self.state.tree

    @tree.setter
    def tree(self, tree) -> None:
        self.trees.adopt(tree)

    @property
    def current(self) -> Trace | None:
        """The node on show (``state.current``)."""
        return self.state.current

    @property
    def history(self):
        """Every tree made here, and the changes to undo (`history.History`)."""
        return self.trees.history

    @property
    def running(self) -> bool:
        """Whether a job runs (``state.running`` names it)."""
        return self.state.running is not None

    @property
    def last_error(self) -> str | None:
        """The status line's last error (a job that failed or was refused), None after a job went well."""
        return self.state.last_error

    # -- the actions (`actions.py`; each also callable from Python) -------------------------

    def generate(self) -> None:
        """Generate from the prompt with the controls' settings, streaming into the view; a new tree."""
        try:
            settings, args = self.controls.checked_settings(), self.controls.job_input()
        except (ValueError, TypeError) as error:
            return self._fail(error)
        self.close_next()
        self.worker.start("Generate", lambda: self._generate(settings, args))

    def stop(self) -> None:
        """Ask the running generation to stop; what was generated so far stays."""
        self.state.stop.set()

    def next_token(self) -> None:
        """Show the next token's distribution after the text on show (or the prompt, if it changed)."""
        try:
            settings, args = self.controls.checked_settings(), self.controls.job_input()
        except (ValueError, TypeError) as error:
            return self._fail(error)
        self.worker.start("Next token", lambda: self._next_token(settings, args))

    def choose(self, token_id: int) -> None:
        """Manual decoding: append `token_id` to the text on show, then show the following distribution."""
        if not self.state.decoding_by_hand:
            return self._fail(ValueError("press Next token first: there is no distribution to choose from"))
        settings = self.controls.checked_settings()
        self.worker.start("Choose", lambda: self._choose(settings, token_id))

    def token_p(self, text: str) -> None:
        """Next token's "type a token": the p of `text` (one token) at the position Next token shows."""
        state = self.state
        if state.step is None:
            return self._fail(ValueError("press Next token first: there is no distribution to look a token up in"))
        base, step, distributions = state.base, state.step, self.readout.distributions
        self.worker.start("Token p", lambda: self._typed(model_work.typed_token(self.runner, base, step, str(text),
                                                                          distributions)))

    def close_next(self) -> None:
        """Close the next-token panel: its distribution belongs to a text no longer on show."""
        self.apply(**MANUAL_ENDED)

    def branch(self, at: int | None = None, token=None) -> None:
        """Branch from the text on show at position `at` (default: the pinned token) with `token` (id or text)."""
        state = self.state
        if state.tree is None or state.current is None:
            return self._fail(ValueError("generate first: there is no text to branch from"))
        at = state.pinned if at is None else at
        token = self.branch_here.token() if token is None else token
        if token is None or token == "":
            return self._fail(ValueError("pick an alternative (or type a token) to branch with"))
        settings = self.controls.checked_settings()
        parent = state.current
        self.close_next()
        self.worker.start("Branch", lambda: self._branch(settings, parent, at, token))

    def alternative(self, at, token) -> None:
        """An alternative of the text on show (position `at`, token id or text): its branch, shown when
        the tree has it already, else made now (a click on the alternative's bar)."""
        if not is_int(at):
            return self._fail(ValueError(f"the view asked to branch at {at!r}, which is not a token position"))
        existing = self.trees.existing_branch(at, token)
        if existing is not None:
            return self.switch(existing)
        self.branch(at=at, token=token)

    def switch(self, node) -> None:
        """Show another node of the tree; the status line says which."""
        self.trees.switch(node)
        i = self.branches.index_of(self.state.current)
        if i is not None:
            self.say(f"Showing {self.branches.labels[i]}")

    def rename(self, name: str) -> None:
        """Give the node on show a name (shown in the outline, kept in its ``meta["name"]``); "" removes it."""
        self.trees.rename(name)

    def delete(self) -> None:
        """Take the branch on show (and the branches grown from it) out of the tree; its parent is shown."""
        self._edit(self.trees.delete)

    def undo(self) -> None:
        """Undo the last change to the tree (a branch, a token chosen by hand, a delete, a rename, a new tree)."""
        self._edit(self.trees.undo)

    def show_tree(self, step: int) -> None:
        """Show the tree `step` Generates later (negative: earlier); every tree stays in the history."""
        self._edit(lambda: self.trees.go(step))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running job (if any); True when none is running any more."""
        return self.worker.wait(timeout)

    def say(self, message: str, kind: str = "info") -> None:
        """The status line says `message` (kind "error" shows it as an error)."""
        self.worker.say(message, kind)

    # -- a job's result applied to the state (in the job's thread) ------------------------

    def apply(self, **traits) -> None:
        """Set the state's `traits` together: the one place an action or a job's result changes what
        the explorer remembers. Observers hear each change once all are set; ``pinned`` is set last
        (showing a new text releases the pin)."""
        pinned = traits.pop("pinned", None)
        with self.state.hold_trait_notifications():
            for name, value in traits.items():
                setattr(self.state, name, value)
        if pinned is not None:
            self.state.pinned = pinned

    def _generate(self, settings: Settings, args: dict) -> None:
        started = time.perf_counter()
        self.branches.say_tree(self.history.at, len(self.history.trees), generating=True)  # the others stay
        try:
            trace = model_work.generate(self.runner, settings, args, self.state.stop, self._streamed)
        except Exception:
            shown = self.state.preview  # what the view shows stays, as the tree's root
            self.trees.new_tree(shown, args) if shown is not None else self._draw(force=True)
            raise
        self.trees.new_tree(trace, args)
        seconds, new = time.perf_counter() - started, len(trace) - trace.prompt_len
        ending, kind = ending_of(trace, self.state.stop.is_set())
        self.apply(last_error=f"ServerError: {trace.meta.get('error')}" if kind == "error" else None)
        self.say(f"Generated {new} tokens in {seconds:.1f} s ({new / max(seconds, 1e-9):.1f} tokens/s){ending}. "
                 "Pin a token to branch from it.", kind)

    def _streamed(self, snapshot: Trace, seconds: float) -> None:
        self.apply(preview=snapshot)
        self.say(f"Generating… {model_work.rate_words(snapshot, seconds)}")

    def _next_token(self, settings: Settings, args: dict) -> None:
        state = self.state
        known = state.current if state.current is not None and state.tree_input == args else None
        base, step = model_work.next_token(self.runner, settings, args, known)
        if known is None:
            self.trees.new_tree(base, args)
        self.apply(base=base, step=step)
        self.say("Next token: its choices are beside the text, in the chart's place; click one to append it.")

    def _choose(self, settings: Settings, token_id: int) -> None:
        grown, step = model_work.choose(self.runner, settings, self.state.base, token_id)
        self.trees.grow(grown)
        self.apply(base=grown, step=step)
        self.say(f"Appended {grown.tokens[-1]!r}, chosen by hand, as token {len(grown)}: {len(grown)} tokens "
                 f"({grown.prompt_len} prompt, {len(grown) - grown.prompt_len} completion).")

    def _branch(self, settings: Settings, parent: Trace, at: int, token) -> None:
        started, state = time.perf_counter(), self.state
        self.trees.remember()
        try:
            node = model_work.branch(state.tree, parent, at, token, settings, state.stop)
        except Exception:
            self.trees.forget()  # the tree is as it was: nothing to undo
            raise
        ending, kind = ending_of(node, state.stop.is_set())
        # the fork stays pinned: its chart stays where the click was
        self.apply(current=node, edits=state.edits + 1, pinned=int(at),
                   last_error=f"ServerError: {node.meta.get('error')}" if kind == "error" else None)
        self.say(f"Branch #{len(state.tree.nodes) - 1} from token {at + 1} with {node.tokens[at]!r}: "
                 f"{len(node) - at} tokens in {time.perf_counter() - started:.1f} s{ending}.", kind)

    def _typed(self, answer: dict) -> None:
        self.apply(typed=answer)
        if answer.get("error"):
            self.say(answer["error"], "note")
        else:
            self.say(f"{answer['text']!r} after token {answer['after']}: p {answer['p']:.4%} "
                     f"(rank {answer.get('rank', '?')}).")

    # -- what the state looks like (the state's observers) --------------------------------

    def _draw(self, _change=None, force: bool = False) -> None:
        """Show the state: the text on show with its forks, the outline, the history's title and Undo."""
        state = self.state
        if state.preview is not None:  # a generation streaming: its snapshot, no forks yet
            self._drawn = None
            return self._show(state.preview, forks=[])
        drawn = (id(state.tree), id(state.current), state.edits)
        if drawn == self._drawn and not force:
            return  # (several traits changed together: drawn once)
        self._drawn = drawn
        self.branches.refresh(state.tree, state.current)
        self.branches.say_tree(self.history.at, len(self.history.trees))
        self.branches.undo.disabled = not self.history.can_undo
        if state.current is not None:
            self._show(state.current)

    def _show(self, trace: Trace, forks: list[int] | None = None) -> None:
        """Show `trace` in the view (which releases the pin), its forks marked (default: from the tree)."""
        self.view.trace = trace
        self.view.forks = self.branches.fork_points(trace) if forks is None else forks
        self.view.explored = explored(self.branches.nodes, trace) if forks is None else {}

    def _offer_branch(self) -> None:
        self.branch_here.show(self.state.on_show if self.state.current is not None else None, self.state.pinned)

    def _show_outline(self, shown: bool) -> None:
        self.branches.outline.layout.visibility = None if shown else "hidden"  # Compare over it: its room kept

    # -- internals ------------------------------------------------------------------------

    def _fail(self, error: BaseException) -> None:
        self.worker.fail(error)

    def _edit(self, edit) -> None:
        """Run a tree edit (`tree_edits.py`); the status line says what it did, or why not."""
        try:
            said = edit()
        except (ValueError, RuntimeError) as error:
            return self._fail(error)
        self.say(said)

    # -- display --------------------------------------------------------------------------

    @functools.cached_property
    def host_panel(self) -> HostPanel:
        """The controls as one anywidget, for hosts that render no ipywidgets containers (marimo)."""
        return HostPanel(self.state, self.controls, self.branches, self.actions)

    def _display_(self):
        # marimo calls it (before any other display method): it renders no ipywidgets containers
        return marimo_layout(self.host_panel, self.view)

    def live_mimebundle(self, **kwargs):  # the live app; HtmlFallback adds `fallback_html` as text/html
        return self.widget._repr_mimebundle_(**kwargs)

    def offline_html(self, max_branches: int = 8) -> str:
        """The app as self-contained HTML where no kernel and no widget manager is (nbconvert, viewers)."""
        return offline_html(self.state, self._labels(), max_branches)

    fallback_html = offline_html  # every branch as HTML, where no widget manager renders the app

    def to_html(self, path=None):
        """Every branch as one standalone, offline HTML page (hover and pin work); with `path`, written
        there and the path returned, else the page."""
        return offline_page(self.state, self._labels(), path)

    def _labels(self) -> list[str]:
        """The outline's labels, drawn again (the tree may have grown from Python: ``app.tree.branch``)."""
        if self.state.tree is not None:
            self.branches.refresh(self.state.tree, self.state.current)
        return self.branches.labels

    def __repr__(self) -> str:
        nodes = len(self.tree.nodes) if self.tree is not None else 0
        return f"<Explorer {getattr(self.runner, 'name', type(self.runner).__name__)}, {nodes} nodes>"


def explore(prompt: str | None = None, *, runner=None, engine: str | None = None, **settings) -> Explorer:
    """The explorer app: prompt, sampling controls, Generate / Next token / Stop, branches.

    Parameters
    ----------
    prompt : str, optional
        The prompt box's starting text.
    runner : optional
        A runner (``lv.load(...)`` or ``lv.connect(url)``); default: the default local model.
    engine : str, optional
        Whose sampler order (`lv.sampled_from`'s engines) the pinned token's numbers and a server's
        ranges follow; default: a vLLM or llama.cpp runner's own, else transformers' (`engine_of`).
    **settings
        Starting values of the controls: ``temperature`` (0: greedy), ``top_p``, ``top_k``,
        ``max_new_tokens``, ``top_logprobs``, ``seed``, ``chat`` (wrap the prompt as a user message).

    Returns
    -------
    Explorer
        Shows itself as the last expression of a cell; ``.tree``, ``.view``, ``.runner``.
    """
    return Explorer(prompt, runner=runner, engine=engine, **settings)
