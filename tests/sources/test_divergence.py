"""`lv.divergence` on the real default model against a copy of it whose weights are rounded to bf16 (and
against ``lv.load(dtype="bfloat16")``): each position's KL, Δp and same-top equal a float64 computation
written here from the two models' own logits (plain transformers forward passes, no project code), and
the summary equals llama.cpp's formulas (tools/perplexity/perplexity.cpp) applied to those values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import logprob_viz as lv

TEXTS = ["A robot may not injure a human being or, through inaction, allow a human being to come to harm.",
         "The quick brown fox jumps over the lazy dog.",
         "In 1905 Einstein published four papers; the third introduced special relativity, and it changed "
         "how physicists think about space and time."]


def _logp64(model, ids) -> np.ndarray:
    """log-softmax in float64 of the model's logits at every position: (N, V)."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([ids]), use_cache=False).logits[0]
    x = logits.double().numpy()
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _expected(base_model, cand_model, ids, cutoff=None):
    """Per token i >= 1 (predicted by position i - 1): KL(p || q), q(y) - p(y), same argmax."""
    lp, lq = _logp64(base_model, ids)[:-1], _logp64(cand_model, ids)[:-1]
    y = np.asarray(ids[1:])
    keep = np.ones_like(lp, dtype=bool) if cutoff is None else lp > -cutoff
    kld = np.where(keep, np.exp(lp) * (lp - lq), 0.0).sum(-1)
    rows = np.arange(len(y))
    delta_p = np.exp(lq[rows, y]) - np.exp(lp[rows, y])
    return kld, delta_p, lp.argmax(-1) == lq.argmax(-1), lq[rows, y], lp[rows, y]


@pytest.mark.parametrize("cutoff", [None, 16.0])
def test_each_position_equals_a_float64_computation_from_both_models_logits(runner, rounded, reference_model, cutoff):
    d = lv.divergence(runner, rounded, TEXTS[0], cutoff=cutoff)
    ids = runner.tokenizer(TEXTS[0])["input_ids"]
    kld, delta_p, same, _, _ = _expected(reference_model, rounded.model, ids, cutoff)
    assert list(d.token_ids) == ids and d.tokens[1] == runner.tokenizer.decode(ids[1:2])
    assert np.isnan(d.kld[0]) and np.isnan(d.delta_p[0])
    np.testing.assert_allclose(d.kld[1:], kld, atol=1e-5, rtol=0)
    np.testing.assert_allclose(d.delta_p[1:], delta_p, atol=1e-5, rtol=0)
    assert np.array_equal(d.same_top[1:] == 1.0, same)
    assert kld.max() > 1e-4 and (kld > 0).all()  # bf16 weights move the distributions: the check has teeth
    assert d.cutoff == cutoff and d.meta["candidate"]["model"] == rounded.name


def _llama_mean_unc(values):
    s, s2, n = sum(values), sum(v * v for v in values), len(values)
    f = s / n
    df = s2 / n - f * f
    return f, (math.sqrt(df / (n - 1)) if df > 0 and n > 10 else 0.0)


