"""The explorer's state, declared in one place: everything the app remembers between clicks.

`ExplorerState` is a `traitlets.HasTraits` owned by the app (``app.state``). The app's actions and
the results of its jobs change it, in one place (`Explorer.apply`); the panels (outline, pinned
token, next token, Compare, the marimo panel) observe its traits and never reach into the app.
To read what the explorer shows, or to drive it from Python, read and set these traits.
"""

from __future__ import annotations

import threading

import traitlets as t

from ...records.samplers import ENGINES
from ...records.trace import Trace
from .sampling_settings import Settings

__all__ = ["ExplorerState", "READY"]

READY = "Ready: type a prompt, then Generate or Next token."


class ExplorerState(t.HasTraits):
    """What the explorer remembers; see the module. Each trait says what it holds."""

    tree = t.Any(None, allow_none=True)  # the `Tree` on show (the history holds every tree made here)
    tree_input = t.Dict(default_value=None, allow_none=True)  # the prompt or messages the tree on show grew from
    current = t.Instance(Trace, allow_none=True)  # the node (trace) on show
    edits = t.Int(0)  # changes made to the trees so far (a branch, a rename, a delete...): the outline follows it
    preview = t.Instance(Trace, allow_none=True)  # a generation's last snapshot while it streams
    pinned = t.Int(-1)  # the pinned token's position in the text on show (-1: none); the view's `selected`
    running = t.Unicode(None, allow_none=True)  # the job that runs ("Generate", "Branch", ...), None: none
    status = t.Tuple(t.Unicode(), t.Unicode(), default_value=("info", READY))  # (kind, message) of the status line
    last_error = t.Unicode(None, allow_none=True)  # the last failed or refused job's error, None after one went well
    settings = t.Instance(Settings, kw={})  # the sampling settings (the controls' values)
    # whose order of the sampling settings the pinned token's numbers follow (engine_choice.py); the local
    # runner itself always samples in transformers' order
    engine = t.Enum(ENGINES, default_value="transformers")
    base = t.Instance(Trace, allow_none=True)  # manual decoding: the text Next token continues
    step = t.Instance(Trace, allow_none=True)  # manual decoding: the runner's record of the position after `base`
    typed = t.Dict()  # manual decoding: a typed token's p there ({after, text, token, p, rank, note | error})
    # Compare's rows (branch numbers) as the person ticked them; None: the default rows, following the tree
    compared = t.List(t.Int(), default_value=None, allow_none=True)

    def __init__(self, **traits) -> None:
        super().__init__(**traits)
        self.stop = threading.Event()  # Stop: the running job ends early (an event the job's thread polls)

    @property
    def decoding_by_hand(self) -> bool:
        """Whether Next token's choices are on show (a token can be chosen)."""
        return self.base is not None

    @property
    def on_show(self) -> Trace | None:
        """The text the view shows: a generation's snapshot while it streams, else the node on show."""
        return self.preview if self.preview is not None else self.current

    def say(self, message: str, kind: str = "info") -> None:
        """The status line says `message` (kind "info", "note" or "error")."""
        self.status = (kind, message)
