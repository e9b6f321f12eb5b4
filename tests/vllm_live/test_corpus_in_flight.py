"""``lv.connect(vllm).score(list)`` without ``concurrency=``: the runner chooses how many requests
are in flight (`remote.inflight`), says so in the corpus's meta, and the traces are the ones a
request at a time gives.

On the suite's server (conftest.py), which states no limit, the number is grown from 16 while
tokens/s rises. The suite's second server (conftest.py's `second_vllm`), in vLLM's development
mode with ``--max-num-seqs 4``, states its limit at ``/server_info``: the runner keeps exactly that.
"""

from __future__ import annotations

import urllib.request

import numpy as np

import logprob_viz as lv
from logprob_viz.sources.remote.inflight import START

# 720 short texts (4-12 words): a window lasts at least 2 s, and a doubling needs two rounds of
# the wider number still to start, so the corpus must outlast a few windows however fast the server
# (240 were done by the first window's end on a quiet machine: nothing was left to grow into)
WORDS = ("the robot may not injure a human being or through inaction allow one to come to harm "
         "while the cat sat on the mat and the dog ran after a ball in the park").split()
TEXTS = [" ".join(WORDS[(i * 7) % len(WORDS):][: 4 + i % 9]).capitalize() + "." for i in range(720)]
TOL = 1e-4  # float32 numbers of the same tokens in other batches (vLLM's CPU kernels)


def same_traces(a, b) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.token_ids.tolist() == y.token_ids.tolist()
        np.testing.assert_allclose(x.logprobs, y.logprobs, atol=TOL)
        np.testing.assert_array_equal(x.top_ids, y.top_ids)


def test_the_runner_grows_the_number_in_flight_and_the_traces_equal_one_at_a_time(vllm_url):
    runner = lv.connect(vllm_url)
    chosen = runner.score(TEXTS, top_logprobs=3, progress=False)
    meta = chosen.meta
    tried = {int(k): v for k, v in meta["concurrency_tried"].items()}
    assert "grown while tokens/s rose" in meta["concurrency_how"]
    assert START in tried and all(w == START * 2 ** n for n, w in enumerate(sorted(tried)))
    assert len(tried) >= 2, meta  # the first window at 16 always grows: 720 texts leave room for it
    assert meta["concurrency"] == max(tried, key=tried.get)  # the best number measured
    one = runner.score(TEXTS[:120], top_logprobs=3, concurrency=1, progress=False)  # (one at a time: slow)
    assert one.meta["concurrency"] == 1 and "concurrency_tried" not in one.meta
    same_traces(chosen[:120], one)


def test_a_server_that_states_max_num_seqs_gets_that_many_in_flight(second_vllm, vllm_url):
    limited_url = second_vllm.up()  # (conftest.py: development mode, --max-num-seqs 4)
    with urllib.request.urlopen(limited_url.removesuffix("/v1") + "/server_info", timeout=60) as r:
        assert r.status == 200  # (development mode: the route exists on this server only)
    runner = lv.connect(limited_url)
    chosen = runner.score(TEXTS[:12], top_logprobs=3, progress=False)
    assert chosen.meta["concurrency"] == 4  # the --max-num-seqs this server was started with
    assert "max_num_seqs" in chosen.meta["concurrency_how"] and "concurrency_tried" not in chosen.meta
    same_traces(chosen, lv.connect(vllm_url).score(TEXTS[:12], top_logprobs=3, concurrency=1, progress=False))
