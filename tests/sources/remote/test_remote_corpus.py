"""A corpus through `lv.connect`: ``generate([...])`` / ``score([...])`` send concurrent requests, at
most ``concurrency`` in flight, and return an `lv.Corpus` in input order.

The server is a real stdlib HTTP server on 127.0.0.1 in a thread that lists itself as vLLM and
answers each POST with a recorded vLLM 0.32 answer (tests/fixtures/vllm/), after a pause, while
it counts the requests in flight at once. Which recording answers depends on the prompt, and the
expected tokens are read from the recording's JSON here, so input order is checked, not assumed.
The same calls on a real llama-server are in tests/llamacpp_live/test_corpus_llamacpp.py.
"""

from __future__ import annotations

import _thread
import json
import threading
import time

import pytest

import local_http
import logprob_viz as lv
import paths
from local_http import QuietHandler
from logprob_viz.sources.remote.corpus import CorpusIncomplete
from logprob_viz.sources.runner import jobs_of


def recording(name: str) -> dict:
    return json.loads((paths.FIXTURES / "vllm" / f"{name}.json").read_text())


# prompt -> the recorded answer to send (both recorded with echo and prompt logprobs, as VLLMRunner asks)
ANSWERS = {"robot": recording("completions_echo_split"), "score": recording("completions_prompt_logprobs")}
MODEL = ANSWERS["robot"]["request"]["model"]


def recorded_token_ids(answer: dict) -> list[int]:
    """Prompt + completion ids of a recorded /completions answer, read with plain json."""
    choice = json.loads(answer["body"])["choices"][0]
    return list(choice.get("prompt_token_ids") or []) + list(choice.get("token_ids") or [])


class RecordedVLLM:
    """Lists itself as vLLM; each POST to /v1/completions waits ``pause(body)`` seconds, then sends the recording that
    ``answer(body)`` names (or a 500 error body for "fail"), counting the requests in flight."""

    def __init__(self, answer, pause, on_request=None):
        self.lock = threading.Lock()
        self.in_flight = self.most_in_flight = 0
        self.bodies: list[dict] = []
        server = self

        class Handler(QuietHandler):
            def do_GET(self):
                listing = {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "vllm"}]}
                self.send(200, json.dumps(listing).encode())

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if self.path != "/v1/completions":  # /detokenize: not recorded; the runner goes on without it
                    return self.send(404, json.dumps({"error": {"message": "not here", "code": 404}}).encode())
                with server.lock:
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                    server.bodies.append(body)
                    count = len(server.bodies)
                try:
                    if on_request is not None:
                        on_request(count, body)
                    time.sleep(pause(body))
                    name = answer(body)
                finally:
                    # out of flight before the answer goes out: once the client has read it, it may send the
                    # next request before this thread runs again (counted after the send, 4 of 3 were seen)
                    with server.lock:
                        server.in_flight -= 1
                if name == "fail":
                    error = {"error": {"message": "the model ran out of memory", "type": "InternalServerError",
                                       "code": 500}}
                    return self.send(500, json.dumps(error).encode())
                self.send(ANSWERS[name]["status"], ANSWERS[name]["body"].encode())

        self.httpd, self.url = local_http.serve(Handler)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve():
    servers = []

    def start(answer=lambda body: "robot", pause=lambda body: 0.2, on_request=None):
        servers.append(RecordedVLLM(answer, pause, on_request))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def test_generate_sends_at_most_concurrency_requests_and_keeps_input_order(serve):
    # even items are answered with one recording, odd ones with another, and the first items
    # wait longest, so answers arrive out of input order
    prompts = [f"prompt {i}" for i in range(7)]
    which = {p: ("robot" if i % 2 == 0 else "score") for i, p in enumerate(prompts)}
    server = serve(answer=lambda body: which[body["prompt"]],
                   pause=lambda body: 0.5 - 0.05 * prompts.index(body["prompt"]))
    runner = lv.connect(server.url)
    corpus = runner.generate(prompts, max_new_tokens=8, concurrency=3, progress=False)
    assert isinstance(corpus, lv.Corpus) and len(corpus) == 7
    assert server.most_in_flight == 3  # as many as allowed, never more
    assert sorted(b["prompt"] for b in server.bodies) == sorted(prompts)  # one request per item
    for i, trace in enumerate(corpus):  # each item's prompt is the one its recording holds
        choice = json.loads(ANSWERS[which[prompts[i]]]["body"])["choices"][0]
        assert trace.token_ids[: trace.prompt_len].tolist() == choice["prompt_token_ids"]
    assert corpus[0].token_ids.tolist() == recorded_token_ids(ANSWERS["robot"])
    assert [m["index"] for m in corpus.metadata] == list(range(7))
    assert not jobs_of(runner).busy  # the job ended with the call


def test_score_list_on_vllm_is_a_corpus_with_bounded_concurrency(serve):
    server = serve(answer=lambda body: "score")
    corpus = lv.connect(server.url).score(["a", "b", "c", "d", "e"], concurrency=2, progress=False)
    assert len(corpus) == 5 and server.most_in_flight == 2
    expected = recorded_token_ids(ANSWERS["score"])
    choice = json.loads(ANSWERS["score"]["body"])["choices"][0]
    n_prompt = len(choice["prompt_token_ids"])
    for trace in corpus:
        assert trace.token_ids.tolist() == expected[:n_prompt]
        assert trace.prompt_len == len(trace)
        # each prompt token's logprob is the recorded one for its id
        for pos in range(1, n_prompt):
            entry = choice["prompt_logprobs"][pos][str(expected[pos])]
            assert trace.logprobs[pos] == pytest.approx(entry["logprob"], abs=1e-6)


