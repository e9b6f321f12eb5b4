"""The errors a user catches, by meaning: `lv.ServerError` (the server is down, failed or broke
off) is apart from `lv.LogprobFormatError` (a body this package cannot read), neither a subclass
of the other; `lv.CorpusIncomplete` is public; the old `OpenAIResponseError` is a deprecated alias.

The servers are real: a closed port on 127.0.0.1, and a stdlib HTTP server in a thread
(tests/local_http.py) that answers what each test says.
"""

from __future__ import annotations

import json
import warnings

import pytest

import local_http
import logprob_viz as lv
from logprob_viz.servers.process import free_port
from logprob_viz.sources.remote import corpus as remote_corpus

MODELS = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "someone"}]}


def test_the_two_errors_are_apart():
    assert not issubclass(lv.ServerError, lv.LogprobFormatError)
    assert not issubclass(lv.LogprobFormatError, lv.ServerError)
    assert {"ServerError", "LogprobFormatError", "CorpusIncomplete"} <= set(lv.__all__)


def test_a_server_that_is_down_is_a_server_error_never_a_format_error():
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    with pytest.raises(lv.ServerError, match="connection refused") as err:
        try:
            lv.connect(url)
        except lv.LogprobFormatError:  # what a user writes around a malformed body: must not catch this
            pytest.fail("a server that is down was caught as a malformed body")
    assert url in str(err.value) and not isinstance(err.value, ValueError)


def serving(answers: dict):
    """A real server on 127.0.0.1 answering each path with (status, JSON body); (server, base URL)."""

    class Handler(local_http.QuietHandler):
        def _answer(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, body = answers.get(self.path, (404, {"error": {"message": f"no route {self.path}"}}))
            self.send(status, json.dumps(body).encode())

        do_GET = do_POST = _answer

    return local_http.serve(Handler)


@pytest.fixture
def server():
    started = []

    def start(answers):
        started.append(serving({"/v1/models": (200, MODELS), **answers}))
        return started[-1][1]

    yield start
    for httpd, _ in started:
        httpd.shutdown()
        httpd.server_close()


def test_a_body_that_cannot_be_read_is_a_format_error_not_a_server_error(server):
    # HTTP 200 and JSON, but the chosen token's logprob is a string: the body is the problem, not the server
    broken = {"object": "text_completion", "model": "m", "choices": [
        {"index": 0, "text": "b", "logprobs": {"tokens": ["b"], "token_logprobs": ["very likely"],
                                               "top_logprobs": [{"b": -0.5}], "text_offset": [0]}}]}
    runner = lv.connect(server({"/v1/completions": (200, broken)}))
    with pytest.raises(lv.LogprobFormatError, match=r"token_logprobs\[0\]") as err:
        try:
            runner.generate("a", max_new_tokens=1)
        except lv.ServerError:
            pytest.fail("a malformed body was caught as a server failure")
    assert err.value.path.startswith("choices[0].logprobs.token_logprobs[0]")


def test_any_servers_error_body_is_a_server_error_with_its_words():
    # TGI's and llama.cpp's error bodies are not OpenAI's: the error is the general one, not named for OpenAI
    tgi = {"error": "Input validation error: `inputs` must have less than 1024 tokens", "error_type": "validation"}
    llamacpp = {"error": {"code": 400, "message": "the request exceeds the available context size",
                          "type": "exceed_context_size_error"}}
    for body in (tgi, llamacpp):
        with pytest.raises(lv.ServerError) as err:
            lv.read(body)
        assert type(err.value) is lv.ServerError and not isinstance(err.value, lv.LogprobFormatError)
    assert err.value.status == 400 and err.value.type == "exceed_context_size_error"
    assert "available context size" in str(err.value)


def test_a_failed_corpus_raises_the_public_corpus_incomplete(server):
    runner = lv.connect(server({"/v1/completions": (500, {"error": {"message": "KV cache is full"}})}))
    with pytest.raises(lv.CorpusIncomplete, match="KV cache is full") as err:
        runner.generate(["a", "b"], max_new_tokens=1, concurrency=1, progress=False)
    assert lv.CorpusIncomplete is remote_corpus.CorpusIncomplete
    assert isinstance(err.value.__cause__, lv.ServerError) and len(err.value.corpus) == 0


def test_the_old_name_still_catches_what_it_caught_with_a_warning():
    assert "OpenAIResponseError" not in lv.__all__
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = lv.OpenAIResponseError
        from logprob_viz.sources.readers import OpenAIResponseError
    assert old is OpenAIResponseError is lv.ServerError
    assert caught and all(issubclass(w.category, DeprecationWarning) for w in caught)
    assert all(w.filename == __file__ for w in caught)  # the warning points at the user's line
    with pytest.raises(AttributeError):
        lv.NoSuchError  # noqa: B018
