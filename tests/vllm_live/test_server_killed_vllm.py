"""A real vLLM server killed by pid in the middle of a stream, then started again: the stream
keeps every token it received and says why it ends there, a call while the server is down says
so at once, and the same runner goes on once the server is back; killed again in the middle of a
`generate` (which streams under the hood), it returns the scored prompt and the tokens received.

The server killed is the suite's second one (conftest.py's `second_vllm`: its own pid/port/log
folder, `vllm.start(state=...)`), so the shared server stays up. The independent side is the
shared server's own greedy answer (``/v1/completions`` read with plain json and urllib).
"""

from __future__ import annotations

import json
import urllib.request

import pytest

import logprob_viz as lv
from logprob_viz.sources.remote import ServerError

ROBOT = "A robot may not injure a human being"
MODEL = "HuggingFaceTB/SmolLM2-135M-Instruct"
LONG = 400  # tokens asked for: the kill always comes first


def served_greedy(base_url: str, n: int) -> list[int]:
    body = json.dumps({"model": MODEL, "prompt": ROBOT, "max_tokens": n, "temperature": 0,
                       "return_token_ids": True}).encode()
    request = urllib.request.Request(base_url + "/completions", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=300) as r:
        return json.load(r)["choices"][0]["token_ids"]


def generated(trace) -> list[int]:
    return trace.token_ids[trace.prompt_len :].tolist()


def test_a_vllm_stream_whose_server_is_killed_keeps_what_arrived_and_the_restarted_server_goes_on(
        vllm_url, second_vllm):
    kill, restart = second_vllm.kill, second_vllm.restart
    url = second_vllm.up()
    runner = lv.connect(url)
    seen, killed = [], False
    with pytest.warns(RuntimeWarning, match="server failure"):
        for t in runner.stream(ROBOT, max_new_tokens=LONG, top_logprobs=3, stream_every=1):
            seen.append(t)
            if len(generated(t)) >= 4 and not killed:
                killed = True
                kill()
    last = seen[-1]
    assert last.meta["finish_reason"] == "error" and url in last.meta["error"], last.meta
    kept = generated(last)
    assert 4 <= len(kept) < LONG and kept == served_greedy(vllm_url, len(kept))
    with pytest.raises(ServerError, match="connection refused"):
        runner.generate(ROBOT, max_new_tokens=4)

    restart()
    again = list(runner.stream(ROBOT, max_new_tokens=6, top_logprobs=3))[-1]
    assert "error" not in again.meta and generated(again) == served_greedy(vllm_url, 6)


def test_a_vllm_generate_whose_server_is_killed_returns_the_partial_trace_with_a_warning(vllm_url, second_vllm):
    kill = second_vllm.kill
    url = second_vllm.up()
    runner = lv.connect(url)
    runner.generate(ROBOT, max_new_tokens=2, top_logprobs=3)  # the server answers
    steps = []

    def kill_at_the_fifth_step() -> bool:  # called by the runner between steps: a real kill at a known point
        steps.append(1)
        if len(steps) == 5:
            kill()
        return False

    with pytest.warns(RuntimeWarning, match="server failure"):
        trace = runner.generate(ROBOT, max_new_tokens=LONG, top_logprobs=3, stop=kill_at_the_fifth_step,
                                progress=False)
    assert trace.meta["finish_reason"] == "error" and url in trace.meta["error"], trace.meta
    assert "generate again" in trace.meta["error"]
    kept = generated(trace)
    assert 1 <= len(kept) < LONG and kept == served_greedy(vllm_url, len(kept))
    assert trace.prompt_len > 0 and trace.tokens[0] == "A"  # the scored prompt is kept with them
