"""`lv.sampled_from` per engine, against independent implementations written here: plain loops over
Python floats (float64) that follow each engine's source step by step, and transformers' own warpers
for transformers. Random distributions, the three documented disagreements, ties and exact top-p."""

from __future__ import annotations

import math

import numpy as np
import pytest

import logprob_viz as lv
from tests.warpers import warp

ENGINES = ("transformers", "vllm", "llama.cpp", "sglang", "ollama")


# -- the independent implementations: a list of (id, value) pairs, cut step by step ----------------

def _sorted(values):
    return sorted(enumerate(values), key=lambda pair: (-pair[1], pair[0]))  # most likely first, ties by id


def _softmax(pairs):
    top = max(v for _, v in pairs)
    weights = [(i, math.exp(v - top)) for i, v in pairs]
    total = sum(w for _, w in weights)
    return [(i, w / total) for i, w in weights]


def _top_k(pairs, k, ties):
    if k <= 0 or k >= len(pairs):
        return pairs
    if not ties:
        return pairs[:k]
    kth = pairs[k - 1][1]
    return [(i, v) for i, v in pairs if v >= kth]


def _top_p_transformers(pairs, p):
    """Ascending cumulative sum; a token goes when it is <= 1 - p; the last (most likely) stays."""
    if p >= 1:
        return pairs
    probs = _softmax(pairs)
    keep, total = [], 0.0
    for index in range(len(probs) - 1, -1, -1):
        total += probs[index][1]
        if total > 1 - p or index == 0:
            keep.append(pairs[index])
    return list(reversed(keep))


def _top_p_running(pairs, p, strict):
    if p >= 1:
        return pairs
    total = 0.0
    for index, (_, prob) in enumerate(_softmax(pairs)):
        total += prob
        if (total > p) if strict else (total >= p):
            return pairs[:index + 1]
    return pairs


def _min_p_probs(pairs, m):
    if m <= 0:
        return pairs
    probs = dict(_softmax(pairs))
    top = max(probs.values())
    return [(i, v) for i, v in pairs if probs[i] >= m * top]


def _scale(pairs, t):
    return [(i, v / t) for i, v in pairs]


def reference(logprobs, engine, t=1.0, top_k=0, top_p=1.0, min_p=0.0, batch_has_min_p=False):
    """{id: logprob} of the kept tokens, following `engine`'s source."""
    pairs = _sorted([float(x) for x in logprobs])
    if engine == "vllm":
        pairs = _scale(pairs, t)
        pairs = _min_p_probs(pairs, min_p)
        pairs = _top_k(pairs, top_k, ties=True)
        pairs = _top_p_transformers(pairs, top_p)
    elif engine == "llama.cpp":
        pairs = _top_k(pairs, top_k, ties=False)
        pairs = _top_p_running(pairs, top_p, strict=False)
        if min_p > 0:  # in logits: logit >= max + log(min_p)
            pairs = [(i, v) for i, v in pairs if v >= pairs[0][1] + math.log(min_p)]
        pairs = _scale(pairs, t)
    elif engine == "sglang":
        pairs = _scale(pairs, t)
        if batch_has_min_p or min_p > 0:
            pairs = _min_p_probs(_top_p_transformers(_top_k(pairs, top_k, ties=True), top_p), min_p)
        else:
            by_k = {i for i, _ in _top_k(pairs, top_k, ties=True)}
            by_p = {i for i, _ in _top_p_transformers(pairs, top_p)}
            pairs = [(i, v) for i, v in pairs if i in by_k and i in by_p]
    elif engine == "ollama":
        pairs = _scale(_top_k(pairs, top_k, ties=False), t)
        pairs = _top_p_running(pairs, top_p, strict=True)
        if min_p < 1:
            pairs = _min_p_probs(pairs, min_p)
    return {i: math.log(p) for i, p in _softmax(pairs)}


def transformers_reference(logprobs, t, top_k, top_p, min_p):
    import torch

    probs = warp(torch.tensor([logprobs], dtype=torch.float64), t, top_k, top_p, min_p)
    return {i: math.log(p) for i, p in enumerate(probs) if p > 0}


def check(logprobs, engine, **settings):
    got = lv.sampled_from(np.array(logprobs), engine=engine, **settings)
    if engine == "transformers":
        want = transformers_reference(list(logprobs), settings.get("temperature", 1.0), settings.get("top_k", 0),
                                      settings.get("top_p", 1.0), settings.get("min_p", 0.0))
    else:
        want = reference(logprobs, engine, settings.get("temperature", 1.0), settings.get("top_k", 0),
                         settings.get("top_p", 1.0), settings.get("min_p", 0.0), settings.get("batch_has_min_p", False))
    kept = set(np.nonzero(np.isfinite(got))[0].tolist())
    assert kept == set(want), (engine, settings, sorted(kept), sorted(want))
    for i, value in want.items():
        assert got[i] == pytest.approx(value, abs=1e-9)
    return kept


# -- random distributions ---------------------------------------------------------------------------

@pytest.mark.parametrize("engine", ENGINES)
def test_random_distributions_match_each_engines_order(engine):
    rng = np.random.default_rng(45)
    for _ in range(150):
        logits = rng.normal(0, rng.uniform(0.5, 4), size=int(rng.integers(2, 60)))
        logprobs = logits - np.log(np.exp(logits).sum())
        settings = {
            "temperature": float(rng.choice([1.0, rng.uniform(0.2, 2.5)])),
            "top_k": int(rng.choice([0, rng.integers(1, 12)])),
            "top_p": float(rng.choice([1.0, rng.uniform(0.3, 0.99)])),
            "min_p": float(rng.choice([0.0, rng.uniform(0.01, 0.5)])),
        }
        if engine == "sglang":
            settings["batch_has_min_p"] = bool(rng.integers(2))
        check(logprobs.tolist(), engine, **settings)


