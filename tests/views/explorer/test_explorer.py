"""The explorer app (lv.explore) driven from the kernel side: its buttons pressed with
``button.click()``, exactly what a click in the browser runs, on the real default model.

Every number is checked against an independent computation: the default model loaded a second
time with plain transformers (`reference_model`), its own greedy ``generate`` and its own
softmax over the full vocabulary.
"""

from __future__ import annotations

import html
import math
import re
import time

import numpy as np
import pytest

import paths

PROMPT = "A robot may not injure a human being"
JOB_TIMEOUT = 600  # s: 2 shared cores


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())


def make_app(runner, prompt=PROMPT, **settings):
    from logprob_viz.views.explorer import explore

    settings.setdefault("max_new_tokens", 8)
    settings.setdefault("top_logprobs", 5)
    return explore(prompt, runner=runner, **settings)


def finish(app):
    assert app.wait(JOB_TIMEOUT), "the app's job did not finish"
    return app


def view_says(app, content: dict) -> None:
    """What the app does with a message of its view (the view's `on_msg` runs the same)."""
    from logprob_viz.views.explorer.actions import from_view, run

    run(app.actions, from_view(content))


def status(app) -> str:
    return app.controls.status.value


def ref_greedy(model, ids: list[int], n: int) -> list[int]:
    import torch

    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False, pad_token_id=0)
    return out[0, len(ids) :].tolist()


def ref_logprobs(model, ids: list[int], temperature: float = 1.0):
    """log softmax(logits / T) of the next token after every prefix of `ids`: (N, V)."""
    import torch

    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[0].double()
    return torch.log_softmax(logits / temperature, dim=-1).numpy()


def eos_cut(tokens: list[int], eos: int) -> list[int]:
    return tokens[: tokens.index(eos) + 1] if eos in tokens else tokens


@pytest.fixture
def generated(runner):
    # a fresh app per test (10 greedy tokens take seconds): no test depends on what another did to
    # the tree, so the suite passes in any order (--reverse, --shuffle)
    app = make_app(runner, max_new_tokens=10)
    app.controls.generate.click()
    finish(app)
    assert app.last_error is None, status(app)
    return app


def test_generate_streams_greedy_tokens_of_the_model(generated, reference_model, tokenizer):
    app = generated
    trace = app.view.trace
    ids = tokenizer(PROMPT)["input_ids"]
    assert trace.token_ids[: trace.prompt_len].tolist() == ids
    expected = eos_cut(ref_greedy(reference_model, ids, 10), tokenizer.eos_token_id)
    assert trace.token_ids[trace.prompt_len :].tolist() == expected
    # the recorded logprobs are the model's own, position by position
    full = ref_logprobs(reference_model, trace.token_ids.tolist())
    for i in range(trace.prompt_len, len(trace)):
        assert abs(trace.logprobs[i] - full[i - 1, trace.token_ids[i]]) < 1e-4
    assert app.tree is not None and app.tree.nodes[0] is trace
    assert "Generated" in status(app) and "tokens/s" in status(app)
    assert not app.controls.generate.disabled and app.controls.stop.disabled


def test_tokens_reach_the_view_before_generation_ends_and_stop_keeps_them(runner, reference_model, tokenizer):
    app = make_app(runner, max_new_tokens=300)
    seen: list[int] = []
    app.controls.generate.click()
    deadline = time.monotonic() + JOB_TIMEOUT
    while time.monotonic() < deadline and app.running:
        n = len(app.view.trace) - app.view.trace.prompt_len if app.current is None else -1
        if n > 0 and (not seen or seen[-1] != n):
            seen.append(n)
        if len(seen) >= 3:
            assert "tokens/s" in status(app)  # the running rate while generating
            app.controls.stop.click()
            break
        time.sleep(0.02)
    finish(app)
    assert len(seen) >= 3, f"the view grew only through {seen} tokens while generating"
    final = app.view.trace
    kept = len(final) - final.prompt_len
    assert seen[-1] <= kept < 300, f"Stop kept {kept} tokens after seeing {seen}"
    assert "stopped" in status(app)
    ids = tokenizer(PROMPT)["input_ids"]
    assert final.token_ids[final.prompt_len :].tolist() == ref_greedy(reference_model, ids, kept)
    assert app.tree.nodes[0] is final


