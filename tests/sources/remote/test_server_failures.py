"""Servers that fail in the middle, on real sockets on 127.0.0.1: a stdlib HTTP server in a thread
that sends a real vLLM SSE answer's first events (tests/fixtures/vllm/completions_stream.json)
and then goes silent or hangs up, and one that answers 502 with a proxy's HTML page.

A stream keeps every token that arrived (`finish_reason` "error", ``meta["error"]`` says what
happened and what to do, with a warning), and so does `generate`, which streams under the hood (on
vLLM after scoring the prompt); a failure before anything arrived raises, naming it.
The kill of a real server (llama-server, by pid) is in tests/llamacpp_live/test_server_killed.py.
"""

from __future__ import annotations

import json
import threading
import warnings

import numpy as np
import pytest

import logprob_viz as lv
import paths
from local_http import QuietHandler, serve
from logprob_viz.sources.remote import ServerError

NOT_VLLM = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "someone"}]}
VLLM = {"object": "list", "data": [{"id": "HuggingFaceTB/SmolLM2-135M-Instruct", "object": "model",
                                    "owned_by": "vllm"}]}
PROXY_PAGE = ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway"
              "</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n<script>var x = '&lt;b&gt;';</script>"
              "</body>\r\n</html>\r\n" + "<!-- a padding comment -->\r\n" * 40)


def recorded_events() -> list[str]:
    """The SSE ``data:`` lines of the recording (8 token chunks, a last one, ``[DONE]``), as sent."""
    body = json.loads((paths.FIXTURES / "vllm" / "completions_stream.json").read_text())["body"]
    return [line for line in body.splitlines() if line.startswith("data:")]


def recording(name: str) -> dict:
    return json.loads((paths.FIXTURES / "vllm" / f"{name}.json").read_text())


class FailingServer:
    """Answers /v1/models, then POST /v1/completions with the first `send` SSE events and then
    `then`: "stall" (keeps the connection open, sends nothing), "hangup" (closes it), or a
    502 HTML page instead of any event ("502"). Listed as vLLM (``vllm=True``), it answers a
    request that is not a stream (the prompt's scoring) with a recorded vLLM prompt_logprobs answer."""

    def __init__(self, send: int, then: str, vllm: bool = False):
        self.release = threading.Event()
        self.bodies: list[dict] = []
        server = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.0"  # no length, no chunks: the body ends when the socket closes

            def do_GET(self):
                self.send(200, json.dumps(VLLM if vllm else NOT_VLLM).encode(), "application/json")

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                server.bodies.append(body)
                if not body.get("stream"):
                    return self.send(200, recording("completions_prompt_logprobs")["body"].encode())
                if then == "502":
                    return self.send(502, PROXY_PAGE.encode(), "text/html")
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for line in recorded_events()[:send]:
                    self.wfile.write(line.encode() + b"\n\n")
                self.wfile.flush()
                if then == "stall":
                    server.release.wait(30)  # silent, connection open, until the test ends

        self.httpd, self.url = serve(Handler)

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def failing():
    made = []

    def make(send, then, vllm=False):
        made.append(FailingServer(send, then, vllm))
        return made[-1]

    yield make
    for server in made:
        server.close()


def expected_tokens(n: int, field: str = "tokens") -> list:
    """The tokens (or token_ids) of the recording's first `n` events, read here without the package."""
    events = [json.loads(line[5:]) for line in recorded_events()[:n] if line.startswith("data: {")]
    if field == "token_ids":
        return [i for e in events for c in e["choices"] for i in c["token_ids"]]
    return [t for e in events for c in e["choices"] for t in c["logprobs"]["tokens"]]


def test_a_server_that_goes_silent_mid_stream_ends_it_with_the_tokens_received(failing):
    server = failing(send=3, then="stall")
    runner = lv.connect(server.url, timeout=1.5)
    with pytest.warns(RuntimeWarning, match="server failure after 3 tokens"):
        snapshots = list(runner.stream("A robot", max_new_tokens=8, top_logprobs=3, stream_every=1))
    last = snapshots[-1]
    assert last.tokens == expected_tokens(3) and len(snapshots) == 4, "3 snapshots, then the last one"
    assert last.meta["finish_reason"] == "error"
    error = last.meta["error"]
    assert "read timeout" in error and "1.5 s" in error and "timeout=" in error, error
    assert server.url in error and "3 tokens received" in error and "generate again" in error


def test_a_server_that_hangs_up_mid_stream_ends_it_with_the_tokens_received(failing):
    server = failing(send=5, then="hangup")
    runner = lv.connect(server.url, timeout=10)
    with pytest.warns(RuntimeWarning, match="after 5 tokens"):
        last = list(runner.stream("A robot", max_new_tokens=8, top_logprobs=3))[-1]
    assert last.tokens == expected_tokens(5)
    assert last.meta["finish_reason"] == "error" and "before the end of the stream" in last.meta["error"]