def test_the_whole_corpus_is_one_job_and_workers_do_not_wait_for_it(serve):
    seen = []
    server = serve(on_request=lambda count, body: seen.append(jobs_of(runner).holder))
    runner = lv.connect(server.url)
    corpus = runner.generate(["x"] * 4, concurrency=4, progress=False)
    assert len(corpus) == 4 and server.most_in_flight == 4
    assert seen == ["a call to runner.generate"] * 4


def test_seed_gives_item_i_seed_plus_i(serve):
    server = serve(pause=lambda body: 0.0)
    runner = lv.connect(server.url)
    runner.generate([f"p{i}" for i in range(5)], temperature=0.8, seed=10, concurrency=2, progress=False)
    seeds = {b["prompt"]: b["seed"] for b in server.bodies}
    assert seeds == {f"p{i}": 10 + i for i in range(5)}


def test_a_list_of_seeds_gives_one_per_item_as_on_the_local_runner(serve):
    server = serve(pause=lambda body: 0.0)
    runner = lv.connect(server.url)
    runner.generate(["p0", "p1", "p2"], temperature=0.8, seed=[7, 3, 5], concurrency=2, progress=False)
    assert {b["prompt"]: b["seed"] for b in server.bodies} == {"p0": 7, "p1": 3, "p2": 5}
    with pytest.raises(ValueError, match="a list of 3 ints"):  # the same rule and words as the local runner's
        runner.generate(["p0", "p1", "p2"], temperature=0.8, seed=[7, 3], progress=False)


def test_a_failed_request_keeps_the_finished_items_and_names_the_one_that_failed(serve):
    server = serve(answer=lambda body: "fail" if body["prompt"] == "p2" else "robot", pause=lambda body: 0.0)
    with pytest.raises(CorpusIncomplete) as caught:
        lv.connect(server.url).generate(["p0", "p1", "p2", "p3", "p4"], concurrency=1, progress=False)
    error = caught.value
    assert error.item == 2 and "item 2 of the list failed" in str(error) and "out of memory" in str(error)
    assert "holds the 2 of 5 items" in str(error)
    assert [m["index"] for m in error.corpus.metadata] == [0, 1]
    assert len(server.bodies) == 3  # nothing was sent after the failure


def test_stop_keeps_the_finished_items_and_says_how_many(serve):
    stop = threading.Event()
    server = serve(on_request=lambda count, body: stop.set() if count == 3 else None, pause=lambda body: 0.1)
    with pytest.warns(UserWarning, match=r"stopped: the corpus holds the 3 of 9 items"):
        corpus = lv.connect(server.url).generate([f"p{i}" for i in range(9)], concurrency=1, stop=stop,
                                                 progress=False)
    assert [m["index"] for m in corpus.metadata] == [0, 1, 2]
    assert corpus.meta["interrupted"] is True
    assert len(server.bodies) == 3  # no request started after the stop


def test_ctrl_c_keeps_the_finished_items(serve):
    # a real KeyboardInterrupt in the calling thread, as Ctrl-C raises it
    server = serve(on_request=lambda count, body: _thread.interrupt_main() if count == 3 else None,
                   pause=lambda body: 0.3)
    with pytest.warns(UserWarning, match=r"interrupted: the corpus holds the \d of 6 items"):
        corpus = lv.connect(server.url).generate([f"p{i}" for i in range(6)], concurrency=2, progress=False)
    assert 2 <= len(corpus) < 6
    assert corpus.meta["interrupted"] is True


@pytest.mark.parametrize("bad", [0, -1, 2.5, "4"])
def test_concurrency_is_checked(serve, bad):
    runner = lv.connect(serve().url)
    with pytest.raises(ValueError, match="concurrency must be an int >= 1"):
        runner.generate(["a", "b"], concurrency=bad)


def test_concurrency_is_only_for_a_list_and_one_text_is_one_trace(serve):
    server = serve(pause=lambda body: 0.0)
    runner = lv.connect(server.url)
    with pytest.raises(ValueError, match="concurrency= is for a list"):
        runner.generate("one text", concurrency=2)
    trace = runner.generate("one text", max_new_tokens=8)
    assert isinstance(trace, lv.Trace) and trace.token_ids.tolist() == recorded_token_ids(ANSWERS["robot"])


def test_a_bad_item_is_refused_before_anything_is_sent(serve):
    server = serve()
    with pytest.raises(ValueError, match="item 1 of the list"):
        lv.connect(server.url).generate(["fine", ""], progress=False)
    assert server.bodies == []


@pytest.mark.parametrize("call, first", [("generate", "prompt"), ("score", "text")])
@pytest.mark.parametrize("many", [False, True])
def test_an_unknown_argument_is_named_as_given_before_anything_is_sent(serve, call, first, many):
    server = serve()
    runner = lv.connect(server.url)
    given = ["a", "b"] if many else "a"
    with pytest.raises(TypeError) as info:
        getattr(runner, call)(**{first: given, "colour": "red"})
    assert str(info.value).startswith(f"{call}() got an unexpected keyword argument 'colour'")
    assert "_corpus" not in str(info.value) and "Runner." not in str(info.value)
    assert server.bodies == []  # checked before any request