def test_branch_from_an_alternative_and_switch_back(generated, reference_model):
    app = generated
    root = app.tree.nodes[0]
    at = root.prompt_len + 2
    alt = int(root.top_ids[at][1])  # the model's second choice there
    app.view.selected = at
    assert app.branch_here.alternative.options, "no alternatives offered for the pinned token"
    app.branch_here.alternative.value = alt
    app.branch_here.branch.click()
    finish(app)
    assert app.last_error is None, status(app)
    node = app.current
    assert app.view.trace is node and len(app.tree.nodes) == 2
    assert node.token_ids[:at].tolist() == root.token_ids[:at].tolist()
    assert int(node.token_ids[at]) == alt
    assert abs(float(node.logprobs[at]) - float(root.top_logprobs[at][1])) < 1e-4
    prefix = root.token_ids[:at].tolist() + [alt]
    rest = node.token_ids[at + 1 :].tolist()
    assert len(rest) > 0 and rest == ref_greedy(reference_model, prefix, len(rest))
    assert at in app.view.forks  # the fork point is marked on the branch
    # the list: two entries with perplexities; the root's text up to the fork shown once
    labels = app.branches.labels
    # token numbers from 1, as the chart numbers them ("token 8 of 20")
    assert len(labels) == 2 and labels[1].startswith("#1 ↳ token ") and f"token {at + 1} " in labels[1]
    ppl = math.exp(-np.mean(node.logprobs[root.prompt_len :].astype(np.float64)))  # after the prompt
    assert f"ppl {ppl:.2f} over tokens {root.prompt_len + 1}–{len(node)}" in labels[1]
    assert f"(tokens 1–{at})" in app.branches.prefix.value
    # the chart marks the alternative that has a branch now, on the root: {position: {id: node number}}
    app.branches.rows[0].click()
    assert app.view.trace is root and app.current is root and at in app.view.forks
    assert app.view.explored == {str(at): {str(alt): 1}}
    assert "Showing #0 root" in status(app)  # the status line follows the switch


def test_a_click_in_the_view_branches_like_the_fallback(generated):
    app = generated
    root = app.tree.nodes[0]
    app.branches.rows[0].click()
    at = root.prompt_len + 4
    alt = int(root.top_ids[at][2])
    before = len(app.tree.nodes)
    # the message the view sends when an alternative's bar is clicked
    view_says(app, {"event": "alternative", "at": at, "token_id": alt, "token": "x"})
    finish(app)
    assert app.last_error is None, status(app)
    assert len(app.tree.nodes) == before + 1 and int(app.current.token_ids[at]) == alt
    assert app.current.token_ids[:at].tolist() == root.token_ids[:at].tolist()
    assert len(app.branches.labels) == before + 1
    # the same click again: that alternative has its branch now, so it is shown, not made again
    node = app.current
    app.branches.rows[0].click()
    view_says(app, {"event": "alternative", "at": at, "token_id": alt, "token": "x"})
    assert not app.running and app.current is node and len(app.tree.nodes) == before + 1


def test_the_top_logprobs_box_goes_up_to_what_the_runner_records(runner, generated, reference_model):
    vocab = reference_model.config.vocab_size  # the local model: any token can be an alternative
    assert (generated.controls.top_logprobs.min, generated.controls.top_logprobs.max) == (1, vocab)
    with pytest.raises(ValueError, match=f"top_logprobs must be an int between 0 and {vocab} for this runner"):
        make_app(runner, top_logprobs=vocab + 1)


