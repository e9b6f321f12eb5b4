"""Jobs on one runner, on the real default model: two explorers, a cell calling ``runner.generate``
while an explorer streams, Generate pressed twice, Branch during Generate.

What is claimed: one job at a time per runner (the others wait, and say what for), a second job
in one explorer is refused with a status that names the running one, nothing deadlocks, and
every trace is the model's own greedy continuation of its own prompt (checked against the
default model loaded a second time with plain transformers), so no job corrupted another's.
"""

from __future__ import annotations

import html
import re
import threading
import time
import warnings

import pytest

from logprob_viz.sources.runner import jobs_of

ROBOT = "A robot may not injure a human being"
FRANCE = "The capital of France is"
JOB_TIMEOUT = 600  # s: 2 shared cores


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())


def reference(model, tokenizer, prompt: str, n: int) -> list[int]:
    """The model's own greedy continuation (transformers' generate), cut after an end token."""
    import torch

    ids = tokenizer(prompt)["input_ids"]
    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False, pad_token_id=0)
    new = out[0, len(ids) :].tolist()
    eos = tokenizer.eos_token_id
    return new[: new.index(eos) + 1] if eos in new else new


def generated(trace) -> list[int]:
    return trace.token_ids[trace.prompt_len :].tolist()


def status(app) -> str:
    """The status line's text, as the person reads it."""
    return html.unescape(re.sub(r"<[^>]*>", "", app.controls.status.value))


