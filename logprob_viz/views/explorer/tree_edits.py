"""Editing the explorer's trees, free of widgets: a new tree, a node grown by hand, switch, rename,
delete, undo, the earlier and later trees.

`TreeEdits` holds the history (`history.py`) and changes the app's state (`state.py`) through the
app's one `apply`; each edit returns what the status line says, or raises ValueError (nothing to
do) or RuntimeError (a job runs) with the reason, and leaves the state as it was. Plain Python over
`Tree` and `Trace` objects, so it is tested without a notebook.
"""

from __future__ import annotations

from ...records.trace import Trace
from ...records.trace_fields import is_int
from ...records.tree import Tree
from .forks import as_trace, fork_position
from .history import History

__all__ = ["TreeEdits", "MANUAL_ENDED"]

MANUAL_ENDED = {"base": None, "step": None, "typed": {}}  # Next token's choices belong to the text no longer on show


class TreeEdits:
    """The explorer's tree edits over `state`, applied with `apply(**traits)`; trees are grown by `runner`."""

    def __init__(self, state, runner, apply) -> None:
        self.state, self.runner, self.apply = state, runner, apply
        self.history = History()
        state.observe(lambda change: self._remember_shown(change["new"]), names="current")

    def _remember_shown(self, current: Trace | None) -> None:
        if self.history.shown is not None and current is not None:
            self.history.shown.current = current  # the node a later "earlier tree" comes back to

    def _use(self, tree, tree_input: dict | None, node: Trace | None) -> None:
        self.apply(tree=tree, tree_input=tree_input, current=node, edits=self.state.edits + 1, **MANUAL_ENDED)

    def _idle(self, what: str) -> None:
        if self.state.running is not None:
            raise RuntimeError(f"{self.state.running} is running: {what} when it has finished")

    # -- growing ---------------------------------------------------------------------------

    def new_tree(self, root: Trace, tree_input: dict | None = None) -> None:
        """A new tree from `root`, after the earlier ones (which stay in the history)."""
        tree = Tree(root, runner=self.runner)
        tree_input = tree_input if tree_input is not None else self.state.tree_input
        self.history.add(tree, tree_input, root)
        self.apply(tree=tree, tree_input=tree_input, current=root, preview=None, edits=self.state.edits + 1)

    def adopt(self, tree: Tree) -> None:
        """A tree made in Python (``app.tree = lv.Tree(trace, runner=...)``): shown from its root, after
        the earlier trees (which stay in the history)."""
        if not isinstance(tree, Tree):
            raise TypeError(f"app.tree takes an lv.Tree, got {type(tree).__name__}: lv.Tree(trace, runner=app.runner)")
        self.history.add(tree, self.state.tree_input, tree.nodes[0])
        self.apply(tree=tree, current=tree.nodes[0], preview=None, edits=self.state.edits + 1)

    def grow(self, grown: Trace) -> None:
        """Manual decoding grew the text on show: that node grows in place (one branch, not one per token)."""
        if self.state.tree is None:
            return self.new_tree(grown)
        self.history.remember()
        self.apply(current=self.state.tree.grow(self.state.current, grown), edits=self.state.edits + 1)

    def remember(self) -> None:
        """Keep the trees as they are, to undo the change about to be made (a branch)."""
        self.history.remember()

    def forget(self) -> None:
        """The change `remember` was for failed: nothing to undo."""
        self.history.forget()

    # -- what a person does to the trees ---------------------------------------------------

    def switch(self, node) -> None:
        """Show another node of the tree."""
        self.apply(current=as_trace(node), **MANUAL_ENDED)

    def rename(self, name: str) -> bool:
        """Name the node on show (kept in its ``meta["name"]``); "" removes it. Whether anything changed."""
        current = self.state.current
        if current is None or str(name) == str(current.meta.get("name", "")):
            return False
        self.history.remember()
        if name:
            current.meta["name"] = str(name)
        else:
            current.meta.pop("name", None)
        self.apply(edits=self.state.edits + 1)
        return True

    def delete(self) -> str:
        """Take the node on show (and the nodes grown from it) out of the tree; its parent is shown."""
        tree, current = self.state.tree, self.state.current
        if tree is None or current is None or current is tree.root:
            raise ValueError("the root cannot be deleted: pick a branch in the outline first")
        self._idle("delete")
        parent, number = tree.parent(current), tree.index(current)
        self.history.remember()
        gone = tree.remove(current)
        self._use(tree, self.state.tree_input, parent)
        return f"Deleted #{number} ({len(gone)} node{'s' if len(gone) > 1 else ''}); Undo (u) brings it back."

    def undo(self) -> str:
        """Undo the last change to the trees (a branch, a token chosen by hand, a delete, a rename, a new tree)."""
        self._idle("undo")
        if not self.history.can_undo:
            raise ValueError("nothing to undo")
        shown = self.history.undo()
        self._use(*((shown.tree, shown.input, shown.current) if shown else (None, None, None)))
        return "Undone: the tree is as it was before the last change."

    def go(self, step: int) -> str:
        """Show the tree `step` Generates later (negative: earlier); every tree stays in the history."""
        self._idle("switch trees")
        shown = self.history.go(step)
        if shown is None:
            raise ValueError("there is no tree there")
        self._use(shown.tree, shown.input, shown.current)
        return f"Tree {self.history.at + 1} of {len(self.history.trees)}: {len(shown.tree.nodes)} nodes."

    def existing_branch(self, at: int, token_id) -> Trace | None:
        """A node that already takes `token_id` at `at` after the text on show's first `at` tokens."""
        tree, current = self.state.tree, self.state.current
        if tree is None or current is None or not is_int(token_id):
            return None
        for node in tree.nodes:
            if node is current or len(node) <= at or int(node.token_ids[at]) != token_id:
                continue
            if fork_position(current, node) == at:
                return node
        return None
