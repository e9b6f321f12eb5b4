"""A real vLLM server killed by pid in the middle of a stream, then started again: the stream
keeps every token it received and says why it ends there, a call while the server is down says
so at once, and the same runner goes on once the server is back.

The server killed is a second one, started here from the suite's install with its own pid/port/
log folder (`vllm.start(state=...)`), so the shared server stays up. The independent side is the
shared server's own greedy answer (``/v1/completions`` read with plain json and urllib).
"""

from __future__ import annotations

import json
import os
import signal
import time
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
        vllm_url, tmp_path):
    from logprob_viz.servers import process
    from logprob_viz.servers import vllm as vllm_server

    port = process.free_port()
    url = vllm_server.start(port=port, state=tmp_path, install_if_needed=False, timeout=600)
    try:
        runner = lv.connect(url)
        seen, killed = [], False
        with pytest.warns(RuntimeWarning, match="server failure"):
            for t in runner.stream(ROBOT, max_new_tokens=LONG, top_logprobs=3, stream_every=1):
                seen.append(t)
                if len(generated(t)) >= 4 and not killed:
                    killed = True
                    os.killpg(vllm_server.pid(state=tmp_path), signal.SIGKILL)  # the server and its engine
        last = seen[-1]
        assert last.meta["finish_reason"] == "error" and url in last.meta["error"], last.meta
        kept = generated(last)
        assert 4 <= len(kept) < LONG and kept == served_greedy(vllm_url, len(kept))
        deadline = time.monotonic() + 30
        while vllm_server.is_running(state=tmp_path) and time.monotonic() < deadline:
            time.sleep(0.1)
        with pytest.raises(ServerError, match="connection refused"):
            runner.generate(ROBOT, max_new_tokens=4)

        assert vllm_server.start(port=port, state=tmp_path, install_if_needed=False, timeout=600) == url
        again = list(runner.stream(ROBOT, max_new_tokens=6, top_logprobs=3))[-1]
        assert "error" not in again.meta and generated(again) == served_greedy(vllm_url, 6)
    finally:
        vllm_server.stop(state=tmp_path)
