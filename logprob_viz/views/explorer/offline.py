"""The explorer without a kernel: every branch of its tree as self-contained HTML views.

``offline_html`` is the app's ``text/html`` output, which nbconvert's HTML and notebook viewers
show where no widget manager renders the live app; ``offline_page`` is the same as one standalone
page (``app.to_html(path)``). Each branch is the view's own offline fragment
(`logprob_viz.views.page.fallback_html`: hover and pinning work, nothing goes back to Python), with a
note that generating and branching need the live app.
"""

from __future__ import annotations

import html
from pathlib import Path

from ..page import fallback_html, page, written
from .forks import as_trace

__all__ = ["offline_html", "offline_page", "STATIC_NOTE"]

# Where this HTML is shown no live app renders (nbconvert's page, a notebook viewer, a frontend
# without Jupyter widgets), whether or not a kernel once ran it: say what works here and where
# the rest does, not that a kernel is missing.
STATIC_NOTE = (
    "A static copy of the explorer: hover and pin tokens here. Generating and branching need the live app: "
    "run lv.explore() where Jupyter widgets render (JupyterLab, Notebook 7, VS Code, Voilà) or in marimo."
)
PAGE_NOTE = (
    "A saved copy of the explorer: hover and pin tokens here; generating and branching need lv.explore() in a notebook."
)


def offline_html(state, labels: list[str], max_branches: int | None = 8, note: str = STATIC_NOTE) -> str:
    """The branches of the explorer's `state` (at most `max_branches`, None: all; root first) as HTML,
    labelled with `labels` (the outline's)."""
    shown = f'<p class="lv-explore-note"><i>{html.escape(note)}</i></p>'
    if state.tree is not None:
        nodes = list(state.tree.nodes)
    else:
        nodes = [state.current] if state.current is not None else []
    if not nodes:
        return f"<div class='lv-explore-offline'>{shown}<p>(nothing generated yet)</p></div>"
    limit = len(nodes) if max_branches is None else max_branches
    parts = [f"<div class='lv-explore-offline'>{shown}"]
    for i, node in enumerate(nodes[:limit]):
        label = labels[i] if i < len(labels) else f"#{i}"
        parts.append(f"<h4 class='lv-explore-branch'>{html.escape(label)}</h4>{fallback_html(as_trace(node))}")
    if len(nodes) > limit:
        parts.append(f"<p>({len(nodes) - limit} more branches: save them with app.to_html() or tree.to_dict())</p>")
    parts.append("</div>")
    return "".join(parts)


def offline_page(state, labels: list[str], path: str | Path | None = None) -> str | Path:
    """Every branch of the explorer's `state` as one standalone, offline HTML page; with `path`, written
    there, the path returned."""
    return written(page(offline_html(state, labels, None, PAGE_NOTE), "logprob_viz explorer"), path)