def test_a_list_pools_every_token_into_llama_perplexity_s_statistics(runner, rounded, reference_model):
    ds = lv.divergence(runner, rounded, TEXTS, cutoff=None, batch_tokens=64)  # several batches, padded rows
    assert isinstance(ds, lv.Divergences) and len(ds) == len(TEXTS)
    kld, dp, same, lq, lp = (np.concatenate(v) for v in zip(
        *[_expected(reference_model, rounded.model, runner.tokenizer(t)["input_ids"]) for t in TEXTS], strict=True))
    one = lv.divergence(runner, rounded, TEXTS[2], cutoff=None)
    np.testing.assert_allclose(ds[2].kld, one.kld, atol=1e-6, equal_nan=True)  # batched = alone
    s = ds.summary()
    n = len(kld)
    assert s["tokens"] == n
    mean, err = _llama_mean_unc(kld.tolist())
    assert s["mean_kld"] == pytest.approx(mean, abs=1e-6) and s["mean_kld_err"] == pytest.approx(err, rel=1e-3)
    ordered = np.sort(kld)
    assert s["kld_max"] == pytest.approx(ordered[-1], abs=1e-5) and s["kld_min"] == pytest.approx(ordered[0], abs=1e-5)
    p = 0.99 * (n - 1)
    assert s["kld_99"] == pytest.approx((1 - (p - int(p))) * ordered[int(p)] + (p - int(p)) * ordered[int(p) + 1],
                                        abs=1e-5)
    mid = ordered[n // 2] if n % 2 else 0.5 * (ordered[n // 2] + ordered[n // 2 - 1])
    assert s["median_kld"] == pytest.approx(mid, abs=1e-5)
    mse, mse_err = _llama_mean_unc((dp * dp).tolist())
    assert s["rms_delta_p"] == pytest.approx(math.sqrt(mse), abs=1e-6)
    assert s["rms_delta_p_err"] == pytest.approx(0.5 / math.sqrt(mse) * mse_err, rel=1e-3)
    p_top = same.mean()
    assert s["same_top"] == pytest.approx(p_top) and s["same_top_err"] == pytest.approx(
        math.sqrt(p_top * (1 - p_top) / (n - 1)))
    assert s["mean_ln_ppl_ratio"] == pytest.approx(np.mean(-lq) - np.mean(-lp), abs=1e-6)
    assert s["ppl_ratio"] == pytest.approx(math.exp(np.mean(-lq) - np.mean(-lp)), abs=1e-6)
    assert len(ds.to_pandas()) == sum(len(d) for d in ds)


def test_a_top_k_candidate_gives_a_range_that_holds_the_exact_value(runner, rounded):
    exact = lv.divergence(runner, rounded, TEXTS[0], cutoff=None)
    for k in (1, 5, 20):
        trace = rounded.score(TEXTS[0], top_logprobs=k)
        d = lv.divergence(runner, trace, TEXTS[0], cutoff=None)
        scored = d.scored
        assert (d.kld_low[scored] <= exact.kld[scored] + 1e-6).all()
        assert (d.kld_high[scored] >= exact.kld[scored]).all()
        # Δp stays exact, up to float32 forward passes (the trace came from runner.score, unbatched)
        np.testing.assert_allclose(d.delta_p, exact.delta_p, atol=2e-5, equal_nan=True)
        assert np.array_equal(d.same_top, exact.same_top, equal_nan=True)
        assert not d.exact and "kld_high" in d.to_pandas()
    summary = d.summary()
    assert summary["mean_kld"].low <= exact.summary()["mean_kld"] <= summary["mean_kld"].high


@pytest.mark.parametrize("cutoff", [None, 16.0])
def test_a_top_k_base_gives_a_finite_range_that_holds_the_exact_value(runner, rounded, cutoff):
    exact = lv.divergence(rounded, runner, TEXTS[2], cutoff=cutoff)
    widths = []
    for k in (1, 5, 20):
        d = lv.divergence(rounded.score(TEXTS[2], top_logprobs=k), runner, cutoff=cutoff)  # the trace's own ids
        scored = d.scored
        assert list(np.flatnonzero(scored)) == list(np.flatnonzero(exact.scored))
        assert (d.kld_low[scored] <= exact.kld[scored] + 1e-5).all()
        assert (d.kld_high[scored] >= exact.kld[scored] - 1e-5).all()
        assert np.isfinite(d.kld_high[scored]).all()
        # Δp stays exact, up to float32 forward passes (the trace's unbatched, the divergence's batched with a
        # mask: measured up to 1.02e-5 apart in p)
        np.testing.assert_allclose(d.delta_p, exact.delta_p, atol=2e-5, equal_nan=True)
        widths.append(float(np.mean(d.kld_high[scored] - d.kld_low[scored])))
    assert widths[0] > widths[1] > widths[2]  # more of the base known: a tighter range


def test_against_the_model_loaded_in_bfloat16(runner, reference_model):
    half = lv.load(dtype="bfloat16")
    d = lv.divergence(runner, half, TEXTS[1], cutoff=None)
    kld, delta_p, same, _, _ = _expected(reference_model, half.model, runner.tokenizer(TEXTS[1])["input_ids"])
    np.testing.assert_allclose(d.kld[1:], kld, atol=1e-5, rtol=0)
    np.testing.assert_allclose(d.delta_p[1:], delta_p, atol=1e-5, rtol=0)
    assert np.array_equal(d.same_top[1:] == 1.0, same)
    assert d.meta["candidate"]["dtype"] == "bfloat16"


def test_other_token_ids_are_refused_with_a_pointer_to_compare(runner):
    other = runner.score("A robot may not harm a human.")
    with pytest.raises(ValueError, match=r"lv\.compare"):
        lv.divergence(runner, other, TEXTS[0])


def test_bad_arguments_say_what_was_wrong(runner):
    with pytest.raises(ValueError, match="one side must give its whole"):
        lv.divergence(runner.score(TEXTS[1]), runner.score(TEXTS[1]), TEXTS[1])
    with pytest.raises(ValueError, match="cutoff must be a positive number"):
        lv.divergence(runner, runner, TEXTS[1], cutoff=-1)
    with pytest.raises(TypeError, match="must be a runner"):
        lv.divergence(runner, "gpt", TEXTS[1])
    with pytest.raises(ValueError, match="give the text"):
        lv.divergence(runner, runner)


def test_a_trace_without_logprobs_is_refused_with_what_to_do(runner):
    """A source that gave the tokens but no logprob for them (here the runner's own trace with its logprob
    column emptied, as a generation's unscored prompt is) cannot be compared: the error says which and why."""
    import dataclasses

    trace = runner.score(TEXTS[1], top_logprobs=5)
    blank = dataclasses.replace(trace, logprobs=np.full(len(trace), np.nan))
    with pytest.raises(ValueError, match=r"candidate trace gave no logprob for 9 of the 9 tokens .*Score the text"):
        lv.divergence(runner, blank, TEXTS[1], progress=False)
    half = dataclasses.replace(trace, logprobs=np.where(np.arange(len(trace)) < 4, np.nan, trace.logprobs))
    d = lv.divergence(runner, half, TEXTS[1], progress=False)  # a trace scored in part: those positions
    assert np.flatnonzero(d.scored).tolist() == list(range(4, len(trace)))
