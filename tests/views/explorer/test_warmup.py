"""The explorer's background warm-up (views/explorer/warmup.py), on the real default model: a fresh
local runner's one-time costs are paid when the app opens, holding the runner's job lock, so a
Generate pressed meanwhile waits for it and says so; nothing it does changes what Generate gives
(checked against the default model loaded a second time with plain transformers, greedy).
"""

from __future__ import annotations

import html
import re
import threading
import time

import pytest

from logprob_viz.sources.runner import jobs_of
from logprob_viz.views.explorer.warmup import THREAD_NAME, WARM_UP

PROMPT = "A robot may not injure a human being"
JOB_TIMEOUT = 600  # s: 2 shared cores


def fresh(runner):
    """A new runner on the session's model: its vocabulary table not built, never warmed up."""
    from logprob_viz.sources.local.runner import TransformersRunner

    return TransformersRunner(runner.model, runner.tokenizer)


def warm_up_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD_NAME]


@pytest.fixture(autouse=True)
def _no_earlier_warm_up():
    """The warm-ups of explorers opened by earlier tests in this process ended first: each test here
    counts the warm-up threads of its own explorer (which tests ran before depends on the order)."""
    for thread in warm_up_threads():
        thread.join(JOB_TIMEOUT)
    assert not warm_up_threads(), "an earlier test's warm-up did not end"


def status(app) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", app.controls.status.value))


def make(runner, n: int = 6):
    from logprob_viz.views.explorer import explore

    return explore(PROMPT, runner=runner, max_new_tokens=n, top_logprobs=5)


def greedy(model, tokenizer, prompt: str, n: int) -> list[int]:
    import torch

    ids = tokenizer(prompt)["input_ids"]
    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), max_new_tokens=n, do_sample=False, pad_token_id=0)
    return out[0, len(ids):].tolist()


def test_opening_the_app_warms_a_fresh_runner_up_and_changes_nothing_generate_gives(runner, reference_model):
    local = fresh(runner)
    assert local.engine._vocab is None
    app = make(local)
    # explore() returned with the warm-up holding the runner: a click now can only wait for it
    assert jobs_of(local).holder == WARM_UP
    (thread,) = warm_up_threads()
    thread.join(JOB_TIMEOUT)
    assert not thread.is_alive() and not jobs_of(local).busy, "the warm-up gave the runner back"
    assert local.engine._vocab is not None, "the vocabulary's byte table (a first run's cost) was built by the warm-up"
    assert app.tree is None and status(app).startswith("Ready"), "the person sees nothing of it"
    app.controls.generate.click()
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, status(app)
    got = app.tree.nodes[0]
    assert got.token_ids[got.prompt_len:].tolist() == greedy(reference_model, local.tokenizer, PROMPT, 6)


def test_a_generate_pressed_during_the_warm_up_waits_for_it_and_says_what_for(runner, reference_model):
    local = fresh(runner)
    app = make(local)
    app.controls.generate.click()  # at once: the warm-up still holds the runner
    deadline = time.monotonic() + JOB_TIMEOUT
    while "waiting for the runner" not in status(app) and app.running:
        assert time.monotonic() < deadline, status(app)
        time.sleep(0.01)
    seen = status(app)
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, status(app)
    assert f"{WARM_UP} is using it" in seen, seen
    got = app.tree.nodes[0]
    assert got.token_ids[got.prompt_len:].tolist() == greedy(reference_model, local.tokenizer, PROMPT, 6)


def test_no_warm_up_when_turned_off_nor_twice_for_one_runner(runner, monkeypatch):
    local = fresh(runner)
    monkeypatch.setenv("LOGPROB_VIZ_WARM_UP", "0")
    make(local)
    assert not warm_up_threads() and not jobs_of(local).busy and local.engine._vocab is None
    monkeypatch.delenv("LOGPROB_VIZ_WARM_UP")
    make(local)
    (thread,) = warm_up_threads()
    thread.join(JOB_TIMEOUT)
    make(local)  # a second explorer on the runner: already warm
    assert not warm_up_threads() and not jobs_of(local).busy


def test_no_warm_up_on_a_runner_another_job_holds(runner):
    local = fresh(runner)
    with jobs_of(local).hold("a cell's generate"):
        make(local)
        assert not warm_up_threads(), "whatever holds the runner pays the first run's costs itself"
        assert jobs_of(local).holder == "a cell's generate"
    assert local.engine._vocab is None
