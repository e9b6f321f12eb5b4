"""The explorer's Compare: the branches aligned by bytes, in a compare view that opens in the tree
panel in its outline's place (below the view, under the Compare button's own row: opening it moves
neither the button nor the text) and follows the tree as it grows.

Which branches it shows: all of them while there are at most `MAX_COMPARED`; beyond that the root
and the newest. A tick box per branch changes that; once the person has picked, new branches are
offered (and the title says so) but not added. Every number in the view says over which tokens
and bytes it is taken (each row's own continuation is scored, not only the shared prefix).
"""

from __future__ import annotations

import html

import ipywidgets as w

from ..compare.view import MAX_ROWS, CompareView
from .forks import as_trace

__all__ = ["MAX_COMPARED", "BranchComparison"]

MAX_COMPARED = MAX_ROWS  # rows the compare view shows


def _numbers(nodes: list[int]) -> str:
    """"#0, #2–#5": branch numbers with runs joined."""
    runs, start = [], None
    for k, n in enumerate(nodes):
        if start is None:
            start = n
        if k + 1 == len(nodes) or nodes[k + 1] != n + 1:
            runs.append(f"#{start}" if start == n else f"#{start}–#{n}")
            start = None
    return ", ".join(runs)


class BranchComparison:
    """The Compare button's view of the branches of ``state.tree`` (the app's ``comparing``).

    ``open(rows=None)`` shows it (``rows``: branch numbers to compare, default as the module says);
    ``close()`` hides it; ``view`` is the `CompareView` on show (None before the first open). The
    rows the person ticked are ``state.compared``. It follows the state's tree and node on show;
    `say` and `fail` write the status line, `show_outline(bool)` shows or hides the outline whose
    place it takes.
    """

    def __init__(self, state, say, fail, show_outline) -> None:
        self.state, self.say, self.fail, self.show_outline = state, say, fail, show_outline
        self.title = w.HTML()
        self.picks = w.HBox([], layout=w.Layout(flex_flow="row wrap"))
        self.holder = w.VBox([])
        self.close_button = w.Button(description="Close", icon="times", layout=w.Layout(width="auto"),
                                     tooltip="hide the comparison (Compare shows it again)")
        self.close_button.on_click(lambda _: self.close())
        self.box = w.VBox([w.HBox([self.title, self.close_button]), self.picks, self.holder],
                          layout=w.Layout(display="none", width="100%"))
        self.box.add_class("lv-explore-compare")
        self.view = None
        self._shown: tuple | None = None  # (tree, nodes compared) on show
        self._quiet = False
        self._tree = None  # the tree `state.compared` is about: a new tree (Generate) starts from every branch again
        # The tree and the node on show change after every branch, switch and generation: the moment to follow.
        state.observe(lambda _: self.follow(), names=["tree", "current"])

    @property
    def chosen(self) -> list[int] | None:
        """The person's pick (``state.compared``); None: follow the tree."""
        return self.state.compared

    def toggle(self) -> None:
        """The Compare button: open (and say so), or close when open."""
        if self.is_open:
            return self.close()
        try:
            self.open()
            self.say("The branches, aligned by bytes, in the outline's place; hover a row's own "
                     "continuation for its numbers. Compare again shows the outline.")
        except (ValueError, TypeError) as error:
            self.fail(error)

    @property
    def is_open(self) -> bool:
        return self.box.layout.display != "none"

    def _nodes(self) -> list:
        tree = self.state.tree
        return list(tree.nodes) if tree is not None else []

    def rows(self) -> list[int]:
        """The branch numbers compared: the person's pick (those that exist), else all, or the root and the newest."""
        n = len(self._nodes())
        if self.chosen is not None:
            return [i for i in self.chosen if i < n]
        if n <= MAX_COMPARED:
            return list(range(n))
        return [0, *range(n - MAX_COMPARED + 1, n)]

    def open(self, rows: list[int] | None = None):
        """Show the branches `rows` (branch numbers; default: see `rows`) aligned by bytes; returns the view."""
        n = len(self._nodes())
        if n < 2:
            raise ValueError("branch first: a comparison needs at least two branches (pin a token, click an "
                             "alternative in its chart)")
        if rows is not None:
            rows = sorted({int(i) for i in rows})
            if len(rows) < 2 or len(rows) > MAX_COMPARED or rows[0] < 0 or rows[-1] >= n:
                raise ValueError(f"compare 2 to {MAX_COMPARED} of the branches #0–#{n - 1}, got {rows}")
            self.state.compared = rows
        self._tree = self.state.tree
        self.box.layout.display = "flex"
        self.show_outline(False)  # the comparison takes the outline's place
        self._shown = None
        self.follow()
        return self.view

    def close(self) -> None:
        self.box.layout.display = "none"
        self.show_outline(True)

    def follow(self) -> None:
        """Bring the comparison up to date with the tree (only while it is open)."""
        if not self.is_open:
            return
        if self.state.tree is not self._tree:
            self._tree, self.state.compared = self.state.tree, None
        nodes = self._nodes()
        rows = self.rows()
        key = (id(self.state.tree), tuple(id(nodes[i]) for i in rows))
        self._offer(len(nodes), rows)
        if key == self._shown:
            return
        self._shown = key
        if len(rows) < 2:
            self.holder.children = []
            self.view = None
            return
        self.view = CompareView([as_trace(nodes[i]) for i in rows], labels=[f"#{i}" for i in rows])
        self.holder.children = [self.view]

    def _offer(self, n: int, rows: list[int]) -> None:
        """The title (which branches are shown, how to change it) and one tick box per branch."""
        hidden = [i for i in range(n) if i not in rows]
        if len(rows) < 2:
            said = "Tick two or more branches to compare them." if n >= 2 else "One branch so far: branch to compare."
        else:
            rest = " (every branch)." if not hidden else f"; not shown: {_numbers(hidden)}."
            said = f"Comparing {_numbers(rows)}{rest}"
            said += f" Tick the branches to compare (2 to {MAX_COMPARED})."
        self.title.value = f"<b>Compare</b> {html.escape(said)}"
        if len(self.picks.children) != n:
            boxes = []
            for i in range(n):
                box = w.Checkbox(description=f"#{i}", indent=False, layout=w.Layout(width="auto", margin="0 14px 0 0"))
                box.observe(lambda change, i=i: self._ticked(i, change["new"]), names="value")
                boxes.append(box)
            self.picks.children = boxes
        self._quiet = True
        try:
            for i, box in enumerate(self.picks.children):
                box.value = i in rows
                box.disabled = i not in rows and len(rows) >= MAX_COMPARED
        finally:
            self._quiet = False

    def _ticked(self, i: int, on: bool) -> None:
        if self._quiet:
            return
        rows = set(self.rows())
        rows = rows | {i} if on else rows - {i}
        self.state.compared = sorted(rows)
        self.follow()
