"""min_p in the local runner, checked against transformers' own warpers on the real default model.

The reference applies ``TemperatureLogitsWarper`` then ``MinPLogitsWarper`` (the order
transformers' ``generate`` uses) to the logits of a separately loaded copy of the model, teacher-
forced over the trace's token ids: nothing of the runner's own code.
"""

import math

import numpy as np
import pytest
import torch
from transformers.generation.logits_process import MinPLogitsWarper, TemperatureLogitsWarper, TopKLogitsWarper

ROBOT = "A robot may not injure a human being"
TOL = 1e-4  # fp32 on the CPU: a KV-cache step and a full pass differ by ~1e-6


def reference_processed(model, trace, warpers):
    """(completion, V) logprobs of the distribution each completion token was sampled from."""
    ids = trace.token_ids.tolist()
    with torch.no_grad():
        scores = model(torch.tensor([ids])).logits[0, trace.prompt_len - 1 : -1].float()
    for warper in warpers:
        scores = warper(None, scores)
    return torch.log_softmax(scores, dim=-1)


@pytest.mark.parametrize("temperature, min_p", [(1.0, 0.1), (1.5, 0.05), (0.7, 0.3)])
def test_min_p_distribution_matches_transformers(runner, reference_model, temperature, min_p):
    trace = runner.generate(ROBOT, max_new_tokens=16, top_logprobs=8, temperature=temperature, min_p=min_p, seed=5)
    assert trace.meta["min_p"] == min_p and trace.meta["temperature"] == temperature and trace.meta["do_sample"]

    warpers = [TemperatureLogitsWarper(temperature)] if temperature != 1.0 else []
    processed = reference_processed(reference_model, trace, [*warpers, MinPLogitsWarper(min_p)])  # (C, V)
    chosen = torch.tensor(trace.token_ids[trace.prompt_len :].tolist())
    got = trace.processed_logprobs[trace.prompt_len :]
    np.testing.assert_allclose(got, processed[torch.arange(len(chosen)), chosen].numpy(), atol=TOL)
    top_ids = torch.from_numpy(trace.top_ids[trace.prompt_len :]).long()
    want_top = processed.gather(-1, top_ids).numpy()
    # -inf (cut by min_p) must be -inf in both; finite values equal
    np.testing.assert_array_equal(np.isinf(trace.processed_top_logprobs[trace.prompt_len :]), np.isinf(want_top))
    finite = np.isfinite(want_top)
    np.testing.assert_allclose(trace.processed_top_logprobs[trace.prompt_len :][finite], want_top[finite], atol=TOL)
    assert np.isfinite(got).all(), "every sampled token survived min_p"


def test_min_p_cuts_what_the_threshold_says(runner):
    """Read from the raw top-K alone: an alternative is kept exactly when p_T >= min_p * p_T(top)."""
    temperature, min_p = 1.3, 0.2
    trace = runner.generate(ROBOT, max_new_tokens=12, top_logprobs=20, temperature=temperature, min_p=min_p, seed=1)
    raw = trace.top_logprobs[trace.prompt_len :].astype(np.float64) / temperature  # logits/T up to a constant per row
    kept = raw >= raw[:, :1] + math.log(min_p)
    processed = trace.processed_top_logprobs[trace.prompt_len :]
    np.testing.assert_array_equal(np.isfinite(processed), kept)
    assert (~kept).any(), "min_p=0.2 cut some of the top 20 somewhere"


def test_min_p_composes_with_top_k_in_transformers_order(runner, reference_model):
    trace = runner.generate(ROBOT, max_new_tokens=12, top_logprobs=5, temperature=0.9, top_k=20, min_p=0.1, seed=2)
    warpers = [TemperatureLogitsWarper(0.9), TopKLogitsWarper(20), MinPLogitsWarper(0.1)]
    processed = reference_processed(reference_model, trace, warpers)
    chosen = torch.tensor(trace.token_ids[trace.prompt_len :].tolist())
    np.testing.assert_allclose(trace.processed_logprobs[trace.prompt_len :],
                               processed[torch.arange(len(chosen)), chosen].numpy(), atol=TOL)


def test_min_p_one_is_greedy_in_effect(runner):
    sampled = runner.generate(ROBOT, max_new_tokens=10, top_logprobs=3, min_p=1.0, seed=0)
    greedy = runner.generate(ROBOT, max_new_tokens=10, top_logprobs=3)
    assert sampled.token_ids.tolist() == greedy.token_ids.tolist()
    assert np.allclose(sampled.processed_logprobs[sampled.prompt_len :], 0.0, atol=1e-6), "only the top token is left"


@pytest.mark.parametrize("bad", [-0.1, 1.5, "0.1", True])
def test_bad_min_p_is_a_clear_error(runner, bad):
    with pytest.raises(ValueError, match=r"min_p must be in \[0, 1\]"):
        runner.generate(ROBOT, max_new_tokens=2, min_p=bad)


def test_greedy_records_no_min_p(runner):
    trace = runner.generate(ROBOT, max_new_tokens=2)
    assert trace.meta["min_p"] is None and trace.processed_logprobs is None
