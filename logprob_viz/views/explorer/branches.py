"""The explorer's tree panel: the tree drawn as an outline (a click switches), the shared prefix shown
once, the tree's tools (rename, delete, undo, earlier trees: behind the app's "more"), and the
branch-here controls for the pinned token (an alternative, or any token text; also behind "more").

Plain ipywidgets; the app (`app.py`) runs `tree.branch` and swaps the view's trace.
"""

from __future__ import annotations

import html
import math

import ipywidgets as w

from ...records.trace import Trace
from ..toolkit import percent_of_logprob
from .comparing import MAX_COMPARED
from .forks import as_trace, branch_label, fork_position, parents_of, visible

__all__ = ["BranchList", "BranchHere"]



OUTLINE_HEIGHT = "8.2em"  # about five rows: the panel keeps its height, so the view below never moves


class BranchList:
    """The tree drawn as an indented outline (a row per node: its number, where it forks, the token it
    took, its perplexity and first words; a click shows it), with rename, delete, undo, the earlier
    trees, the shared prefix and the keys. Its height never changes, so the view below stays put.

    ``beside_outline``: a widget drawn over the outline, in the same panel (Compare, in its place: an
    anchor of no height holds it, so it opens over what is below and moves none of it).
    """

    def __init__(self, beside_outline=None) -> None:
        self.title = w.HTML()
        self.title.add_class("lv-tree-title")
        self.outline = w.VBox([], layout=w.Layout(height=OUTLINE_HEIGHT, overflow="auto", width="100%"))
        self.outline.add_class("lv-tree-outline")
        self.prefix = w.HTML()
        self.name = w.Text(placeholder="name the branch on show", continuous_update=False,
                           layout=w.Layout(width="16em"))
        self.delete = w.Button(description="Delete", icon="trash", layout=w.Layout(width="auto"), disabled=True,
                               tooltip="take the branch on show (and the branches grown from it) out of the tree")
        self.undo = w.Button(description="Undo", icon="undo", layout=w.Layout(width="auto"), disabled=True,
                             tooltip="undo the last change to the tree (a branch, a token chosen, a delete, a rename)")
        self.earlier = w.Button(description="earlier tree", icon="chevron-left", layout=w.Layout(width="auto"),
                                disabled=True, tooltip="the tree of an earlier Generate: nothing is deleted")
        self.later = w.Button(description="later tree", icon="chevron-right", layout=w.Layout(width="auto"),
                              disabled=True, tooltip="the tree of a later Generate")
        self.compare_button = w.Button(
            description="Compare",
            icon="columns",
            layout=w.Layout(width="auto"),
            tooltip=f"the branches (up to {MAX_COMPARED}) aligned by bytes, one row each, in the outline's place",
        )
        # Below the view, shown once the tree has a branch (appearing there moves nothing above it);
        # Compare opens in the outline's place, under the same title row, so its button stays put.
        self.header = w.HBox([self.title, self.compare_button], layout=w.Layout(align_items="center", width="100%"))
        beside = [] if beside_outline is None else [w.Box([beside_outline])]
        for anchor in beside:
            anchor.add_class("lv-compare-anchor")  # (layout.py: no height; what it holds lies over the rest)
        self.box = w.VBox([self.header, *beside, self.outline, self.prefix],
                          layout=w.Layout(width="100%", display="none"))
        self.box.add_class("lv-tree-panel")
        self.box.add_class("lv-explore-tools")
        # The tree's tools, behind the app's "more": rename, delete, undo, the earlier and later trees.
        self.tools = w.HBox([self.earlier, self.later, self.name, self.delete, self.undo],
                            layout=w.Layout(flex_flow="row wrap", align_items="center"))
        self.nodes: list = []
        self.rows: list[w.Button] = []
        self.labels: list[str] = []  # per node, as its row says (the offline copy uses them too)
        self.forks: list[int | None] = []  # per node: where it forks from its parent (None: the root)
        self.marks: list[list[int]] = []
        self.current = None
        self._on_pick = None
        self.say_tree(0, 0)

    def say_tree(self, number: int, count: int, generating: bool = False) -> None:
        """The title: which of the explorer's trees is on show (numbered from 1), or that one is growing."""
        if generating:
            self.title.value = f"<b>Tree {count + 1}</b> <i>generating…</i>"
            self.rows, self.outline.children = [], [w.HTML("<i>#0 root: generating…</i>")]
        elif count == 0:
            self.title.value = "<b>Tree</b> <i>(nothing yet: Generate or Next token; branches are drawn here)</i>"
        else:
            self.title.value = f"<b>Tree {number + 1} of {count}</b>"
        self.earlier.disabled = generating or number <= 0
        self.later.disabled = generating or number >= count - 1

    def refresh(self, tree, current) -> None:
        """Redraw the outline of `tree`, marking `current` (the node on show)."""
        self.nodes = list(tree.nodes) if tree is not None else []
        self.current = current
        parents = parents_of(tree) if tree is not None else {}
        self.forks = []
        depth: list[int] = []
        for node in self.nodes:
            parent = parents.get(id(node))
            self.forks.append(None if parent is None else fork_position(as_trace(parent), as_trace(node)))
            depth.append(0 if parent is None else depth[self.index_of(parent)] + 1)
        self.marks = [set() if f is None else {f} for f in self.forks]
        for j, node in enumerate(self.nodes):
            parent = parents.get(id(node))
            k = self.index_of(parent) if parent is not None else None
            if k is not None:
                self.marks[k].add(self.forks[j])
        self.marks = [
            sorted(m for m in marks if m < len(as_trace(n))) for marks, n in zip(self.marks, self.nodes, strict=False)
        ]
        prompt_len = as_trace(self.nodes[0]).prompt_len if self.nodes else 0
        self.labels = [branch_label(i, as_trace(n), f, prompt_len) for i, (n, f) in
                       enumerate(zip(self.nodes, self.forks, strict=True))]
        self.rows = [self._row(i, label, depth[i]) for i, label in enumerate(self.labels)]
        self.outline.children = self.rows
        shown = self.index_of(current)
        self.name.value = str(as_trace(current).meta.get("name", "")) if shown is not None else ""
        self.delete.disabled = not shown  # (None: nothing on show; 0: the root stays)
        self.prefix.value = self._prefix_html()
        self.box.layout.display = "flex" if len(self.nodes) > 1 else "none"  # the tree, once it branches

    def _row(self, i: int, label: str, depth: int) -> w.Button:
        indent = f"{depth * 1.5:g}em"  # a child's row under its parent's, one step in
        row = w.Button(description=label, tooltip=f"show {label}", layout=w.Layout(
            width=f"calc(100% - {indent})", margin=f"0 0 0 {indent}", flex="0 0 auto"))
        row.add_class("lv-tree-row")
        if self.nodes[i] is self.current:
            row.add_class("lv-tree-current")
        row.on_click(lambda _, i=i: self._on_pick is not None and i < len(self.nodes) and self._on_pick(self.nodes[i]))
        return row

    def index_of(self, node) -> int | None:
        return next((i for i, n in enumerate(self.nodes) if n is node), None)

    def fork_points(self, node) -> list[int]:
        """Positions to mark on `node`'s text: where it forked from its parent and where its children fork."""
        i = self.index_of(node)
        return [] if i is None else self.marks[i]

    def observe(self, callback) -> None:
        """Call `callback(node)` when the person picks another node in the outline."""
        self._on_pick = callback

    def _prefix_html(self) -> str:
        if len(self.nodes) < 2:  # (a line all the same: the panel keeps its height)
            return '<div class="lv-explore-prefix"><i>one text so far: click an alternative to branch</i></div>'
        root = as_trace(self.nodes[0])
        shared = min(fork_position(root, as_trace(n)) for n in self.nodes[1:])
        text = "".join(root.tokens[:shared])
        shown = text if len(text) <= 400 else "…" + text[-399:]
        return (
            f'<div class="lv-explore-prefix" title="{html.escape(shown)}">'
            f"<i>shared by every branch (tokens 1–{shared}):</i> {html.escape(shown)}</div>"
        )