def test_bad_input_is_a_visible_message_and_the_tree_is_unchanged(runner, generated):
    app = generated
    nodes = list(app.tree.nodes)
    shown = app.view.trace
    n = len(shown)
    with pytest.raises(Exception) as direct:  # the same call on the Tree directly
        app.tree.branch(at=n + 5, token=" the", max_new_tokens=4, parent=shown)
    app.branch(at=n + 5, token=" the")
    finish(app)
    assert str(direct.value) in app.last_error and "error" in status(app)
    assert list(app.tree.nodes) == nodes and app.view.trace is shown

    with pytest.raises(Exception) as direct:
        app.tree.branch(at=n - 2, token="no such token, surely", max_new_tokens=4, parent=shown)
    app.view.selected = n - 2
    app.branch_here.typed.value = "no such token, surely"
    app.branch_here.branch.click()
    finish(app)
    app.branch_here.typed.value = ""
    assert str(direct.value) in app.last_error
    assert list(app.tree.nodes) == nodes

    empty = make_app(runner, prompt="   ")
    empty.controls.generate.click()
    assert "prompt is empty" in status(empty) and empty.tree is None
    with pytest.raises(TypeError, match="unknown settings"):
        make_app(runner, temprature=0.5)


def test_next_token_shows_the_distribution_before_a_token_is_chosen(runner, reference_model, tokenizer):
    app = make_app(runner, prompt="The capital of France is", top_logprobs=5)
    app.controls.next_token.click()
    finish(app)
    assert app.last_error is None, status(app)
    ids = tokenizer("The capital of France is")["input_ids"]
    # nothing chosen yet: the view shows the prompt only
    assert app.view.trace.token_ids.tolist() == ids
    logp = ref_logprobs(reference_model, ids)[-1]
    top = np.argsort(-logp)[:5]
    offered = app.next_panel.options
    assert [i for i, _, _ in offered] == top.tolist()
    # the view's column draws them (explorer_side.js) from the view's next_step trait: as offered
    assert app.view.next_step["options"] == [[i, text, lp] for i, text, lp in offered]
    assert app.view.next_step["after"] == len(ids)  # its row in the runner's record: after the prompt
    for token_id, _text, lp in offered:
        assert abs(lp - logp[token_id]) < 1e-4
    # choose the second, as a click on its row does (the view's "choose" message)
    view_says(app, {"event": "choose", "token_id": int(top[1])})
    finish(app)
    assert app.last_error is None, status(app)
    grown = app.view.trace
    assert grown.token_ids.tolist() == ids + [int(top[1])] and grown.prompt_len == len(ids)
    assert abs(float(grown.logprobs[-1]) - logp[top[1]]) < 1e-4
    assert int(grown.ranks[-1]) == 2
    following = ref_logprobs(reference_model, ids + [int(top[1])])[-1]
    assert [i for i, _, _ in app.next_panel.options] == np.argsort(-following)[:5].tolist()
    # a new Generate closes the panel: its distribution was for a text no longer on show
    app.controls.generate.click()
    finish(app)
    assert not app.next_panel.shown and app.view.next_step == {}
    app.choose(int(top[0]))
    assert "Next token first" in app.last_error


def test_temperature_readout_is_exact(generated, reference_model):
    app = generated
    app.branches.rows[0].click()
    root = app.view.trace
    at = root.prompt_len + 1
    app.controls.temperature.value = 0.5
    app.view.selected = at
    deadline = time.monotonic() + JOB_TIMEOUT
    while app.readout.numbers is None and time.monotonic() < deadline:
        time.sleep(0.05)  # (the pinned panel's forward pass runs in its own thread)
    exact = np.exp(ref_logprobs(reference_model, root.token_ids[: at + 1].tolist(), temperature=0.5)[at - 1])
    model = np.exp(ref_logprobs(reference_model, root.token_ids[: at + 1].tolist())[at - 1])
    readout = app.readout.html.value
    assert "Exact" in readout and "approximation" not in readout
    cells = [html.unescape(c) for c in re.findall(r"<td>((?:&lt;)?[0-9.]+%)</td>", readout)]
    shown = [int(i) for i in root.top_ids[at]]

    def written(p):  # as the chart beside it writes a probability: "<0.1%" where 0.0 % would hide a non-zero p
        return "<0.1%" if 0 < p < 0.0005 else f"{p:.1%}"

    assert cells[0::2][: len(shown)] == [written(model[i]) for i in shown]
    assert cells[1::2][: len(shown)] == [written(exact[i]) for i in shown]
    app.controls.temperature.value = 0.0