def wait_for(condition, what: str, timeout: float = JOB_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def make(runner, prompt: str, n: int):
    from logprob_viz.views.explorer import explore

    return explore(prompt, runner=runner, max_new_tokens=n, top_logprobs=5)


def test_two_explorers_on_one_runner_take_turns(runner, reference_model, tokenizer):
    first, second = make(runner, ROBOT, 30), make(runner, FRANCE, 12)
    first.controls.generate.click()
    wait_for(lambda: jobs_of(runner).holder == "an explorer's Generate", "the first explorer holds the runner")
    second.controls.generate.click()
    wait_for(lambda: "waiting for the runner" in status(second), "the second explorer says it waits")
    assert "an explorer's Generate is using it" in status(second) and "Stop cancels" in status(second)
    assert first.running, "the second waits while the first runs"
    assert first.wait(JOB_TIMEOUT) and second.wait(JOB_TIMEOUT), "a deadlock: the jobs did not end"
    assert first.last_error is None and second.last_error is None, (status(first), status(second))
    assert generated(first.tree.nodes[0]) == reference(reference_model, tokenizer, ROBOT, 30)
    assert generated(second.tree.nodes[0]) == reference(reference_model, tokenizer, FRANCE, 12)
    assert not jobs_of(runner).busy


def test_stop_ends_the_wait_of_an_explorer_and_nothing_runs(runner):
    first, second = make(runner, ROBOT, 30), make(runner, FRANCE, 12)
    first.controls.generate.click()
    wait_for(lambda: jobs_of(runner).busy, "the first explorer holds the runner")
    second.controls.generate.click()
    wait_for(lambda: "waiting for the runner" in status(second), "the second explorer says it waits")
    second.controls.stop.click()
    assert second.wait(60), "Stop did not end the wait"
    assert "was not started: stopped while waiting" in status(second) and second.tree is None
    assert first.running or first.tree is not None  # the first went on, untouched by the other's Stop
    assert first.wait(JOB_TIMEOUT) and first.last_error is None and len(generated(first.tree.nodes[0])) == 30


def test_a_cell_calling_generate_while_an_explorer_streams_waits_its_turn(runner, reference_model, tokenizer):
    """The cell waits, and (its wait being longer than a blink) says so in a warning that names the
    cell's own line, not a file of the package."""
    app = make(runner, ROBOT, 90)  # several seconds of streaming: the cell's wait outlasts the 1 s notice delay
    app.controls.generate.click()
    wait_for(lambda: len(generated(app.view.trace)) >= 2, "tokens reach the view")
    with pytest.warns(RuntimeWarning, match="generate waits for the runner, which is busy with an explorer's "
                      "Generate") as caught:
        mine = runner.generate(FRANCE, max_new_tokens=8, top_logprobs=5, progress=False)
    assert {w.filename for w in caught if "waits for the runner" in str(w.message)} == {__file__}
    # the cell went on only once the explorer's job had finished with the runner
    assert app.tree is not None and len(generated(app.tree.nodes[0])) == 90
    assert generated(mine) == reference(reference_model, tokenizer, FRANCE, 8)
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, status(app)
    assert generated(app.tree.nodes[0]) == reference(reference_model, tokenizer, ROBOT, 90)


def test_a_blink_of_a_wait_gives_no_warning(runner):
    """A cell that waits less than the notice delay (here for a held lock let go after 0.3 s) says nothing."""
    jobs = jobs_of(runner)
    held = threading.Event()

    def hold_briefly():
        with jobs.hold("a short job"):
            held.set()
            time.sleep(0.3)

    thread = threading.Thread(target=hold_briefly)
    thread.start()
    held.wait(10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        runner.score("A short wait.", top_logprobs=1, progress=False)
    thread.join()


def test_generate_pressed_twice_and_branch_during_generate_are_refused_with_a_clear_status(
        runner, reference_model, tokenizer):
    app = make(runner, ROBOT, 6)
    app.controls.generate.click()
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, status(app)
    before = app.tree
    at = before.nodes[0].prompt_len + 1
    app.view.selected = at  # pinned, an alternative picked: Branch is ready to press
    app.branch_here.alternative.value = int(before.nodes[0].top_ids[at][1])

    app.controls.max_new_tokens.value = 30
    app.controls.generate.click()
    wait_for(lambda: app.running and jobs_of(runner).busy, "Generate runs")
    app.controls.generate.click()  # a second press, as Python's click() sends it even to a disabled button
    assert "Generate was not started: Generate is running" in app.last_error
    assert "Generate was not started: Generate is running" in status(app)
    app.branch_here.branch.click()
    assert "Branch was not started: Generate is running; press Branch again when it has finished" in status(app)
    assert app.wait(JOB_TIMEOUT), "a deadlock: Generate did not end"
    final = status(app)
    assert final.startswith("Generated 30 tokens") and "Branch was not started" in final, final
    # one job ran, on one tree: the new generation, no branch grafted onto it, no corrupted numbers
    assert app.tree is not before and len(app.tree.nodes) == 1
    assert generated(app.tree.nodes[0]) == reference(reference_model, tokenizer, ROBOT, 30)
    root = app.tree.nodes[0]
    app.view.selected = at
    app.branch_here.alternative.value = alternative = int(root.top_ids[at][1])
    app.branch_here.branch.click()  # afterwards the same press works
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, status(app)
    assert len(app.tree.nodes) == 2 and int(app.current.token_ids[at]) == alternative


def test_the_runner_inside_its_own_stream_loop_and_a_stream_left_early_never_deadlock(runner, reference_model,
                                                                                      tokenizer):
    inner, snapshots = None, []
    for snapshot in runner.stream(ROBOT, max_new_tokens=4, top_logprobs=3):
        snapshots.append(snapshot)
        if inner is None:  # the same thread holds the runner: it goes on, no deadlock
            inner = runner.generate(FRANCE, max_new_tokens=3, top_logprobs=3, progress=False)
    assert generated(snapshots[-1]) == reference(reference_model, tokenizer, ROBOT, 4)
    assert generated(inner) == reference(reference_model, tokenizer, FRANCE, 3)
    stream = runner.stream(ROBOT, max_new_tokens=20, top_logprobs=3)
    next(stream)
    assert jobs_of(runner).busy
    stream.close()  # a loop left early (break) closes its stream: the runner is free again
    assert not jobs_of(runner).busy
