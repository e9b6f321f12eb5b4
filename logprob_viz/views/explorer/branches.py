"""The explorer's tree panel: the list of branches (switch between them), the shared prefix shown
once, and the branch-here controls for the pinned token (an alternative, or any token text).

Plain ipywidgets; the app (`app.py`) runs `tree.branch` and swaps the view's trace.
"""

from __future__ import annotations

import html
import math

import ipywidgets as w
import numpy as np

from ...records.trace import Trace
from .branching import as_trace, branch_label, fork_position, parents_of, visible

__all__ = ["BranchList", "BranchHere"]

MAX_COMPARED = 8  # rows the compare view shows


class BranchList:
    """A Select of the tree's nodes (root first), each with its perplexity and first differing words."""

    def __init__(self) -> None:
        self.select = w.Select(options=[], rows=5, layout=w.Layout(width="100%"))
        self.prefix = w.HTML()
        self.compare_button = w.Button(
            description="Compare",
            icon="columns",
            layout=w.Layout(width="auto"),
            tooltip=f"the branches (up to {MAX_COMPARED}) aligned by bytes, one row each, below the text",
        )
        self.comparison = w.VBox([])  # the compare view, once asked for
        self.box = w.VBox(
            [w.HTML("<b>Branches</b>"), self.prefix, self.select, self.compare_button], layout=w.Layout(display="none")
        )
        self.nodes: list = []
        self.forks: list[int | None] = []  # per node: where it forks from its parent (None: the root)
        self.marks: list[list[int]] = []
        self._quiet = False

    def refresh(self, tree, current) -> None:
        """Rebuild the list from `tree`, selecting `current` (the node on show)."""
        self.nodes = list(tree.nodes) if tree is not None else []
        parents = parents_of(tree) if tree is not None else {}
        self.forks = []
        for node in self.nodes:
            parent = parents.get(id(node))
            self.forks.append(None if parent is None else fork_position(as_trace(parent), as_trace(node)))
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
        options = [
            (branch_label(i, as_trace(n), f, prompt_len), i)
            for i, (n, f) in enumerate(zip(self.nodes, self.forks, strict=True))
        ]
        self._quiet = True
        try:
            self.select.options = options
            self.select.value = self.index_of(current) if options else None
        finally:
            self._quiet = False
        self.prefix.value = self._prefix_html()
        self.box.layout.display = "flex" if len(self.nodes) > 1 else "none"

    def compare(self):
        """Show the branches (root first, up to MAX_COMPARED) aligned by bytes in a compare view; returns it."""
        from ..compare_view import CompareView

        if len(self.nodes) < 2:
            raise ValueError("branch first: a comparison needs at least two branches")
        nodes = self.nodes[:MAX_COMPARED]
        view = CompareView([as_trace(n) for n in nodes], labels=[f"#{i}" for i in range(len(nodes))])
        self.comparison.children = [view]
        return view

    def index_of(self, node) -> int | None:
        return next((i for i, n in enumerate(self.nodes) if n is node), None)

    def fork_points(self, node) -> list[int]:
        """Positions to mark on `node`'s text: where it forked from its parent and where its children fork."""
        i = self.index_of(node)
        return [] if i is None else self.marks[i]

    def observe(self, callback) -> None:
        """Call `callback(node)` when the person picks another branch."""

        def changed(change):
            if not self._quiet and change["new"] is not None and change["new"] < len(self.nodes):
                callback(self.nodes[change["new"]])

        self.select.observe(changed, names="value")

    def _prefix_html(self) -> str:
        if len(self.nodes) < 2:
            return ""
        root = as_trace(self.nodes[0])
        shared = min(fork_position(root, as_trace(n)) for n in self.nodes[1:])
        text = "".join(root.tokens[:shared])
        shown = text if len(text) <= 400 else "…" + text[-399:]
        return (
            f'<div class="lv-explore-prefix" style="white-space:pre-wrap">'
            f"<i>shared by every branch ({shared} tokens):</i> {html.escape(shown)}</div>"
        )


class BranchHere:
    """Branch from the pinned token: pick one of its alternatives (or type any token), press Branch."""

    def __init__(self) -> None:
        # One line of its own whatever it says, so pinning (which changes it) never moves the view below.
        self.where = w.HTML(value=_one_line("<i>Pin a token (click it) to branch from there.</i>"),
                            layout=w.Layout(width="100%"))
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
            self.where.value = _one_line("<i>Pin a token (click it) to branch from there.</i>")
            return
        options = []
        for text, lp, token_id in zip(trace.top_tokens[at], trace.top_logprobs[at], trace.top_ids[at], strict=False):
            if not math.isfinite(lp):
                continue
            chosen = " (chosen)" if token_id >= 0 and token_id == trace.token_ids[at] else ""
            options.append((f"{visible(text)}  {np.exp(lp):.1%}{chosen}", int(token_id) if token_id >= 0 else text))
        self.alternative.options = options
        self.branch.disabled = False
        self.where.value = _one_line(f"at token {at} ({html.escape(visible(trace.tokens[at]))}):")

    def token(self):
        """The token to branch with: the typed text if any, else the picked alternative's id (or text)."""
        typed = self.typed.value
        return typed if typed else self.alternative.value


def _one_line(markup: str) -> str:
    return f'<div style="white-space:nowrap;overflow:hidden;text-overflow:ellipsis">{markup}</div>'