def test_offline_html_holds_every_branch(generated):
    app = generated
    data = app._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    page = data["text/html"]
    # where this HTML is shown no live app renders: the note says what works here and where the rest does
    assert "static copy of the explorer" in page and "need the live app" in page
    assert page.count('class="lv-standalone"') == len(app.tree.nodes)


def test_stop_ends_a_long_branch_and_keeps_it(generated):
    app = generated
    root = app.tree.nodes[0]
    app.branches.rows[0].click()
    before = len(app.tree.nodes)
    app.controls.max_new_tokens.value = 300
    try:
        at = root.prompt_len + 1
        # The third choice there (" making"): its greedy continuation runs 300 tokens without an
        # EOS (the second, " nor", ends after 11, which a fast machine finishes before Stop).
        app.branch(at=at, token=int(root.top_ids[at][2]))
        # Stop while the job runs, however fast the machine: the runner checks for it after every
        # token, so the branch ends early whenever it is pressed (how many tokens it made is free).
        assert app.running and "Branch" in status(app), "the branch job did not start"
        app.controls.stop.click()
        finish(app)
    finally:
        app.controls.max_new_tokens.value = 10
    assert app.last_error is None, status(app)
    node = app.current
    assert len(app.tree.nodes) == before + 1 and node is app.tree.nodes[-1]
    assert len(node) - (at + 1) < 300 and node.meta.get("finish_reason") == "interrupted"
    assert "stopped" in status(app)


def test_compare_shows_the_branches_aligned(generated):
    app = generated
    root = app.tree.nodes[0]
    app.branch(at=root.prompt_len + 2, token=int(root.top_ids[root.prompt_len + 2][1]))
    finish(app)
    nodes = app.tree.nodes
    assert len(nodes) == 2
    app.branches.compare_button.click()
    assert app.last_error is None, status(app)
    (view,) = app.comparing.holder.children
    # in the tree panel below the view, in the outline's place (appearing there moves nothing above)
    children = list(app.widget.children)
    assert children.index(app.branches.box) > children.index(app.view)
    anchors = [c for c in app.branches.box.children if app.comparing.box in getattr(c, "children", ())]
    assert len(anchors) == 1 and app.branches.outline.layout.visibility == "hidden"
    assert view.labels == [f"#{i}" for i in range(len(nodes))]
    assert view.n_tokens == [len(n) for n in nodes]
    assert view.same_text is False  # the branches differ after their forks


def test_sampling_settings_reach_the_runner_and_the_view_shows_both_distributions(runner, reference_model):
    app = make_app(runner, temperature=0.7, seed=3, max_new_tokens=6)
    app.controls.generate.click()
    finish(app)
    assert app.last_error is None, status(app)
    trace = app.view.trace
    assert trace.meta["temperature"] == 0.7 and trace.meta["seed"] == 3
    raw = ref_logprobs(reference_model, trace.token_ids.tolist())
    tempered = ref_logprobs(reference_model, trace.token_ids.tolist(), temperature=0.7)
    for i in range(trace.prompt_len, len(trace)):
        token = trace.token_ids[i]
        assert abs(trace.logprobs[i] - raw[i - 1, token]) < 1e-4  # what the model gave
        assert abs(trace.processed_logprobs[i] - tempered[i - 1, token]) < 1e-4  # what was sampled from


def test_chat_messages_use_the_chat_template(runner, tokenizer):
    app = make_app(runner, prompt="Hi", chat=True, max_new_tokens=2)
    app.controls.generate.click()
    finish(app)
    assert app.last_error is None, status(app)
    messages = [{"role": "user", "content": "Hi"}]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    trace = app.view.trace
    assert trace.token_ids[: trace.prompt_len].tolist() == ids


def test_the_explore_notebook_runs_top_to_bottom():

    import nbformat
    from nbclient import NotebookClient

    folder = paths.NOTEBOOKS
    nb = nbformat.read(folder / "explore.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"], [o for o in outputs if o.output_type == "error"]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "#0" in printed and "#1" in printed
    last = nb.cells[-1].outputs[-1]["data"]
    assert "application/vnd.jupyter.widget-view+json" in last
    assert last["text/html"].count('class="lv-standalone"') == 2  # both branches, viewable without a kernel
