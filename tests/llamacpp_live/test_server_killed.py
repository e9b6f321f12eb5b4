"""A real llama-server killed by pid in the middle of a stream, a generate, an explorer's Generate
and Branch; then started again on the same port, and the same runner (and explorer) goes on.

The server killed is a second one, started here from the same build with its own pid/port/log
folder (`llamacpp.start(state=...)`), so the session's shared server stays up for other tests.
The independent side is the shared server's own greedy continuation (``/completion`` read with
plain json): same binary, same model, one slot each, so the kept tokens must be its first ones.
"""

from __future__ import annotations

import html
import os
import signal
import time
import warnings

import pytest

import logprob_viz as lv
from llamacpp_live.test_connect_llamacpp import ROBOT, TOL, native_greedy
from logprob_viz.sources.remote import ServerError

LONG = 400  # tokens asked for: the kill always comes first
# tokens per sample in the batch test: enough steps per sample that the runner's stop checks (where the
# test kills the server) come while samples are being made (with 3, an idle machine made all 8 first)
SAMPLE = 40


@pytest.fixture(scope="module")
def own(tmp_path_factory):
    """(url, restart, kill) of a llama-server of our own."""
    from logprob_viz.servers import llamacpp, process

    state = tmp_path_factory.mktemp("killed-llama")
    port = process.free_port()
    url = llamacpp.start(port=port, state=state, build_if_needed=False, timeout=120)

    def kill() -> None:
        pid = llamacpp.pid(state=state)
        assert pid is not None, "our llama-server is not running"
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while llamacpp.is_running(state=state) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not llamacpp.is_running(state=state), "the server outlived SIGKILL"

    def restart() -> None:
        assert llamacpp.start(port=port, state=state, build_if_needed=False, timeout=120) == url

    yield url, restart, kill
    llamacpp.stop(state=state)


def generated(trace) -> list[int]:
    return trace.token_ids[trace.prompt_len :].tolist()


def check_kept(trace, llamacpp_url: str, at_least: int, start: int | None = None) -> None:
    """Every token kept from `start` on (default: after the prompt) is the server's greedy token there,
    with its logprob."""
    start = trace.prompt_len if start is None else start
    ids = trace.token_ids[:start].tolist()
    kept = trace.token_ids[start:].tolist()
    assert at_least <= len(kept) < LONG, len(kept)
    reference = native_greedy(llamacpp_url, ids, len(kept), 3)
    assert kept == [p["id"] for p in reference]
    for got, p in zip(trace.logprobs[start:], reference, strict=True):
        assert abs(float(got) - p["logprob"]) < TOL


def check_error(meta: dict, url: str) -> None:
    assert meta["finish_reason"] == "error"
    error = meta["error"]
    assert url in error and ("broke off" in error or "before the end of the stream" in error), error
    assert "generate again" in error


def test_a_stream_whose_server_is_killed_ends_with_every_token_received(own, llamacpp_url):
    url, restart, kill = own
    runner = lv.connect(url)
    seen, killed = [], False
    with pytest.warns(RuntimeWarning, match="server failure"):
        for t in runner.stream(ROBOT, max_new_tokens=LONG, top_logprobs=3, stream_every=1):
            seen.append(t)
            if len(generated(t)) == 4 and not killed:  # once: the last item may hold 4 tokens too
                killed = True
                kill()
    last = seen[-1]
    check_error(last.meta, runner.base_url)
    check_kept(last, llamacpp_url, at_least=4)
    with pytest.raises(ServerError, match="connection refused"):  # down: said at once, nothing to keep
        runner.generate(ROBOT, max_new_tokens=4)
    restart()
    again = runner.generate(ROBOT, max_new_tokens=6, top_logprobs=3)  # the same runner goes on
    assert "error" not in again.meta and generated(again) == [p["id"] for p in native_greedy(llamacpp_url, ROBOT, 6, 3)]


def test_a_generate_whose_server_is_killed_returns_the_partial_trace_with_a_warning(own, llamacpp_url):
    url, restart, kill = own
    runner = lv.connect(url)
    steps = []

    def kill_at_the_fifth_step() -> bool:  # called by the runner between steps: a real kill at a known point
        steps.append(1)
        if len(steps) == 5:
            kill()
        return False

    with pytest.warns(RuntimeWarning, match="server failure"):
        trace = runner.generate(ROBOT, max_new_tokens=LONG, top_logprobs=3, stop=kill_at_the_fifth_step,
                                progress=False)
    check_error(trace.meta, runner.base_url)
    check_kept(trace, llamacpp_url, at_least=5)
    restart()


