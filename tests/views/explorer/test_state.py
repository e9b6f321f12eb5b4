"""The explorer driven from Python through ``app.state`` and ``app.actions`` alone (no widget is
touched), on the real default model: after generate, pin, branch, switch, undo, delete, Next token
and a token chosen by hand, every trait of the state is checked, and the view shows the state.

The numbers are checked against the default model loaded a second time with plain transformers
(`reference_model`): its own greedy continuation and its own softmax.
"""

from __future__ import annotations

import numpy as np
import pytest

PROMPT = "A robot may not injure a human being"
JOB_TIMEOUT = 600  # s: 2 shared cores
TRAITS = {"tree", "tree_input", "current", "edits", "preview", "pinned", "running", "status", "last_error",
          "settings", "engine", "base", "step", "typed", "compared"}


def run(app, action: str, *args):
    """Run one action from the app's table and wait for any job it started."""
    app.actions[action](*args)
    assert app.wait(JOB_TIMEOUT), f"{action} did not finish"
    return app.state


def ref_greedy(model, ids: list[int], n: int) -> list[int]:
    import torch

    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False, pad_token_id=0)
    return out[0, len(ids):].tolist()


def ref_next_logprobs(model, ids: list[int]) -> np.ndarray:
    import torch

    with torch.inference_mode():
        return torch.log_softmax(model(torch.tensor([ids])).logits[0, -1].double(), dim=-1).numpy()


def same(nodes, expected) -> bool:
    """The same traces (objects), in the same order."""
    return len(nodes) == len(expected) and all(a is b for a, b in zip(nodes, expected, strict=True))


def assert_idle(state, kind: str, words: str) -> None:
    """No job runs, none is previewed, and the status line says `words` as `kind`."""
    assert state.running is None and state.preview is None
    assert state.status[0] == kind and words in state.status[1], state.status
    if kind != "error":
        assert state.last_error is None, state.last_error


@pytest.fixture
def app(runner):
    from logprob_viz.views.explorer import explore

    return explore(PROMPT, runner=runner, max_new_tokens=8, top_logprobs=5)


def test_the_state_declares_every_trait_the_app_remembers(app):
    from logprob_viz.views.explorer.sampling_settings import Settings

    state = app.state
    assert set(state.trait_names()) == TRAITS
    assert state.tree is None and state.current is None and state.tree_input is None and state.edits == 0
    assert state.pinned == -1 and state.running is None and state.last_error is None
    assert state.status[0] == "info" and state.status[1].startswith("Ready")
    assert state.settings == Settings(max_new_tokens=8, top_logprobs=5)
    assert state.base is None and state.step is None and state.typed == {} and state.compared is None
    # the settings follow the controls, and the controls follow the settings
    app.controls.temperature.value = 0.5
    assert state.settings.temperature == 0.5
    state.settings = Settings(max_new_tokens=6, top_logprobs=4, seed=3)
    assert (app.controls.max_new_tokens.value, app.controls.top_logprobs.value, app.controls.seed.value) == (6, 4, 3)
    assert app.controls.temperature.value == 0.0 and app.view.sampling["temperature"] == 0.0


def test_generate_pin_branch_switch_undo_delete_through_the_state(app, reference_model, tokenizer):
    state = app.state
    # generate: a new tree, its root on show
    run(app, "generate")
    assert_idle(state, "info", "Generated 8 tokens")
    root = state.current
    ids = tokenizer(PROMPT)["input_ids"]
    assert root.token_ids.tolist() == ids + ref_greedy(reference_model, ids, 8)
    assert same(state.tree.nodes, [root]) and state.tree_input == {"prompt": PROMPT} and state.edits == 1
    assert app.view.trace is root and state.pinned == -1 and state.base is None and state.step is None
    # pin: the view pins the same token, and the branch-here controls offer its alternatives
    at = root.prompt_len + 2
    state.pinned = at
    assert app.view.selected == at and app.branch_here.at == at
    # branch with the second alternative there: the new node is on show, the fork stays pinned
    alt = int(root.top_ids[at][1])
    run(app, "branch", at, alt)
    assert_idle(state, "info", f"Branch #1 from token {at + 1}")
    node = state.current
    assert same(state.tree.nodes, [root, node]) and state.edits == 2 and state.pinned == at
    assert node.token_ids[:at].tolist() == root.token_ids[:at].tolist() and int(node.token_ids[at]) == alt
    rest = node.token_ids[at + 1:].tolist()
    assert rest == ref_greedy(reference_model, root.token_ids[:at].tolist() + [alt], len(rest))
    assert app.view.trace is node and at in app.view.forks
    # switch back to the root; the alternative's click shows its branch rather than making another
    run(app, "switch", root)
    assert state.current is root and app.view.trace is root and state.pinned == -1
    assert "Showing #0 root" in state.status[1]
    run(app, "alternative", at, alt)
    assert state.current is node and len(state.tree.nodes) == 2
    # delete the branch: its parent is shown; undo brings it back
    run(app, "delete")
    assert_idle(state, "info", "Deleted #1")
    assert state.current is root and same(state.tree.nodes, [root]) and app.view.trace is root
    run(app, "undo")
    assert_idle(state, "info", "Undone")
    assert same(state.tree.nodes, [root, node]) and state.current is node and app.view.trace is node
    # undo the branch itself: the tree of one node again
    run(app, "undo")
    assert same(state.tree.nodes, [root]) and state.current is root
    # a refused action is an error in the state, and changes nothing else
    run(app, "delete")
    assert state.status[0] == "error" and "root cannot be deleted" in state.last_error
    assert len(state.tree.nodes) == 1


def test_next_token_and_a_choice_through_the_state(app, reference_model, tokenizer):
    state = app.state
    run(app, "next_token")
    assert_idle(state, "info", "Next token")
    ids = tokenizer(PROMPT)["input_ids"]
    assert state.base.token_ids.tolist() == ids and state.current is state.base and state.edits == 1
    assert len(state.step) == len(ids) + 1 and state.decoding_by_hand
    expected = ref_next_logprobs(reference_model, ids)
    offered = [(i, lp) for i, _, lp in app.next_panel.options]
    assert [i for i, _ in offered] == [int(i) for i in np.argsort(-expected)[:5]]
    assert all(abs(lp - expected[i]) < 1e-4 for i, lp in offered)
    second = offered[1][0]
    run(app, "choose", second)
    assert_idle(state, "info", "chosen by hand")
    assert state.current.token_ids.tolist() == ids + [second] and state.base is state.current
    assert state.edits == 2 and len(state.tree.nodes) == 1  # the node grew in place
    run(app, "token_p", " the")
    assert state.typed["text"] == " the" and state.typed["after"] == len(ids) + 1
    assert app.view.next_typed == state.typed
    run(app, "close_next")
    assert state.base is None and state.step is None and state.typed == {} and app.view.next_step == {}


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())


def test_a_tree_made_in_python_is_shown_from_its_root_and_the_earlier_tree_stays(app, runner):
    import logprob_viz as lv

    state = run(app, "generate")
    generated = state.tree
    scored = runner.score("The quick brown fox jumps over the lazy dog")
    app.tree = lv.Tree(scored, runner=runner)  # as a notebook does (the whitespace-marks browser test too)
    assert state.tree is app.tree and state.tree is not generated
    assert state.current is scored and app.view.trace is scored, "the new tree's root is on show"
    assert [grown.tree for grown in app.history.trees] == [generated, state.tree]
    app.actions["earlier"]()
    assert state.tree is generated, "the generated tree is one step back in the history"
    with pytest.raises(TypeError, match="lv.Tree"):
        app.tree = scored
