"""The explorer's trees over time: every Generate makes a new tree and the earlier ones stay (a
person goes back with "earlier tree"), and every change to a tree can be undone.

Why a history rather than "are you sure?": a new prompt is the most common thing a class does,
a question before each would be answered without reading, and an answer of yes would still lose
the tree. Keeping every tree costs only the traces already made, and nothing is ever lost.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...records.trace import Trace

__all__ = ["Grown", "History"]

MAX_UNDO = 50  # changes that can be undone (each keeps only references to traces already made)


@dataclass
class Grown:
    """One tree of the explorer: the tree, the prompt / messages it grew from, the node last on show."""

    tree: object
    input: dict | None
    current: Trace


class History:
    """The explorer's trees (oldest first), which one is on show, and the states to undo to."""

    def __init__(self) -> None:
        self.trees: list[Grown] = []
        self.at = -1  # the tree on show
        self._undo: list[tuple] = []

    @property
    def shown(self) -> Grown | None:
        return self.trees[self.at] if self.trees else None

    def add(self, tree, input: dict | None, current: Trace) -> Grown:
        """A new tree, after the others, on show from now on."""
        self.remember()
        self.trees.append(Grown(tree, input, current))
        self.at = len(self.trees) - 1
        return self.trees[-1]

    def go(self, step: int) -> Grown | None:
        """Show the tree `step` places later (negative: earlier); None when there is none there."""
        if not 0 <= self.at + step < len(self.trees):
            return None
        self.at += step
        return self.shown

    def remember(self) -> None:
        """Keep the state before a change (a branch, a token chosen, a delete, a rename, a new tree)."""
        state = [(g.tree.copy(), g.input, g.current) for g in self.trees]
        names = [(n, n.meta.get("name")) for g in self.trees for n in g.tree.nodes]
        self._undo = [*self._undo[-(MAX_UNDO - 1):], (self.at, state, names)]

    def forget(self) -> None:
        """Drop the state `remember` kept: the change it was for did not happen (it failed)."""
        if self._undo:
            self._undo.pop()

    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    def undo(self) -> Grown | None:
        """Go back to the state before the last change; the tree then on show (None: nothing to undo)."""
        if not self._undo:
            return None
        self.at, state, names = self._undo.pop()
        self.trees = [Grown(tree, input, current) for tree, input, current in state]
        for node, name in names:
            if name is None:
                node.meta.pop("name", None)
            else:
                node.meta["name"] = name
        return self.shown
