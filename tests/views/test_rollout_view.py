"""One RL rollout's view (`rollouts.view(i, vocab=...)`, issue 44): the default model samples rollouts
(the engine, side a) and the same model with bf16-rounded weights rescores their tokens (the trainer,
side b), as tests/sources/test_divergence_rollouts.py does. Every number the view sends (per token and
in the header) equals a float64 loop written here over the two raw logprob lists; token texts are the
tokenizer's decode of each id, or a list's, or ``<id>``; bad input says what was wrong."""

from __future__ import annotations

import math

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.views.codec import read_array
from logprob_viz.views.divergence.rollout import RolloutView

PROMPTS = ["The capital of France is", "Once upon a time", "def fibonacci(n):"]
REWARDS = [1.0, 0.0, 0.5]
CLIP = 1.002  # a narrow band, so that some tokens of bf16 against fp32 leave it and some do not


@pytest.fixture(scope="module")
def sampled(runner, rounded):
    ids, lp_a, lp_b, entropy = [], [], [], []
    for i, prompt in enumerate(PROMPTS):
        t = runner.generate(prompt, max_new_tokens=16, do_sample=True, temperature=1.0, seed=i)
        rescored = rounded.score(prompt_ids=list(t.token_ids))
        ids.append([int(x) for x in t.token_ids[t.prompt_len :]])
        lp_a.append([float(x) for x in t.logprobs[t.prompt_len :]])
        lp_b.append([float(x) for x in rescored.logprobs[t.prompt_len :]])
        entropy.append([float(x) for x in t.entropy[t.prompt_len :]])
    return ids, lp_a, lp_b, entropy


@pytest.fixture(scope="module")
def rollouts(sampled):
    ids, lp_a, lp_b, entropy = sampled
    return lv.Divergence.from_logprobs(ids, lp_a, lp_b, rewards=REWARDS, entropy=entropy, clip=CLIP)


def _texts(field) -> list[str]:
    blob, offsets = bytes(read_array(field["blob"])), read_array(field["offsets"])
    return [blob[a:b].decode() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]


def _by_loop(a: list[float], b: list[float]) -> dict:
    """Each token's numbers and the rollout's figures, from the two lists alone (float64, plain math)."""
    deltas = [y - x for x, y in zip(a, b, strict=True)]
    tokens = {"delta": deltas, "ratio": [math.exp(d) for d in deltas], "k1": [-d for d in deltas],
              "k2": [d * d / 2 for d in deltas], "k3": [(math.exp(d) - 1) - d for d in deltas]}
    outside = [j for j, d in enumerate(deltas) if not 1 / CLIP <= math.exp(d) <= CLIP]
    figures = {"mean_abs_delta": sum(abs(d) for d in deltas) / len(deltas),
               "max_abs_delta": max(abs(d) for d in deltas), "share_outside": len(outside) / len(deltas),
               "mean_k3": sum(tokens["k3"]) / len(deltas)}
    return {"tokens": tokens, "figures": figures, "outside": outside}


@pytest.mark.parametrize("i", [0, 1, 2])
def test_every_number_sent_equals_a_loop_over_the_two_lists(sampled, rollouts, runner, i):
    ids, lp_a, lp_b, entropy = sampled
    view = rollouts.view(i, vocab=runner.tokenizer)
    assert isinstance(view, RolloutView)
    p, s, want = view._payload, view.stats, _by_loop(lp_a[i], lp_b[i])
    assert p["kind"] == "rollout" and p["n"] == len(ids[i])
    assert _texts(p["tokens"]) == [runner.tokenizer.decode([t]) for t in ids[i]]
    for name, values in (("logprob_a", lp_a[i]), ("logprob_b", lp_b[i]), *want["tokens"].items()):
        sent = read_array(p[name]).astype(np.float64)
        np.testing.assert_allclose(sent, values, rtol=1e-6, atol=1e-30, err_msg=name)  # float32 on the wire
    for key, value in want["figures"].items():
        assert s[key] == pytest.approx(value, rel=1e-12, abs=1e-300), key
    assert s["outside"] == want["outside"] and s["tokens"] == len(ids[i]) and s["reward"] == REWARDS[i]
    assert s["clip"] == CLIP and s["label"] == str(i)
    # forking: the top 20 % by entropy over every rollout's tokens
    threshold = np.quantile(np.concatenate([np.asarray(e, dtype=np.float64) for e in entropy]), 0.8)
    assert s["forking"] == [j for j, e in enumerate(entropy[i]) if e >= threshold]
    # the colour range: the 95th percentile of the nonzero |Δ| rounded up to a 1-2-5 step
    abs_delta = [abs(d) for d in want["tokens"]["delta"] if d != 0]
    q = np.quantile(abs_delta, 0.95)
    steps = [m * 10.0 ** e for e in range(-4, 1) for m in (1, 2, 5)]
    assert s["abs_delta_range"] == pytest.approx(min(x for x in steps if x >= q * (1 - 1e-12)))


def test_the_rollouts_are_a_real_mismatch_with_tokens_on_both_sides_of_the_band(rollouts):
    outside = [len(rollouts.view(i).stats["outside"]) for i in range(len(rollouts))]
    sizes = list(rollouts.lengths)
    assert sum(outside) > 0 and any(o < n for o, n in zip(outside, sizes, strict=True)), (outside, sizes)


def test_token_texts_from_a_list_or_the_ids(sampled, rollouts, runner):
    ids = sampled[0]
    vocab = runner.tokenizer.convert_ids_to_tokens(list(range(len(runner.tokenizer))))
    assert _texts(rollouts.view(1, vocab=vocab)._payload["tokens"]) == [vocab[t] for t in ids[1]]
    assert _texts(rollouts.view(1)._payload["tokens"]) == [f"<{t}>" for t in ids[1]]
    assert _texts(rollouts.view(-1, vocab=runner)._payload["tokens"]) == [runner.tokenizer.decode([t]) for t in ids[2]]


def test_bad_input_says_what_was_wrong(rollouts):
    with pytest.raises(IndexError, match=r"there are 3 rollouts, so i must be from 0 to 2"):
        rollouts.view(3)
    with pytest.raises(TypeError, match=r"i must be a rollout's index"):
        rollouts.view("0")
    with pytest.raises(ValueError, match=r"vocab has no text for token id \d+ \(token 0 of this rollout; vocab has 2"):
        rollouts.view(0, vocab=["a", "b"])
    with pytest.raises(TypeError, match="vocab must be a tokenizer"):
        rollouts.view(0, vocab=42)
    view = rollouts.view(0)
    with pytest.raises(Exception, match="selected must be -1"):
        view.selected = int(rollouts.lengths[0])
    view.selected = 2
    assert view.selected == 2
    with pytest.raises(Exception, match="size"):
        view.size = "huge"


def test_the_static_copy_escapes_token_text_and_carries_the_numbers(sampled, rollouts, runner):
    ids, lp_a, lp_b, _ = sampled
    vocab = [runner.tokenizer.decode([t]) for t in range(len(runner.tokenizer))]
    vocab[ids[0][0]] = "<script>bad()</script>"
    page = rollouts.view(0, vocab=vocab).fallback_html()
    assert "<script>" not in page and "&lt;script&gt;bad()&lt;/script&gt;" in page
    want = _by_loop(lp_a[0], lp_b[0])
    assert f"mean |Δ| {want['figures']['mean_abs_delta']:.4g}" in page
    assert f"({len(want['outside'])} of {len(ids[0])})" in page and "reward 1" in page
    assert page.count(' · outside">') == len(want["outside"])  # the tokens' titles
