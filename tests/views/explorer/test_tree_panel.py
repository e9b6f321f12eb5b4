"""The explorer's tree as a person works it, on the real default model: a branch's prefix reads as
its parent's, stepping by hand grows one branch, a new Generate keeps the earlier tree, and the
outline's switch / rename / delete / undo. Numbers are checked against the default model loaded a
second time with plain transformers, or against the parent's own arrays."""

from __future__ import annotations

import math

import numpy as np
import torch

PROMPT = "A robot may not injure a human being"
JOB_TIMEOUT = 600  # s: 2 shared cores


def make_app(runner, prompt=PROMPT, **settings):
    from logprob_viz.views.explorer import explore

    settings.setdefault("max_new_tokens", 6)
    settings.setdefault("top_logprobs", 5)
    return explore(prompt, runner=runner, **settings)


def finish(app):
    assert app.wait(JOB_TIMEOUT), "the app's job did not finish"
    assert app.last_error is None, app.controls.status.value
    return app


def test_a_branch_of_a_sampled_root_shows_the_roots_numbers_before_the_fork(runner, reference_model):
    app = finish(make_app(runner, temperature=0.8, seed=2, max_new_tokens=8))
    app.controls.generate.click()
    finish(app)
    root = app.current
    at = root.prompt_len + 5
    app.branch(at=at, token=int(root.top_ids[at, 2]))
    node = finish(app).view.trace
    assert node is app.current and node is not root
    for name in ("logprobs", "ranks", "top_ids", "processed_logprobs", "processed_top_logprobs"):
        np.testing.assert_array_equal(getattr(node, name)[:at], getattr(root, name)[:at])
    # and those are the model's at T=0.8 (from the logits here, not from the code's numbers)
    ids = root.token_ids[:at].tolist()
    with torch.no_grad():
        tempered = torch.log_softmax(reference_model(torch.tensor([ids])).logits[0].double() / 0.8, dim=-1)
    for i in range(root.prompt_len, at):
        assert abs(float(node.processed_logprobs[i]) - float(tempered[i - 1, ids[i]])) < 1e-4
    # the forced token is completion, marked as chosen: the prompt is the root's
    assert node.prompt_len == root.prompt_len and node.meta["forced"] == [at]


def test_stepping_by_hand_grows_one_branch(runner, reference_model):
    app = make_app(runner, max_new_tokens=4)
    app.controls.generate.click()
    root = finish(app).current
    at = root.prompt_len + 1
    app.branch(at=at, token=int(root.top_ids[at, 1]))
    branch = finish(app).current
    nodes = len(app.tree.nodes)
    ids = branch.token_ids.tolist()
    for _ in range(3):  # three tokens chosen by hand
        app.controls.next_token.click()
        finish(app)
        choice = app.next_panel.options[1][0]  # the second likeliest, by hand
        app.choose(choice)  # what a click on its row in the view's column asks
        finish(app)
        ids.append(choice)
        with torch.no_grad():
            logp = torch.log_softmax(reference_model(torch.tensor([ids[:-1]])).logits[0, -1].double(), dim=-1)
        assert abs(float(app.current.logprobs[-1]) - float(logp[choice])) < 1e-4
    grown = app.current
    assert len(app.tree.nodes) == nodes, "each chosen token made a branch of its own"
    assert app.tree.nodes[-1] is grown and app.tree.parent(grown) is root
    assert grown.token_ids.tolist() == ids and len(grown) == len(branch) + 3
    # three more completion tokens, marked as chosen by hand; the header's counts and the status agree
    assert grown.prompt_len == root.prompt_len
    assert grown.meta["forced"] == [at, len(branch), len(branch) + 1, len(branch) + 2]
    completion = len(grown) - grown.prompt_len
    assert f"({grown.prompt_len} prompt, {completion} completion)" in app.controls.status.value
    assert app.branches.labels[-1].startswith(f"#{nodes - 1} ↳ token {at + 1} ")
    # Undo takes the last token back (the branch as it was before it), again and again
    app.undo()
    assert app.current.token_ids.tolist() == ids[:-1] and app.tree.nodes[-1] is app.current


def test_generate_on_a_new_prompt_keeps_the_earlier_tree(runner):
    app = make_app(runner, max_new_tokens=3)
    app.controls.generate.click()
    first = finish(app).current
    app.branch(at=first.prompt_len + 1, token=int(first.top_ids[first.prompt_len + 1, 1]))
    finish(app)
    first_tree = app.tree
    app.controls.prompt.value = "The capital of France is"
    app.controls.generate.click()
    second = finish(app).current
    assert app.tree is not first_tree and app.tree.nodes == [second]
    assert "Tree 2 of 2" in app.branches.title.value and not app.branches.earlier.disabled
    app.branches.earlier.click()
    assert app.tree is first_tree and len(app.tree.nodes) == 2 and app.current is first_tree.nodes[1]
    assert app.view.trace is app.current and "Tree 1 of 2" in app.branches.title.value
    app.branches.later.click()
    assert app.tree.nodes == [second] and app.view.trace is second


def test_rename_delete_and_undo_in_the_outline(runner):
    app = make_app(runner, max_new_tokens=3)
    app.controls.generate.click()
    root = finish(app).current
    a = root.prompt_len + 1
    app.branch(at=a, token=int(root.top_ids[a, 1]))
    child = finish(app).current
    app.branch(at=a + 1, token=int(child.top_ids[a + 1, 1]))  # a branch of the branch
    grandchild = finish(app).current
    assert [lbl.split(" ")[0] for lbl in app.branches.labels] == ["#0", "#1", "#2"]
    # the outline is indented by depth
    margins = [row.layout.margin for row in app.branches.rows]
    assert margins == ["0 0 0 0em", "0 0 0 1.5em", "0 0 0 3em"]
    assert "lv-tree-current" in app.branches.rows[2]._dom_classes
    app.branches.rows[1].click()
    app.branches.name.value = "the <b>odd</b> one"  # text, never markup: a button's label is plain text
    assert app.branches.labels[1].startswith("#1 “the <b>odd</b> one” ↳")
    assert child.meta["name"] == "the <b>odd</b> one"
    app.branches.delete.click()  # #1 and the branch grown from it go; the root is shown
    assert app.tree.nodes == [root] and app.current is root
    app.branches.undo.click()
    assert app.tree.nodes == [root, child, grandchild] and app.current is child
    app.branches.undo.click()  # the rename
    assert "name" not in child.meta and app.branches.labels[1].startswith("#1 ↳")
    app.branches.rows[0].click()
    assert app.branches.delete.disabled  # the root stays
    ppl = math.exp(-np.mean(root.logprobs[root.prompt_len :].astype(np.float64)))
    assert app.branches.labels[0].startswith(f"#0 root · ppl {ppl:.2f} over tokens {root.prompt_len + 1}–{len(root)}")
