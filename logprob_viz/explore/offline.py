"""The explorer without a kernel: every branch of its tree as self-contained HTML views.

Used as the app's ``text/html`` output, which nbconvert's HTML and notebook viewers show where
no widget manager renders the live app. Each branch is the view's own offline fragment
(`logprob_viz.export.html_fragment`: hover and pinning work, nothing goes back to Python), with
a note that the controls need the kernel.
"""

from __future__ import annotations

import html

from .controls import NO_KERNEL_NOTE
from .state import as_trace

__all__ = ["offline_html"]


def offline_html(app, max_branches: int = 8) -> str:
    """The app's branches (at most `max_branches`, root first) as HTML, labelled as in its branch list."""
    from ..export import html_fragment

    note = f'<p class="lv-explore-note"><i>{html.escape(NO_KERNEL_NOTE)}</i></p>'
    if app.tree is not None:
        nodes = list(app.tree.nodes)
    else:
        nodes = [app.current] if app.current is not None else []
    if not nodes:
        return f"<div class='lv-explore-offline'>{note}<p>(nothing generated yet)</p></div>"
    labels = [label for label, _ in app.branches.select.options]
    parts = [f"<div class='lv-explore-offline'>{note}"]
    for i, node in enumerate(nodes[:max_branches]):
        label = labels[i] if i < len(labels) else f"#{i}"
        parts.append(f"<h4>{html.escape(label)}</h4>{html_fragment(as_trace(node))}")
    if len(nodes) > max_branches:
        parts.append(f"<p>({len(nodes) - max_branches} more branches: save them with tree.to_dict())</p>")
    parts.append("</div>")
    return "".join(parts)