def test_the_engines_really_disagree_on_random_distributions():
    """Not one order under five names: on the same random inputs the kept sets differ somewhere."""
    rng = np.random.default_rng(7)
    differ = set()
    for _ in range(200):
        logprobs = rng.normal(0, 2, size=30)
        settings = {"temperature": 1.7, "top_k": 8, "top_p": 0.8, "min_p": 0.1}
        kept = {engine: frozenset(np.nonzero(np.isfinite(lv.sampled_from(logprobs, engine=engine, **settings)))[0])
                for engine in ENGINES}
        differ |= {engine for engine in ENGINES if kept[engine] != kept["transformers"]}
    assert {"vllm", "llama.cpp"} <= differ


# -- the three documented disagreements -------------------------------------------------------------

def test_vllm_applies_min_p_before_top_p():
    """Min-p cuts the 0.1 token first; top-p then renormalises over 0.9 and stops one token earlier."""
    logprobs = np.log([0.45, 0.30, 0.15, 0.10])
    settings = {"top_p": 0.8, "min_p": 0.25}
    assert check(logprobs, "transformers", **settings) == {0, 1, 2}
    assert check(logprobs, "vllm", **settings) == {0, 1}


def test_llamacpp_applies_temperature_last():
    """A token at 3 % of the top: llama.cpp cuts it with min-p 0.05 at T = 1; transformers at T = 2
    sees sqrt(0.03) = 17 % of the top and keeps it (llama.cpp #7498)."""
    logprobs = np.log([0.9, 0.9 * 0.03, 0.9 * 0.01])
    settings = {"temperature": 2.0, "min_p": 0.05}
    assert check(logprobs, "transformers", **settings) == {0, 1, 2}
    assert check(logprobs, "llama.cpp", **settings) == {0}
    cold = lv.sampled_from(logprobs, engine="llama.cpp", temperature=0.5, min_p=0.05)
    assert cold[0] == 0.0  # what min-p kept at T = 1 is then rescaled: one token left, probability 1


def test_sglang_cuts_top_k_and_top_p_jointly_unless_the_batch_has_min_p():
    """[0.4, 0.3, 0.2, 0.1], top-k 2, top-p 0.5: jointly on the whole distribution two tokens stay;
    sequentially top-k renormalises to [0.57, 0.43] and top-p keeps one."""
    logprobs = np.log([0.4, 0.3, 0.2, 0.1])
    assert check(logprobs, "sglang", top_k=2, top_p=0.5) == {0, 1}
    assert check(logprobs, "sglang", top_k=2, top_p=0.5, batch_has_min_p=True) == {0}
    assert check(logprobs, "transformers", top_k=2, top_p=0.5) == {0}


# -- ties and boundaries ----------------------------------------------------------------------------

def test_ties_at_the_kth_value():
    logprobs = np.log([0.4, 0.2, 0.2, 0.2])
    for engine in ("transformers", "vllm", "sglang"):
        assert check(logprobs, engine, top_k=2) == {0, 1, 2, 3}, engine
    for engine in ("llama.cpp", "ollama"):
        assert check(logprobs, engine, top_k=2) == {0, 1}, engine  # exactly k: the lower id of the tie


def test_exact_top_p_equality():
    """Probabilities exact in binary: the running sum equals top_p after the first token. ">= p"
    (llama.cpp) and "<= 1 - p goes" (transformers, vLLM, SGLang) stop there; Ollama's strict ">" keeps one more."""
    logprobs = np.log([0.5, 0.25, 0.25])
    for engine in ("transformers", "vllm", "llama.cpp", "sglang"):
        assert check(logprobs, engine, top_p=0.5) == {0}, engine
    assert check(logprobs, "ollama", top_p=0.5) == {0, 1}


def test_min_p_at_the_exact_ratio_stays():
    logprobs = np.log([0.5, 0.25, 0.125, 0.125])
    for engine in ENGINES:
        assert check(logprobs, engine, min_p=0.25) == {0, 1, 2, 3}, engine


def test_ollama_treats_min_p_one_as_off():
    logprobs = np.log([0.5, 0.3, 0.2])
    assert check(logprobs, "ollama", min_p=1.0) == {0, 1, 2}
    assert check(logprobs, "vllm", min_p=1.0) == {0}


@pytest.mark.parametrize("engine", ENGINES)
def test_greedy_and_no_settings(engine):
    logprobs = np.log([0.1, 0.6, 0.3])
    greedy = lv.sampled_from(logprobs, temperature=0, top_p=0.5, engine=engine)
    assert greedy.tolist() == [-math.inf, 0.0, -math.inf]
    np.testing.assert_allclose(lv.sampled_from(logprobs, engine=engine), logprobs, atol=1e-12)


def test_bad_input_says_what_to_give():
    with pytest.raises(ValueError, match="engine must be one of transformers, vllm, llama.cpp, sglang, ollama"):
        lv.sampled_from([0.0, -1.0], engine="tgi")
    with pytest.raises(ValueError, match="top_p must be in"):
        lv.sampled_from([0.0, -1.0], top_p=0)
    with pytest.raises(ValueError, match="1-D"):
        lv.sampled_from([[0.0, -1.0]])
    with pytest.raises(ValueError, match="temperature must be >= 0"):
        lv.sampled_from([0.0, -1.0], temperature=-1)
