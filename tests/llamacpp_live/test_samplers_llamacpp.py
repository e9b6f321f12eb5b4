"""A real llama-server's post-sampling numbers are `lv.sampled_from(..., engine="llama.cpp")`.

The same request twice with the same seed (the server runs one slot, so the same tokens come back):
once with ``post_sampling_probs: true`` (the distribution its chain sampled from), once without (the
model's distribution before the samplers, its top 40). llama-server's default chain applies top-k 40
first, so those 40 raw values hold everything the later cuts and the renormalisation see; the
package's llama.cpp order applied to them must keep exactly the tokens the server listed, with the
server's values. The reference is the server's own raw numbers, not the float32 runner: llama.cpp
computes on 4-bit weights with 8-bit activations and moves logprobs by up to ~1.4 nats against the
runner (see test_llamacpp_live.py), too much to pin a cut's boundary.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import logprob_viz as lv
from llamacpp_live import llamacpp_recordings as recordings

PROMPTS = ["A robot may not injure a human being", "The capital of France is"]
SETTINGS = {"temperature": 1.5, "top_k": 40, "top_p": 0.9, "min_p": 0.05}
TOLERANCE = 1e-4  # nats: float32 softmax on the server, float32 values in the JSON


def completion(url: str, prompt: str, post_sampling: bool) -> dict:
    body = {"prompt": prompt, "n_predict": 16, "n_probs": 40, "seed": 45, "cache_prompt": False,
            "post_sampling_probs": post_sampling, **SETTINGS}
    status, text = recordings.request(url, "/completion", body)
    assert status == 200, text[:500]
    return json.loads(text)


@pytest.fixture(scope="module")
def pairs(llamacpp_url):
    out = []
    for prompt in PROMPTS:
        processed, raw = completion(llamacpp_url, prompt, True), completion(llamacpp_url, prompt, False)
        assert [s["id"] for s in processed["completion_probabilities"]] == \
            [s["id"] for s in raw["completion_probabilities"]], "the same seed gave other tokens"
        out.append((processed, raw))
    return out


def test_the_default_chain_is_the_documented_order(pairs):
    samplers = pairs[0][0]["generation_settings"]["samplers"]
    order = [samplers.index(name) for name in ("top_k", "top_p", "min_p", "temperature")]
    assert order == sorted(order), samplers


def test_post_sampling_numbers_are_the_llamacpp_order(pairs, runner):
    vocab = runner.engine.vocab_size
    differs_from_transformers = 0
    for processed, raw in pairs:
        for after, before in zip(processed["completion_probabilities"], raw["completion_probabilities"], strict=True):
            row = np.full(vocab, -np.inf)
            for entry in before["top_logprobs"]:
                row[entry["id"]] = entry["logprob"]
            served = {e["id"]: math.log(e["prob"]) for e in after["top_probs"] if e["prob"] > 0}
            want = lv.sampled_from(row, engine="llama.cpp", **SETTINGS)
            kept = set(np.nonzero(np.isfinite(want))[0].tolist())
            assert set(served) == kept, (after["token"], sorted(served), sorted(kept))
            for token_id, value in served.items():
                assert value == pytest.approx(want[token_id], abs=TOLERANCE)
            other = lv.sampled_from(row, engine="transformers", **SETTINGS)
            differs_from_transformers += set(np.nonzero(np.isfinite(other))[0].tolist()) != kept
    # temperature last is not a detail: at T = 1.5 transformers' order keeps other tokens somewhere
    assert differs_from_transformers > 0


def test_the_reader_keeps_them_as_the_sampled_from_distribution(pairs):
    processed, _ = pairs[0]
    trace = lv.read(processed)
    assert trace.meta["probabilities"] == "post_sampling"
    assert np.isnan(trace.logprobs).all()
    first = processed["completion_probabilities"][0]
    assert trace.processed_logprobs[0] == pytest.approx(math.log(first["prob"]), abs=1e-6)
