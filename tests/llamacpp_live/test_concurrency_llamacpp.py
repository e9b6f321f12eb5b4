"""Jobs on one runner on the real llama-server: two explorers and a cell on one `lv.connect`
runner take turns (the others wait and say what for), a second job in one explorer is refused,
and every trace is the server's own greedy continuation of its own prompt (``/completion`` read
with plain json), so no job corrupted another's.
"""

from __future__ import annotations

import html
import re
import threading
import time

import pytest

import logprob_viz as lv
from llamacpp_live.test_connect_llamacpp import ROBOT, native_greedy
from logprob_viz.sources.runner import jobs_of

FRANCE = "The capital of France is"


def generated(trace) -> list[int]:
    return trace.token_ids[trace.prompt_len :].tolist()


def status(app) -> str:
    return html.unescape(re.sub(r"<[^>]*>", "", app.controls.status.value))


def wait_for(condition, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def greedy_ids(url: str, prompt: str, n: int) -> list[int]:
    return [p["id"] for p in native_greedy(url, prompt, n, 3)]


def stop_once_warned(app, said, timeout: float = 300) -> None:
    """Stop `app` once the cell's call has warned that it waits (its warnings are recorded in `said`)."""
    wait_for(lambda: len(said) > 0 or not app.running, "the cell says it waits", timeout)
    app.stop()


def test_two_explorers_and_a_cell_on_one_server_runner_take_turns(llamacpp_url):
    from logprob_viz.views.explorer import explore

    runner = lv.connect(llamacpp_url)
    # the first runs until the cell has said it waits (> 1 s), then is stopped: however fast the server
    first = explore(ROBOT, runner=runner, max_new_tokens=1500, top_logprobs=3)
    second = explore(FRANCE, runner=runner, max_new_tokens=8, top_logprobs=3)
    first.controls.generate.click()
    wait_for(lambda: len(generated(first.view.trace)) >= 2, "the first explorer streams")
    second.controls.generate.click()
    wait_for(lambda: "waiting for the runner" in status(second), "the second explorer says it waits")
    first.controls.generate.click()  # pressed twice: refused, named
    assert "Generate was not started: Generate is running" in first.last_error
    waits = "generate waits for the runner, which is busy with an explorer's Generate"
    with pytest.warns(RuntimeWarning, match=waits) as said:
        stopper = threading.Thread(target=stop_once_warned, args=(first, said), daemon=True)
        stopper.start()
        mine = runner.generate(ROBOT, max_new_tokens=5, top_logprobs=3)
    assert first.wait(300) and second.wait(300), "a deadlock: the jobs did not end"
    assert second.last_error is None, status(second)
    first_ids = generated(first.tree.nodes[0])
    assert 2 <= len(first_ids) < 1500, "the first explorer was not stopped while the cell waited"
    assert first_ids == greedy_ids(llamacpp_url, ROBOT, len(first_ids))
    assert generated(second.tree.nodes[0]) == greedy_ids(llamacpp_url, FRANCE, 8)
    assert generated(mine) == greedy_ids(llamacpp_url, ROBOT, 5)
    assert not jobs_of(runner).busy
