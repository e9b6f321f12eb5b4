"""lv.connect: every failure names the server and the cause; bad arguments fail before a request.

These run without vLLM, against real sockets on 127.0.0.1: a port nobody listens on, a server
that accepts and never answers, and a small stdlib HTTP server that answers like an
OpenAI-compatible one (the real vLLM server's answers are tested in tests/vllm_live/).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import logprob_viz as lv
import paths
from logprob_viz.servers.process import free_port
from logprob_viz.sources.remote import ServerError


class Fake:
    """An HTTP server on 127.0.0.1 answering each path with a (status, body) pair; counts requests."""

    def __init__(self, routes: dict):
        self.routes, self.requests = routes, []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                fake.requests.append((self.command, self.path, json.loads(self.rfile.read(n)) if n else None))
                status, body = fake.routes.get(self.path, (404, {"error": {"message": f"no route {self.path}"}}))
                data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# vLLM's answer (echo, prompt_logprobs, token ids) for the prompt token 7 ("a") and one new token 8 ("b")
ONE_TOKEN_ANSWER = {
    "id": "cmpl-0123456789abcdef", "object": "text_completion", "model": "m",
    "choices": [{"index": 0, "text": "b",
                 "logprobs": {"tokens": ["a", "b"], "token_logprobs": [None, -0.5], "top_logprobs": [None, {"b": -0.5}],
                              "text_offset": [0, 1]},
                 "prompt_logprobs": [None], "prompt_token_ids": [7], "token_ids": [8]}],
}
MODELS = (200, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "vllm"}]})


@pytest.fixture
def fake():
    servers = []

    def make(routes):
        servers.append(Fake({"/v1/models": MODELS, **routes}))
        return servers[-1]

    yield make
    for s in servers:
        s.close()


def test_connection_refused_names_the_server_and_how_to_start_one():
    url = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ServerError, match="connection refused") as err:
        lv.connect(url)
    assert url in str(err.value) and "logprob_viz.servers.vllm start" in str(err.value)


def test_a_server_that_never_answers_times_out_with_the_limit_in_the_message():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)  # accepts connections (the kernel does), never answers
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    try:
        with pytest.raises(ServerError, match=r"did not answer GET /models within 0.5 s|no answer within 0.5 s") as err:
            lv.connect(url, timeout=0.5)
        assert url in str(err.value)
    finally:
        sock.close()


def test_http_errors_carry_the_servers_message(fake):
    error = {"error": {"message": "CPU KV cache is full", "type": "InternalServerError", "code": 500}}
    s = fake({"/v1/completions": (500, error)})
    runner = lv.connect(s.url)
    with pytest.raises(ServerError, match="answered HTTP 500 to POST /completions: CPU KV cache is full") as err:
        runner.generate("hi")
    assert err.value.status == 500 and s.url in str(err.value)


def test_an_error_body_with_status_200_and_a_non_json_answer(fake):
    s = fake({"/v1/completions": (200, {"error": {"message": "model overloaded"}}),
              "/v1/chat/completions": (502, "<html>Bad gateway</html>")})
    runner = lv.connect(s.url)
    with pytest.raises(ServerError, match="returned an error for POST /completions: model overloaded"):
        runner.generate("hi")
    with pytest.raises(ServerError, match="HTTP 502 .*Bad gateway"):
        runner.generate(messages=[{"role": "user", "content": "hi"}])


def test_top_logprobs_over_the_cap_fails_before_any_request(fake):
    s = fake({})
    runner = lv.connect(s.url)
    before = len(s.requests)
    for call in (lambda: runner.generate("hi", top_logprobs=21), lambda: runner.score("hi", top_logprobs=50),
                 lambda: runner.generate(messages=[{"role": "user", "content": "hi"}], top_logprobs=-1)):
        with pytest.raises(ValueError, match="top_logprobs must be an int between 0 and 20 for this server"):
            call()
    assert len(s.requests) == before


def test_arguments_are_checked_like_the_local_runner(fake):
    runner = lv.connect(fake({}).url)
    with pytest.raises(ValueError, match="not both"):
        runner.generate("a", messages=[{"role": "user", "content": "b"}])
    with pytest.raises(ValueError, match="temperature"):
        runner.generate("a", temperature=-1)
    with pytest.raises(ValueError, match="top_p"):
        runner.generate("a", top_p=0)
    with pytest.raises(ValueError, match="does not serve 'other'"):
        lv.connect(runner.base_url, model="other")
    with pytest.raises(ValueError, match="http"):
        lv.connect("127.0.0.1:8011")


def test_requests_ask_vllm_for_prompt_logprobs_token_ids_and_explicit_greedy(fake):
    body = ONE_TOKEN_ANSWER
    s = fake({"/v1/completions": (200, body)})
    runner = lv.connect(s.url)
    t = runner.generate("a", max_new_tokens=1, top_logprobs=1)
    # generate streams (so a server that dies in the middle leaves what it sent): the prompt is scored
    # first (vLLM refuses prompt_logprobs in a stream), then the completion streams
    (_, _, scored), (_, _, streamed) = s.requests[-2:]
    assert scored["echo"] is True and scored["max_tokens"] == 0
    assert scored["prompt_logprobs"] == 1 and scored["return_token_ids"]
    assert streamed["stream"] is True and streamed["temperature"] == 0.0 and streamed["return_token_ids"]
    assert t.tokens == ["a", "b"] and t.prompt_len == 1 and t.token_ids.tolist() == [7, 8]
    assert t.meta["source"] == "vllm" and t.meta["base_url"] == s.url and t.meta["do_sample"] is False
    runner.generate("a", temperature=0.7, seed=3, top_k=5, max_new_tokens=1, top_logprobs=1)
    sent = s.requests[-1][2]
    assert (sent["temperature"], sent["top_p"], sent["top_k"], sent["seed"]) == (0.7, 1.0, 5, 3)


def test_vllm_server_cli_reports_no_server(tmp_path):
    env = {"LOGPROB_VIZ_VLLM_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    cli = [sys.executable, "-m", "logprob_viz.servers.vllm"]
    out = subprocess.run([*cli, "url"], capture_output=True, text=True, env=env)
    assert out.returncode == 1 and str(tmp_path) in out.stderr
    out = subprocess.run([*cli, "stop"], capture_output=True, text=True, env=env)
    assert out.returncode == 0 and "no server was running" in out.stdout
    from logprob_viz.servers import vllm as vllm_server

    with pytest.raises(vllm_server.VLLMServerError, match="not installed"):
        vllm_server.start(root=tmp_path, install_if_needed=False)


def recorded_stream():
    """A real vLLM 0.32 SSE answer (tests/fixtures/vllm/completions_stream.json): 8 tokens, one per chunk."""

    return json.loads((paths.FIXTURES / "vllm" / "completions_stream.json").read_text())["body"]


# A server that is not vLLM: the stream is the one request (a vLLM stream first scores the prompt,
# since vLLM refuses prompt_logprobs in a stream; that path runs in tests/vllm_live/).
NOT_VLLM = (200, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "someone"}]})


def test_stream_reads_the_servers_sse_and_grows(fake):
    body = recorded_stream()
    s = fake({"/v1/completions": (200, body), "/v1/models": NOT_VLLM})
    runner = lv.connect(s.url)
    snapshots = list(runner.stream("A robot may not injure a human being", max_new_tokens=8, top_logprobs=3,
                                   stream_every=1))
    sent = s.requests[-1][2]
    assert sent["stream"] is True and sent["logprobs"] == 3 and "prompt_logprobs" not in sent
    assert [r[1] for r in s.requests] == ["/v1/models", "/v1/completions"]
    assert [len(t) for t in snapshots] == [1, 2, 3, 4, 5, 6, 7, 8, 8], "a snapshot per chunk, then the final trace"
    final = snapshots[-1]
    # The tokens and logprobs the recording carries, read here without the adapter.
    events = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data: {")]
    choices = [e["choices"][0] for e in events if e.get("choices")]
    assert final.tokens == [t for c in choices for t in c["logprobs"]["tokens"]]
    assert final.token_ids.tolist() == [i for c in choices for i in c["token_ids"]]
    assert final.logprobs.tolist() == pytest.approx([x for c in choices for x in c["logprobs"]["token_logprobs"]])
    assert final.meta["base_url"] == s.url and final.meta["max_new_tokens"] == 8 and final.meta["do_sample"] is False


def test_stream_stop_keeps_what_arrived(fake):
    import threading

    s = fake({"/v1/completions": (200, recorded_stream()), "/v1/models": NOT_VLLM})
    runner = lv.connect(s.url)
    stop, seen = threading.Event(), []
    for t in runner.stream("A robot", max_new_tokens=8, top_logprobs=3, stream_every=1, stop=stop):
        seen.append(t)
        if len(seen) == 3:
            stop.set()
    assert seen[-1].meta["finish_reason"] == "interrupted" and len(seen[-1]) == 4


def test_prompt_ids_go_to_completions_as_a_list_on_vllm_only(fake):
    body = ONE_TOKEN_ANSWER
    s = fake({"/v1/completions": (200, body)})
    t = lv.connect(s.url).generate(prompt_ids=[7], max_new_tokens=1, top_logprobs=1)
    assert s.requests[-1][2]["prompt"] == [7] and t.meta["prompt_ids"] == [7] and t.token_ids.tolist() == [7, 8]
    listed = {"object": "list", "data": [{"id": "gpt", "object": "model", "owned_by": "openai"}]}
    other = fake({"/v1/models": (200, listed)})
    runner = lv.connect(other.url)
    before = len(other.requests)
    with pytest.raises(ValueError, match="cannot continue from token ids"):
        runner.generate(prompt_ids=[7])
    assert len(other.requests) == before


# -- one runner per server, each declaring what a tree and the explorer ask of it -----------------

LLAMACPP_MODELS = (200, {"object": "list", "data": [{"id": "smol.gguf", "object": "model", "owned_by": "llamacpp",
                                                     "meta": {"n_vocab": 49152}}]})


def test_connect_returns_the_runner_of_the_server_its_listing_names(fake):
    from logprob_viz.sources.remote import LlamaCppRunner, OpenAIRunner, VLLMRunner

    vllm, llama, other = fake({}), fake({"/v1/models": LLAMACPP_MODELS}), fake({"/v1/models": NOT_VLLM})
    runners = [lv.connect(vllm.url), lv.connect(llama.url), lv.connect(other.url)]
    assert [type(r) for r in runners] == [VLLMRunner, LlamaCppRunner, OpenAIRunner]
    assert [r.server for r in runners] == ["vllm", "llama.cpp", "openai"]
    assert [r.capabilities.can_continue_from_ids for r in runners] == [True, True, False]
    assert [r.capabilities.vocab_size for r in runners] == [None, 49152, None]  # only llama.cpp's listing says it
    assert [r.capabilities.max_top_logprobs for r in runners] == [20, 20, 20]
    assert lv.connect(other.url, max_top_logprobs=5).capabilities.max_top_logprobs == 5
    # the listing was asked for once per connect: detection and the runner share the answer
    assert [path for _, path, _ in vllm.requests] == ["/v1/models"]
    with pytest.raises(ValueError, match="cannot tell which token ' robot' is; give its id"):
        runners[2].token_id(" robot")


def test_the_top_logprobs_rule_is_the_runners_own_and_names_why(fake):
    llama = lv.connect(fake({"/v1/models": LLAMACPP_MODELS}).url, max_top_logprobs=40)
    with pytest.raises(ValueError, match=r"between 0 and 40 for this server \(connect\(max_top_logprobs=\)"):
        llama.generate("hi", top_logprobs=41)
    vllm = lv.connect(fake({}).url)
    with pytest.raises(ValueError, match=r"between 0 and 20 for this server \(vLLM's --max-logprobs\), got 25"):
        vllm.generate("hi", top_logprobs=25)


def test_the_explorer_takes_its_top_logprobs_limit_from_the_server_it_drives(fake):
    from logprob_viz.views.explorer import explore

    server = lv.connect(fake({}).url)
    with pytest.raises(ValueError, match="top_logprobs must be an int between 0 and 20 for this server"):
        explore("hi", runner=server, top_logprobs=50)  # refused at once, not when Generate fails
    app = explore("hi", runner=server, top_logprobs=5)
    box = app.controls.top_logprobs
    assert (box.min, box.max) == (1, 20)
    box.value = 50  # what a person types into the box
    assert box.value == 20
