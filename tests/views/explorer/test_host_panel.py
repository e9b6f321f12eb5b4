"""The explorer's panel for hosts without ipywidgets containers (marimo), driven from the kernel
side: its traits mirror the explorer's controls both ways, and a press (the message its frontend
sends) runs the same job as the explorer's own button, on the real default model.

The generated tokens are checked against the default model loaded a second time with plain
transformers (`reference_model`); tests/browser/hosts/test_marimo.py does the same in a real browser.
"""

from __future__ import annotations

import pytest

PROMPT = "A robot may not injure a human being"
JOB_TIMEOUT = 600  # s: 2 shared cores


@pytest.fixture(scope="module")
def app_and_panel(runner):
    from logprob_viz.views.explorer import explore

    app = explore(max_new_tokens=6, top_logprobs=4, temperature=0.0)
    return app, app.host_panel


def test_the_panel_starts_from_the_controls_and_follows_them_both_ways(app_and_panel):
    app, panel = app_and_panel
    # the explorer's settings, not the panel's defaults (a link copies the panel into the controls)
    assert (panel.max_new_tokens, panel.top_logprobs, panel.temperature) == (6, 4, 0.0)
    assert app.controls.max_new_tokens.value == 6
    assert panel.top_logprobs_max == app.controls.top_logprobs.max
    panel.prompt = PROMPT  # what typing in the panel's box does
    assert app.controls.prompt.value == PROMPT
    app.controls.seed.value = 7
    assert panel.seed == 7
    app.controls.seed.value = 0


def test_a_press_generates_and_the_status_and_branches_follow(app_and_panel, reference_model):
    import torch

    from logprob_viz.views.explorer.forks import as_trace

    app, panel = app_and_panel
    panel.prompt = PROMPT
    panel._pressed(panel, {"type": "press", "name": "generate"}, [])
    assert app.wait(JOB_TIMEOUT)
    ids = app.current.token_ids.tolist()
    prompt_len = app.current.prompt_len
    with torch.inference_mode():
        out = reference_model.generate(torch.tensor([ids[:prompt_len]]), max_new_tokens=6, do_sample=False,
                                       pad_token_id=0)
    assert ids[prompt_len:] == out[0, prompt_len:].tolist()
    assert panel.status.startswith("Generated 6 tokens") and panel.status_kind == "info"
    assert "<" not in panel.status  # the status line's text, not its markup
    assert not panel.running

    at = prompt_len + 1
    app.branch(at=at, token=int(app.current.top_ids[at][1]))
    assert app.wait(JOB_TIMEOUT)
    assert len(panel.branches) == 2 and panel.branch == 1
    assert panel.branches == app.branches.labels
    panel.branch = 0  # what picking the root in the panel's list does
    assert list(app.view.trace.tokens) == list(as_trace(app.tree.nodes[0]).tokens)
    assert app.branches.index_of(app.branches.current) == 0


def test_next_token_choices_reach_the_panel_and_a_choice_appends(app_and_panel):
    app, panel = app_and_panel
    panel.prompt = PROMPT  # (each test types its prompt: the suite may run them in any order)
    panel._pressed(panel, {"type": "press", "name": "next_token"}, [])
    assert app.wait(JOB_TIMEOUT)
    assert [i for i, _ in panel.choices] == [i for i, _, _ in app.next_panel.options]
    assert len(panel.choices) == 4 and all("%" in label for _, label in panel.choices)
    before = len(app.current)
    first = panel.choices[0][0]
    panel._pressed(panel, {"type": "press", "name": "choose", "token_id": first}, [])
    assert app.wait(JOB_TIMEOUT)
    assert len(app.current) == before + 1 and int(app.current.token_ids[-1]) == first


def test_an_error_shows_as_an_error_in_the_panel(app_and_panel):
    app, panel = app_and_panel
    panel.prompt = "   "
    panel._pressed(panel, {"type": "press", "name": "generate"}, [])
    assert panel.status_kind == "error" and "prompt is empty" in panel.status