def test_a_server_that_hangs_up_before_any_token_raises_naming_it(failing):
    server = failing(send=0, then="hangup")
    runner = lv.connect(server.url, timeout=10)
    for call in (lambda: list(runner.stream("A robot", max_new_tokens=8, top_logprobs=3)),
                 lambda: runner.generate("A robot", max_new_tokens=8, top_logprobs=3, progress=False)):
        with pytest.raises(ServerError, match="before the end of the stream") as err:
            call()
        assert server.url in str(err.value)


def test_a_502_html_page_is_its_status_and_a_short_plain_text_excerpt(failing):
    server = failing(send=0, then="502")
    runner = lv.connect(server.url, timeout=10)
    for call in (lambda: runner.generate("A robot", max_new_tokens=4),
                 lambda: list(runner.stream("A robot", max_new_tokens=4))):
        with pytest.raises(ServerError) as err:
            call()
        message = str(err.value)
        assert "HTTP 502" in message and "Bad Gateway" in message and "nginx/1.25.3" in message, message
        assert "<" not in message and "var x" not in message, "the page's words, never its markup or script"
        assert len(message) < 400 and err.value.status == 502


def test_the_stream_that_ended_well_has_no_error(failing):
    every = len(recorded_events())
    server = failing(send=every, then="hangup")  # every event, [DONE] included
    last = list(lv.connect(server.url).stream("A robot", max_new_tokens=8, top_logprobs=3))[-1]
    assert last.tokens == expected_tokens(every) and len(last) == 8 and "error" not in last.meta
    assert last.meta["finish_reason"] != "error"


# -- generate streams under the hood: what arrived is kept there too ------------------------------


@pytest.mark.parametrize("then", ["hangup", "stall"])
def test_a_generate_whose_server_fails_mid_answer_returns_the_tokens_received_with_a_warning(failing, then):
    server = failing(send=5, then=then)
    runner = lv.connect(server.url, timeout=1.5)
    with pytest.warns(RuntimeWarning, match="server failure after 5 tokens"):
        trace = runner.generate("A robot", max_new_tokens=8, top_logprobs=3, progress=False)
    assert server.bodies[-1]["stream"] is True, "generate asked for a stream"
    assert trace.tokens == expected_tokens(5) and trace.token_ids.tolist() == expected_tokens(5, "token_ids")
    assert trace.meta["finish_reason"] == "error"
    error = trace.meta["error"]
    assert server.url in error and "5 tokens received" in error and "generate again" in error, error
    assert ("before the end of the stream" if then == "hangup" else "read timeout") in error, error


def test_a_vllm_generate_whose_server_hangs_up_keeps_the_scored_prompt_and_the_tokens_received(failing):
    server = failing(send=4, then="hangup", vllm=True)
    runner = lv.connect(server.url, timeout=10)
    with pytest.warns(RuntimeWarning, match="server failure after 4 tokens"):
        trace = runner.generate("A robot may not injure a human being", max_new_tokens=8, top_logprobs=3,
                                progress=False)
    scored, streamed = server.bodies
    assert scored["prompt_logprobs"] == 3 and scored["max_tokens"] == 0 and streamed["stream"] is True
    prompt = json.loads(recording("completions_prompt_logprobs")["body"])["choices"][0]
    assert trace.prompt_len == len(prompt["prompt_token_ids"])
    assert trace.token_ids.tolist() == prompt["prompt_token_ids"] + expected_tokens(4, "token_ids")
    assert trace.tokens[trace.prompt_len:] == expected_tokens(4)
    assert trace.meta["finish_reason"] == "error" and "before the end of the stream" in trace.meta["error"]


def test_a_generate_streamed_under_the_hood_equals_the_servers_whole_answer(failing):
    # the same server (vLLM 0.32, the default model) asked the same greedy request whole, for 16 tokens at
    # K=5 (tests/fixtures/vllm/completions_greedy_k5.json): its first 8 tokens, their logprobs and top 3
    server = failing(send=len(recorded_events()), then="hangup")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a stream that ended well: no warning
        trace = lv.connect(server.url).generate("A robot may not injure a human being", max_new_tokens=8,
                                                top_logprobs=3, progress=False)
    whole = json.loads(recording("completions_greedy_k5")["body"])["choices"][0]
    lp = whole["logprobs"]
    assert trace.tokens == lp["tokens"][:8] and trace.token_ids.tolist() == whole["token_ids"][:8]
    assert trace.logprobs.tolist() == [float(np.float32(v)) for v in lp["token_logprobs"][:8]]
    for row, (tokens, values) in enumerate(zip(trace.top_tokens, trace.top_logprobs.tolist(), strict=True)):
        top3 = sorted(lp["top_logprobs"][row].items(), key=lambda kv: -kv[1])[:3]
        assert tokens == [t for t, _ in top3] and values == [float(np.float32(v)) for _, v in top3]
    assert trace.meta["finish_reason"] == whole["finish_reason"] == "length" and "error" not in trace.meta
