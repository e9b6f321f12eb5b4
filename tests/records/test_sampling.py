"""The distribution sampled from (records/sampling.py), on the real default model.

Three independent computations: transformers' own logits warpers on a second copy of the model
(`reference_model`, tests/warpers.py); a float64 softmax with temperature, top-p and min-p applied
by hand, one token at a time, below; and what the local runner records as the distribution it
sampled from. The band is checked against a dense sweep of the warpers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from logprob_viz.records.sampling import band_of, sampled_from
from logprob_viz.views.explorer.sampling_settings import Settings
from warpers import warp, warped

PROMPT = "The largest planet in the solar system is"
ANIMAL = "My favourite animal is the"  # a flat distribution: top-p and min-p cut thousands of tokens


def ids_of(text: str) -> list[int]:
    from transformers import AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())(text)["input_ids"]


def reference_logprobs(model, ids: list[int]) -> np.ndarray:
    """log p (V,) float64 after `ids`, from the reference copy of the model (plain transformers)."""
    import torch

    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[0, -1].double()
    return torch.log_softmax(logits, dim=-1).numpy()


@pytest.fixture(scope="module")
def prompt_ids():
    return ids_of(PROMPT)


@pytest.fixture(scope="module")
def logprobs(reference_model, prompt_ids):
    return reference_logprobs(reference_model, prompt_ids)


SETTINGS = [
    dict(temperature=0.8),
    dict(temperature=1.5),
    dict(temperature=0.0),
    dict(temperature=1.2, top_p=0.9),
    dict(temperature=0.7, top_k=20, top_p=0.95),
    dict(temperature=1.0, min_p=0.05),
    dict(temperature=1.5, top_k=50, top_p=0.8, min_p=0.02),
]


@pytest.mark.parametrize("args", SETTINGS, ids=lambda a: ",".join(f"{k}={v}" for k, v in a.items()))
def test_sampled_from_is_the_distribution_transformers_samples_from(logprobs, reference_model, prompt_ids, args):
    expected = warped(reference_model, prompt_ids, **args)
    got = sampled_from(logprobs, Settings(**args))
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < 2e-6
    assert np.array_equal(got > 0, expected > 0), "the same tokens are cut off"
    assert math.isclose(got.sum(), 1.0, abs_tol=1e-9)


def first_change(values, condition) -> float | None:
    """The first value of a sweep at which `condition` differs from its value at the start."""
    start = condition(values[0])
    for v in values[1:]:
        if condition(v) != start:
            return v
    return None


@pytest.fixture(scope="module")
def reference_scores(reference_model, prompt_ids):
    """The reference copy's logits after the prompt, float64 (1, V): what `warped` gives the warpers."""
    import torch

    with torch.inference_mode():
        return reference_model(torch.tensor([prompt_ids])).logits[:, -1].double()


def test_the_band_agrees_with_an_independent_sweep(logprobs, reference_scores):
    # The sweep's ~700 points: transformers' warpers over the reference's logits, computed once (the
    # prompt is the same at every point; a forward pass per point was ~30 s of the suite)
    def at(temperature, top_k=0, top_p=1.0, min_p=0.0):
        return warp(reference_scores.clone(), temperature, top_k, top_p, min_p)

    order = np.argsort(-logprobs)
    third, top = int(order[2]), int(order[0])
    held = dict(temperature=1.0, top_p=0.9, min_p=0.05)
    step = 0.01

    # temperature, with top-p 0.9 and min-p 0.05 held: the third token is cut at low T, kept from a threshold
    band = band_of(logprobs, third, Settings(**held))["temperature"]
    temps = np.arange(step, 2.0 + step / 2, step)
    kept = first_change(temps, lambda t: at(t, 0, 0.9, 0.05)[third] > 0)
    assert band.rank == 3
    assert kept is not None and band.sampleable_from is not None
    assert kept - step <= band.sampleable_from <= kept + 1e-9
    assert band.sampleable_to == 2.0

    # top-p at T = 1: kept once top-p passes the mass of the two tokens above it
    band = band_of(logprobs, third, Settings(**held))["top_p"]
    tops = np.arange(0.05, 1.0 + step / 2, step)
    kept = first_change(tops, lambda p: at(1.0, 0, p, 0.05)[third] > 0)
    model = np.exp(logprobs)
    assert kept - step <= band.sampleable_from <= kept + 1e-9
    assert math.isclose(band.sampleable_from, model[order[:2]].sum(), abs_tol=1e-6)

    # min-p at T = 1, top-p 1: kept up to p(third) / p(top)
    band = band_of(logprobs, third, Settings(temperature=1.0))["min_p"]
    mins = np.arange(0.0, 1.0 + step / 2, step)
    cut = first_change(mins, lambda m: at(1.0, 0, 1.0, m)[third] > 0)
    assert band.sampleable_from == 0.0
    assert cut - step <= band.sampleable_to <= cut + 1e-9
    assert math.isclose(band.sampleable_to, model[third] / model[top], rel_tol=1e-6)

    # the most likely token: sampleable everywhere, and alone (sampled for sure) at low T / low top-p / high min-p
    bands = band_of(logprobs, top, Settings(**held))
    assert all(b.sampleable_from == b.low and b.sampleable_to == b.high for b in bands.values())
    assert bands["temperature"].rank == 1
    alone = first_change(temps, lambda t: at(t, 0, 0.9, 0.05)[top] < 1)
    assert bands["temperature"].only_from == 0.0
    assert alone - step <= bands["temperature"].only_to <= alone + 1e-9
    alone = first_change(mins, lambda m: at(1.0, 0, 0.9, m)[top] == 1)
    assert alone - step <= bands["min_p"].only_from <= alone + 1e-9
    # the drawn probabilities are the warpers' at the grid's values
    t_band = bands["temperature"]
    for v, p in list(zip(t_band.values, t_band.probs, strict=True))[1::20]:
        assert abs(p - at(float(v), 0, 0.9, 0.05)[top]) < 2e-6


