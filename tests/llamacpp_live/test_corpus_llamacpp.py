"""A corpus through `lv.connect` on the real llama-server (conftest.py): ``generate([...])`` sends
concurrent requests and returns the traces in input order, each equal to its one-at-a-time call.

The server runs with one slot, where llama.cpp gives identical numbers for the same tokens
whatever it did before (`test_llamacpp_live.test_routes_and_cache_agree_exactly`), so the
concurrent traces equal the one-at-a-time ones exactly; the generated tokens are also checked
against the server's own greedy ``/completion`` read with plain json.
"""

from __future__ import annotations

import numpy as np
import pytest

import logprob_viz as lv
from llamacpp_live.test_connect_llamacpp import native_greedy
from logprob_viz.sources.runner import jobs_of

PROMPTS = ["The capital of France is", "A robot may not injure a human being", "def add(a, b):",
           "Once upon a time", "2 + 2 =", "The opposite of hot is"]
N_NEW = 8


@pytest.fixture(scope="module")
def server(llamacpp_url):
    return lv.connect(llamacpp_url)


def test_a_list_with_concurrency_3_equals_six_one_at_a_time_calls(llamacpp_url, server):
    corpus = server.generate(PROMPTS, max_new_tokens=N_NEW, top_logprobs=3, concurrency=3, progress=False)
    assert isinstance(corpus, lv.Corpus) and len(corpus) == len(PROMPTS)
    assert [m["index"] for m in corpus.metadata] == list(range(len(PROMPTS)))
    assert not jobs_of(server).busy
    for prompt, batched in zip(PROMPTS, corpus, strict=True):
        alone = server.generate(prompt, max_new_tokens=N_NEW, top_logprobs=3, progress=False)
        assert batched.token_ids.tolist() == alone.token_ids.tolist()
        assert batched.prompt_len == alone.prompt_len
        np.testing.assert_array_equal(batched.logprobs, alone.logprobs)
        np.testing.assert_array_equal(batched.top_ids, alone.top_ids)
        # the server's own greedy continuation of this prompt: input order, not just the same set
        native = [p["id"] for p in native_greedy(llamacpp_url, prompt, N_NEW, 3)]
        assert batched.token_ids[batched.prompt_len :].tolist() == native[: len(batched) - batched.prompt_len]


def test_score_of_a_list_keeps_its_clear_error(server):
    # (scoring a list works: test_score_llamacpp.py) an item the server cannot take is named before anything is sent
    with pytest.raises(ValueError, match=r"item 1 of the list: .*more than the context of the server"):
        server.score([PROMPTS[0], "word " * 2100], progress=False)


def test_without_concurrency_a_list_keeps_as_many_in_flight_as_the_server_has_slots(llamacpp_url, server):
    import json
    import urllib.request

    with urllib.request.urlopen(llamacpp_url + "/props", timeout=30) as r:
        slots = json.loads(r.read())["total_slots"]  # the server's own word, read with plain json
    corpus = server.generate(PROMPTS[:3], max_new_tokens=2, top_logprobs=1, progress=False)
    assert corpus.meta["concurrency"] == slots >= 1
    assert "total_slots" in corpus.meta["concurrency_how"]
    given = server.generate(PROMPTS[:3], max_new_tokens=2, top_logprobs=1, concurrency=2, progress=False)
    assert given.meta["concurrency"] == 2 and given.meta["concurrency_how"] == "given (concurrency=2)"
    assert [t.token_ids.tolist() for t in given] == [t.token_ids.tolist() for t in corpus]