def wait_for(condition, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_explorer_keeps_what_it_showed_says_why_and_generates_again_once_the_server_is_back(own, llamacpp_url):
    from logprob_viz.views.explorer import explore

    url, restart, kill = own
    app = explore(ROBOT, runner=lv.connect(url), max_new_tokens=LONG, top_logprobs=3)
    app.controls.generate.click()
    wait_for(lambda: len(generated(app.view.trace)) >= 3)
    shown = len(generated(app.view.trace))
    kill()
    assert app.wait(120), "Generate did not end after the kill"
    root = app.tree.nodes[0]
    assert app.view.trace is root and app.current is root
    check_error(root.meta, app.runner.base_url)
    check_kept(root, llamacpp_url, at_least=shown)
    status = html.unescape(app.controls.status.value)
    assert "cut short" in status and "tokens received are kept" in status and root.meta["error"] in status, status
    assert app.last_error is not None and "ServerError" in app.last_error

    app.controls.generate.click()  # still down: a clear message, the tree as it was
    assert app.wait(120)
    assert "connection refused" in app.last_error and app.tree.nodes[0] is root

    restart()
    app.controls.max_new_tokens.value = 6
    app.controls.generate.click()
    assert app.wait(300) and app.last_error is None, app.controls.status.value
    assert generated(app.tree.nodes[0]) == [p["id"] for p in native_greedy(llamacpp_url, ROBOT, 6, 3)]

    # a Branch whose server is killed keeps what it made as a branch, and says so
    root = app.tree.nodes[0]
    at = root.prompt_len + 2
    app.view.selected = at
    app.branch_here.alternative.value = int(root.top_ids[at][1])
    app.controls.max_new_tokens.value = LONG
    app.branch_here.branch.click()
    time.sleep(1)  # the branch is a generate: a second of tokens (LONG takes ~4 s on an idle machine), then the kill
    kill()
    assert app.wait(120), "Branch did not end after the kill"
    if len(app.tree.nodes) == 2:  # tokens had arrived: the branch is kept, cut short
        node = app.tree.nodes[1]
        assert app.current is node and app.view.trace is node
        check_error(node.meta, app.runner.base_url)
        assert node.token_ids[:at].tolist() == root.token_ids[:at].tolist()
        check_kept(node, llamacpp_url, at_least=1, start=at + 1)  # after the forced token
        assert "cut short" in app.controls.status.value
    else:  # none had: the tree is unchanged and the status says why
        assert len(app.tree.nodes) == 1 and "ServerError" in app.last_error
    restart()


def test_a_batch_of_samples_whose_server_is_killed_keeps_the_finished_ones(own, llamacpp_url):
    url, restart, kill = own
    runner = lv.connect(url)
    root = runner.generate(ROBOT, max_new_tokens=4, top_logprobs=3)
    tree = lv.Tree(root, runner=runner)
    at = root.prompt_len + 1
    steps = []

    def kill_at_the_sixth_step() -> bool:  # a few samples in: the kill lands in one, or between two
        steps.append(1)
        if len(steps) == 6:
            kill()
        return False

    raised = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:  # temperature 0: every sample is the greedy continuation, which the shared server gives
            tree.sample(8, at=at, max_new_tokens=SAMPLE, temperature=0, stop=kill_at_the_sixth_step, progress=False)
        except ServerError as error:
            raised = error
    kept = tree.nodes[1:]
    assert 1 <= len(kept) < 8, "the samples made before the kill are kept, the others were not made"

    def generated(node) -> list[int]:  # a sample's own tokens: from the fork on (before it, the root's)
        return node.token_ids[at:].tolist()

    prefix = root.token_ids[:at].tolist()
    expected = [p["id"] for p in native_greedy(llamacpp_url, prefix, SAMPLE, 3)]
    for node in kept:
        assert node.token_ids[:at].tolist() == prefix
        assert generated(node) == expected[: len(generated(node))] and generated(node)
    words = " ".join(str(w.message) for w in caught)
    if raised is None:  # the kill cut a sample short: it is the last one kept, and says so
        check_error(kept[-1].meta, runner.base_url)
        assert all(len(generated(n)) == SAMPLE for n in kept[:-1]) and "server failure" in words
    else:  # the kill came between two samples: the next one was refused, the finished ones stay
        assert "connection refused" in str(raised) and all(len(generated(n)) == SAMPLE for n in kept)
        assert f"the {len(kept)} samples made before it were added to the tree" in words, words
    restart()