def by_hand(logprobs: np.ndarray, temperature: float, top_p: float, min_p: float) -> np.ndarray:
    """The distribution sampled from, written out: a float64 softmax at `temperature`, then the most
    likely tokens while the mass before each is under `top_p`, then those with p >= min_p * p(top)."""
    scaled = [x / temperature for x in logprobs.tolist()]
    top_score = max(scaled)
    p = [math.exp(x - top_score) for x in scaled]
    total = math.fsum(p)
    p = [x / total for x in p]
    kept, before = [], 0.0
    for i in sorted(range(len(p)), key=lambda i: -p[i]):
        if kept and before >= top_p:
            break
        kept.append(i)
        before += p[i]
    p_top = p[kept[0]]
    kept = [i for i in kept if p[i] >= min_p * p_top]
    mass = math.fsum(p[i] for i in kept)
    out = np.zeros(len(p))
    for i in kept:
        out[i] = p[i] / mass
    return out


@pytest.mark.parametrize("temperature, top_p, min_p", [(0.5, 0.9, 0.02), (1.0, 0.8, 0.0), (1.5, 0.95, 0.05)])
def test_the_view_samples_from_what_the_runner_samples_from(runner, reference_model, temperature, top_p, min_p):
    """The explorer's numbers at (T, top-p, min-p) = the hand-made softmax = what the runner records."""
    ids = ids_of(ANIMAL)
    logprobs = reference_logprobs(reference_model, ids)
    shown = sampled_from(logprobs, Settings(temperature=temperature, top_p=top_p, min_p=min_p))
    expected = by_hand(logprobs, temperature, top_p, min_p)
    assert np.array_equal(shown > 0, expected > 0), "the same tokens are cut off"
    assert 5 <= np.count_nonzero(expected) < len(expected) // 2, "the settings cut, and keep several tokens"
    assert np.abs(shown - expected).max() < 1e-12

    # the runner's own record of the distribution it drew its first token from (float32)
    trace = runner.generate(ANIMAL, max_new_tokens=1, top_logprobs=20, temperature=temperature, top_p=top_p,
                            min_p=min_p, seed=0)
    at = trace.prompt_len
    assert trace.token_ids[:at].tolist() == ids
    recorded = np.exp(trace.processed_top_logprobs[at].astype(np.float64))
    np.testing.assert_allclose(recorded, expected[trace.top_ids[at]], atol=1e-6)
    assert math.isclose(math.exp(trace.processed_logprobs[at]), expected[trace.token_ids[at]], abs_tol=1e-6)


def test_top_k_keeps_a_tie_with_the_kth_token_as_transformers_does():
    import torch

    logprobs = np.log(np.array([0.4, 0.2, 0.2, 0.1, 0.1]))  # the 2nd and 3rd tie
    expected = warp(torch.tensor(logprobs)[None], 1.0, top_k=2)
    got = sampled_from(logprobs, Settings(temperature=1.0, top_k=2))
    assert np.count_nonzero(expected) == 3
    np.testing.assert_allclose(got, expected, atol=1e-12)
