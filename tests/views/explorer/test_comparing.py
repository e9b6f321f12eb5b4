"""The explorer's Compare (`logprob_viz.views.explorer.comparing`) driven from the kernel side on the
real default model: it opens above the tree panel, follows the tree as branches are made, says which
branches it shows, and every row's own continuation is scored (numbers checked against sums written here).
"""

from __future__ import annotations

import math

import pytest

PROMPT = "A robot may not injure a human being"
JOB_TIMEOUT = 600  # s: 2 shared cores


def make_app(runner):
    from logprob_viz.views.explorer import explore

    app = explore(PROMPT, runner=runner, max_new_tokens=4, top_logprobs=5)
    app.generate()
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, app.controls.status.value
    return app


def branch(app, k: int):
    """Branch from the root at its k-th generated token with its second alternative."""
    root = app.tree.nodes[0]
    at = root.prompt_len + k % (len(root) - root.prompt_len)
    token = next(int(i) for i in root.top_ids[at] if i >= 0 and i != root.token_ids[at])
    app.switch(root)
    app.branch(at=at, token=token)
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, app.controls.status.value


def own_bits_per_byte(trace, shared: int) -> float:
    bits, n_bytes, at = 0.0, 0, 0
    for b, lp in zip(trace.token_bytes, trace.logprobs.tolist(), strict=True):
        if at >= shared and not math.isnan(lp):
            bits -= lp / math.log(2)
            n_bytes += len(b)
        at += len(b)
    return bits / n_bytes


def test_compare_opens_in_sight_and_follows_the_branches(runner):
    app = make_app(runner)
    with pytest.raises(ValueError, match="branch first"):
        app.comparing.open()
    app.branches.compare_button.click()  # from the button: the status line says it
    assert "branch first" in app.controls.status.value
    branch(app, 0)
    app.branches.compare_button.click()
    assert app.last_error is None, app.controls.status.value
    children = list(app.widget.children)
    # in the tree panel, below the view (appearing there moves nothing above), in the outline's place
    panel = list(app.branches.box.children)
    assert children.index(app.branches.box) > children.index(app.view)
    # over the outline: held by an anchor of no height just above it, the outline's room kept
    (anchor,) = [c for c in panel if app.comparing.box in getattr(c, "children", ())]
    assert "lv-compare-anchor" in anchor._dom_classes and panel.index(anchor) + 1 == panel.index(app.branches.outline)
    assert app.comparing.box.layout.display == "flex" and app.branches.outline.layout.visibility == "hidden"
    assert app.comparing.view.labels == ["#0", "#1"]
    for k in range(1, 5):  # branches #2-#5, made while the comparison is open
        branch(app, k)
        assert app.comparing.view.labels == [f"#{i}" for i in range(k + 2)], k
    view = app.comparing.view
    nodes = app.tree.nodes
    assert "Comparing #0–#5 (every branch)" in app.comparing.title.value
    # each row's own continuation scored, as summed here; the rows differ there
    shared = view.shared_bytes
    for r, node in enumerate(nodes):
        part = view.numbers["own"][r]
        assert math.isclose(part["bits_per_byte"], own_bits_per_byte(node, shared), rel_tol=1e-6)
        assert part["start"] == shared and part["end"] == len(node.text.encode())
    assert len({round(p["bits_per_byte"], 6) for p in view.numbers["own"]}) > 1
    # a pick of the person's is kept; a new branch is then offered, not added
    app.comparing.picks.children[3].value = False
    assert app.comparing.view.labels == ["#0", "#1", "#2", "#4", "#5"]
    branch(app, 5)
    assert app.comparing.view.labels == ["#0", "#1", "#2", "#4", "#5"]
    assert "not shown: #3, #6" in app.comparing.title.value
    app.comparing.open(rows=[0, 6])
    assert app.comparing.view.labels == ["#0", "#6"]
    with pytest.raises(ValueError, match="compare 2 to 8 of the branches #0–#6"):
        app.comparing.open(rows=[0])
