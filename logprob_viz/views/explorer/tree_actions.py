"""What a person does to the explorer's tree besides growing it: switch to a node, rename it,
delete it, undo the last change, go to an earlier tree, and the keys the view sends for these.

A mixin of `Explorer` (app.py), so the app module stays small; it uses the app's `tree`,
`current`, `history` (`history.py`), `branches` (the outline) and `view`.
"""

from __future__ import annotations

from ...records.fields import is_int
from ...records.trace import Trace
from .branching import as_trace, explored, fork_position

__all__ = ["TreeActions"]


class TreeActions:
    """Switch, rename, delete, undo, earlier / later tree (each also callable from Python)."""

    def switch(self, node) -> None:
        """Show another node of the tree; the status line says which."""
        self.current = as_trace(node)
        self._end_manual()
        self.refresh()
        self.show(self.current)
        i = self.branches.index_of(self.current)
        if i is not None:
            self.say(f"Showing {self.branches.labels[i]}")

    def rename(self, name: str) -> None:
        """Give the node on show a name (shown in the outline, kept in its ``meta["name"]``); "" removes it."""
        if self.current is None or str(name) == str(self.current.meta.get("name", "")):
            return
        self.history.remember()
        if name:
            self.current.meta["name"] = str(name)
        else:
            self.current.meta.pop("name", None)
        self.refresh()

    def delete(self) -> None:
        """Take the branch on show (and the branches grown from it) out of the tree; its parent is shown."""
        if self.tree is None or self.current is None or self.current is self.tree.root:
            return self._fail(ValueError("the root cannot be deleted: pick a branch in the outline first"))
        if self.running:
            return self._fail(RuntimeError(f"{self.worker.name} is running: delete when it has finished"))
        parent = self.tree.parent(self.current)
        number = self.tree.index(self.current)
        self.history.remember()
        gone = self.tree.remove(self.current)
        self._use_node(parent)
        self.say(f"Deleted #{number} ({len(gone)} node{'s' if len(gone) > 1 else ''}); Undo (u) brings it back.")

    def undo(self) -> None:
        """Undo the last change to the tree (a branch, a token chosen by hand, a delete, a rename, a new tree)."""
        if self.running:
            return self._fail(RuntimeError(f"{self.worker.name} is running: undo when it has finished"))
        if not self.history.can_undo:
            return self._fail(ValueError("nothing to undo"))
        shown = self.history.undo()
        self.tree, self.state.tree_input = (shown.tree, shown.input) if shown else (None, None)
        self._use_node(shown.current if shown else None)
        self.say("Undone: the tree is as it was before the last change.")

    def show_tree(self, step: int) -> None:
        """Show the tree `step` Generates later (negative: earlier); every tree stays in the history."""
        if self.running:
            return self._fail(RuntimeError(f"{self.worker.name} is running: switch trees when it has finished"))
        shown = self.history.go(step)
        if shown is None:
            return self._fail(ValueError("there is no tree there"))
        self.tree, self.state.tree_input = shown.tree, shown.input
        self._use_node(shown.current)
        self.say(f"Tree {self.history.at + 1} of {len(self.history.trees)}: {len(shown.tree.nodes)} nodes.")

    # -- internals ------------------------------------------------------------------------

    def _use_node(self, node: Trace | None) -> None:
        self.current = node
        self._end_manual()
        self.refresh()
        if node is not None:
            self.show(node)

    def refresh(self) -> None:
        """Redraw the outline, the history's title and Undo; remember which node is on show."""
        if self.history.shown is not None and self.current is not None:
            self.history.shown.current = self.current
        self.branches.refresh(self.tree, self.current)
        self.branches.say_tree(self.history.at, len(self.history.trees))
        self.branches.undo.disabled = not self.history.can_undo

    def _explored(self, trace: Trace) -> dict:
        return explored(self.branches.nodes, trace) if trace is self.current else {}

    def _existing_branch(self, at: int, token_id) -> Trace | None:
        """A node that already takes `token_id` at `at` after the text on show's first `at` tokens."""
        if self.tree is None or self.current is None or not is_int(token_id):
            return None
        for node in self.tree.nodes:
            if node is self.current or len(node) <= at or int(node.token_ids[at]) != token_id:
                continue
            if fork_position(self.current, node) == at:
                return node
        return None

    def _on_key(self, action) -> None:
        """A key pressed in the app (the view sends it): what its button does."""
        actions = {"generate": self.generate, "next": self.next_token, "stop": self.stop, "undo": self.undo}
        if action in actions:
            actions[action]()