class BranchHere:
    """Branch from the pinned token: pick one of its alternatives (or type any token), press Branch."""

    def __init__(self) -> None:
        self.where = w.HTML(value="<i>Pin a token (click it) to branch from there.</i>", layout=w.Layout(width="100%"))
        self.alternative = w.Dropdown(
            options=[], description="alternative", style={"description_width": "initial"}, layout=w.Layout(width="22em")
        )
        self.typed = w.Text(placeholder="or type a token", layout=w.Layout(width="12em"))
        self.branch = w.Button(
            description="Branch",
            icon="code-fork",
            disabled=True,
            tooltip="continue from the pinned position with this token instead",
        )
        self.box = w.HBox(
            [self.where, self.alternative, self.typed, self.branch], layout=w.Layout(flex_flow="row wrap")
        )
        self.at = -1

    def show(self, trace: Trace | None, at: int) -> None:
        """Offer the alternatives of token `at` of `trace` (-1: nothing pinned)."""
        self.at = at
        if trace is None or not 0 <= at < len(trace) or at == 0:
            self.alternative.options = []
            self.branch.disabled = True
            self.where.value = "<i>Pin a token (click it) to branch from there.</i>"
            return
        options = []
        for text, lp, token_id in zip(trace.top_tokens[at], trace.top_logprobs[at], trace.top_ids[at], strict=False):
            if not math.isfinite(lp):
                continue
            chosen = " (chosen)" if token_id >= 0 and token_id == trace.token_ids[at] else ""
            value = int(token_id) if token_id >= 0 else text
            options.append((f"{visible(text)}  {percent_of_logprob(lp)}{chosen}", value))
        self.alternative.options = options
        self.branch.disabled = False
        self.where.value = f"Branch at token {at + 1} ({html.escape(visible(trace.tokens[at]))}) with:"

    def token(self):
        """The token to branch with: the typed text if any, else the picked alternative's id (or text)."""
        typed = self.typed.value
        return typed if typed else self.alternative.value
