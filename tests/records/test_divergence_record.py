"""The divergence record's math and statistics against independent computations written here:
per position, plain float64 loops over the vocabulary (llama.cpp's sum, quoted in positions.py); the
summary, llama.cpp's formulas (tools/perplexity/perplexity.cpp, kl_divergence) applied one by one.
The real models are in tests/sources/test_divergence.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from logprob_viz.records.divergence import Divergence, Divergences, Interval
from logprob_viz.records.divergence import positions as P


def _dists(seed: int, t: int = 40, v: int = 300, spread: float = 4.0):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(t, v)) * spread
    cand = base + rng.normal(size=(t, v)) * 0.7  # a perturbed copy: small KLs and some flips
    lp = base - np.log(np.exp(base).sum(-1, keepdims=True))
    lq = cand - np.log(np.exp(cand).sum(-1, keepdims=True))
    return lp, lq, rng.integers(0, v, t)


def _kl_loop(lp_row, lq_row, cutoff):
    total = 0.0
    for a, b in zip(lp_row.tolist(), lq_row.tolist(), strict=True):
        if cutoff is None or a > -cutoff:
            total += math.exp(a) * (a - b)
    return total


@pytest.mark.parametrize("cutoff", [None, 16.0, 3.0])
def test_exact_rows_equal_a_loop_over_the_vocabulary(cutoff):
    lp, lq, y = _dists(0)
    rows = P.exact_rows(lp, lq, y, cutoff, k=4)
    for i in range(len(y)):
        assert rows["kld_low"][i] == pytest.approx(_kl_loop(lp[i], lq[i], cutoff), abs=1e-12)
        assert rows["delta_p"][i] == pytest.approx(math.exp(lq[i, y[i]]) - math.exp(lp[i, y[i]]), abs=1e-15)
        base_top = max(range(lp.shape[1]), key=lambda j, r=lp[i]: (r[j], -j))
        cand_top = max(range(lq.shape[1]), key=lambda j, r=lq[i]: (r[j], -j))
        assert rows["same_top"][i] == float(base_top == cand_top)
        assert rows["base_top_rank"][i] == 1 + sum(x > lq[i, base_top] for x in lq[i])
        assert list(rows["base_alt_ids"][i]) == sorted(range(lp.shape[1]), key=lambda j, r=lp[i]: -r[j])[:4]
    assert (rows["kld_low"] == rows["kld_high"]).all()
    assert 0 < rows["same_top"].sum() < len(y)  # the data has both agreements and flips


@pytest.mark.parametrize("cutoff", [None, 16.0, 2.0])
@pytest.mark.parametrize("k", [0, 1, 5, 40])
def test_the_top_k_range_holds_the_exact_value(cutoff, k):
    lp, lq, y = _dists(1)
    exact = P.exact_rows(lp, lq, y, cutoff, k=3)
    ids, values = P.top_k(lq, k)
    rows = P.interval_rows(lp, y, lq[np.arange(len(y)), y], ids, values, cutoff, k=3)
    assert (rows["kld_low"] <= exact["kld_low"] + 1e-12).all()
    assert (rows["kld_high"] >= exact["kld_low"] - 1e-12).all()
    assert np.isfinite(rows["kld_low"]).all()
    if cutoff is None:  # the full sum's bound is a KL itself (of the merged distributions): >= 0, and > 0 here
        assert (rows["kld_low"] >= 0).all() and (rows["kld_low"] > 0).any()
    # what needs only known tokens stays exact
    assert np.allclose(rows["delta_p"], exact["delta_p"], atol=0, rtol=0)
    if k:
        assert np.array_equal(rows["same_top"], exact["same_top"])
    else:
        assert np.isnan(rows["same_top"]).all()


def test_a_top_k_as_long_as_the_vocabulary_gives_the_exact_value():
    lp, lq, y = _dists(2, v=60)
    exact = P.exact_rows(lp, lq, y, None, k=3)
    rows = P.interval_rows(lp, y, lq[np.arange(len(y)), y], *P.top_k(lq, 60), None, k=3)
    assert np.allclose(rows["kld_low"], exact["kld_low"], atol=1e-12)
    assert np.allclose(rows["kld_high"], exact["kld_low"], atol=1e-12)


# -- llama.cpp's statistics, applied one by one ------------------------------------------------


def _mean_unc(values):
    n = len(values)
    s, s2 = sum(values), sum(v * v for v in values)
    f = s / n
    df = s2 / n - f * f
    return f, (math.sqrt(df / (n - 1)) if df > 0 and n > 10 else 0.0)


def _pct(sorted_values, fraction):
    p = fraction * (len(sorted_values) - 1)
    ip = int(p)
    p -= ip
    return (1 - p) * sorted_values[ip] + p * sorted_values[min(ip + 1, len(sorted_values) - 1)]


def _record(seed: int, cutoff=16.0):
    lp, lq, y = _dists(seed, t=30)
    rows = P.exact_rows(lp, lq, y, cutoff, k=2)
    n = len(y) + 1  # token 0 is not scored
    return Divergence.from_rows(["t"] * n, [b"t"] * n, np.r_[0, y], np.arange(1, n), rows, cutoff=cutoff), rows


def test_summary_is_llama_perplexity_s_statistics_pooled_over_texts():
    (d1, r1), (d2, r2) = _record(3), _record(4)
    s = Divergences([d1, d2]).summary()
    kld = sorted(np.r_[r1["kld_low"], r2["kld_low"]].tolist())
    dp = np.r_[r1["delta_p"], r2["delta_p"]].tolist()
    n = len(kld)
    assert s["tokens"] == n == 60
    mean, err = _mean_unc(kld)
    assert s["mean_kld"] == pytest.approx(mean, rel=1e-12) and s["mean_kld_err"] == pytest.approx(err, rel=1e-9)
    assert s["median_kld"] == pytest.approx(0.5 * (kld[n // 2] + kld[n // 2 - 1]), rel=1e-12)
    assert s["kld_max"] == kld[-1] and s["kld_min"] == kld[0]
    for key, f in [("99_9", .999), ("99", .99), ("95", .95), ("90", .90), ("10", .10), ("5", .05), ("1", .01),
                   ("0_1", .001)]:
        assert s[f"kld_{key}"] == pytest.approx(_pct(kld, f), rel=1e-12), key
    mse, mse_err = _mean_unc([x * x for x in dp])
    assert s["rms_delta_p"] == pytest.approx(math.sqrt(mse), rel=1e-12)
    assert s["rms_delta_p_err"] == pytest.approx(0.5 / math.sqrt(mse) * mse_err, rel=1e-9)
    same = np.r_[r1["same_top"], r2["same_top"]]
    p_top = same.sum() / n
    assert s["same_top"] == pytest.approx(p_top) and s["same_top_err"] == pytest.approx(
        math.sqrt(p_top * (1 - p_top) / (n - 1)))
    nll = (-np.r_[r1["cand_logprob"], r2["cand_logprob"]]).tolist()
    nll_base = (-np.r_[r1["base_logprob"], r2["base_logprob"]]).tolist()
    ratio = _mean_unc(nll)[0] - _mean_unc(nll_base)[0]
    assert s["mean_ln_ppl_ratio"] == pytest.approx(ratio, rel=1e-12)
    assert s["ppl_ratio"] == pytest.approx(math.exp(ratio), rel=1e-12)
    cov = (sum(a * b for a, b in zip(nll, nll_base, strict=True)) / n - (sum(nll) / n) * (sum(nll_base) / n)) / (n - 1)
    unc = math.sqrt(_mean_unc(nll)[1] ** 2 + _mean_unc(nll_base)[1] ** 2 - 2 * cov)
    assert s["mean_ln_ppl_ratio_err"] == pytest.approx(unc, rel=1e-6)
    assert s["cutoff"] == 16.0


def test_ten_tokens_or_fewer_have_no_uncertainty_and_the_median_of_an_odd_count_is_the_middle():
    lp, lq, y = _dists(5, t=9)
    rows = P.exact_rows(lp, lq, y, None, k=1)
    d = Divergence.from_rows(["t"] * 10, [b"t"] * 10, np.r_[0, y], np.arange(1, 10), rows, cutoff=None)
    s = d.summary()
    assert s["mean_kld_err"] == 0.0 and s["rms_delta_p_err"] == 0.0
    assert s["median_kld"] == sorted(rows["kld_low"])[4]
    assert np.isnan(d.kld[0]) and np.allclose(d.kld[1:], rows["kld_low"])
    assert list(d.flips) == [i + 1 for i in np.flatnonzero(rows["same_top"] == 0)]


def test_a_range_is_never_summarised_as_one_number():
    lp, lq, y = _dists(6, t=20)
    rows = P.interval_rows(lp, y, lq[np.arange(20), y], *P.top_k(lq, 5), None, k=2)
    d = Divergence.from_rows(["t"] * 21, [b"t"] * 21, np.r_[0, y], np.arange(1, 21), rows, cutoff=None)
    s = d.summary()
    assert isinstance(s["mean_kld"], Interval) and s["mean_kld"].low == pytest.approx(rows["kld_low"].mean())
    assert s["mean_kld"].high == math.inf and s["mean_kld_err"] is None
    assert not d.exact
    with pytest.raises(ValueError, match="kld_low and kld_high"):
        d.kld  # noqa: B018
    frame = d.to_pandas()
    assert "kld" not in frame and {"kld_low", "kld_high"} <= set(frame.columns)


def test_pooling_different_cutoffs_is_refused():
    (d1, _), (d2, _) = _record(7, cutoff=16.0), _record(8, cutoff=None)
    with pytest.raises(ValueError, match="different KL cutoffs"):
        Divergences([d1, d2]).summary()


@pytest.mark.parametrize("cutoff", [None, 16.0, 3.0])
@pytest.mark.parametrize("k", [0, 1, 5, 40])
def test_a_top_k_base_s_range_is_finite_and_holds_the_exact_value(cutoff, k):
    lp, lq, y = _dists(9)
    exact = P.exact_rows(lp, lq, y, cutoff, k=3)
    rows = P.base_interval_rows(lq, y, lp[np.arange(len(y)), y], *P.top_k(lp, k), cutoff, k=3)
    assert (rows["kld_low"] <= exact["kld_low"] + 1e-12).all()
    assert (rows["kld_high"] >= exact["kld_low"] - 1e-12).all()
    assert np.isfinite(rows["kld_high"]).all()
    assert np.allclose(rows["delta_p"], exact["delta_p"], atol=0, rtol=0)
    full = P.base_interval_rows(lq, y, lp[np.arange(len(y)), y], *P.top_k(lp, lp.shape[1]), cutoff, k=3)
    assert np.allclose(full["kld_low"], exact["kld_low"], atol=1e-12)  # the whole base known: exact
    assert np.allclose(full["kld_high"], exact["kld_low"], atol=1e-12)


def _least_kl_candidate(lp_row, known_q: dict, cap: float) -> np.ndarray:
    """A candidate consistent with what a top-K candidate lists (``known_q``: id -> q; every other token at
    most ``cap``, the smallest listed q), built to have the least KL(p ‖ q): the unknown tokens get
    q_j = min(cap, p_j / lam), lam found by bisection so that they take the whole unlisted mass."""
    p = np.exp(lp_row)
    unknown = np.ones(len(p), dtype=bool)
    unknown[list(known_q)] = False
    rest = 1.0 - sum(known_q.values())
    lo, hi = 1e-9, 1e9
    for _ in range(400):
        lam = math.sqrt(lo * hi)
        lo, hi = (lam, hi) if np.minimum(cap, p[unknown] / lam).sum() > rest else (lo, lam)
    q = np.zeros(len(p))
    q[unknown] = np.minimum(cap, p[unknown] / hi)
    for i, value in known_q.items():
        q[i] = value
    return q


@pytest.mark.parametrize("k", [1, 5, 20])
def test_a_top_k_candidate_s_lower_end_is_the_least_kl_of_a_candidate_with_that_list(k):
    """The lower end is attained: a whole candidate with the same top-K and chosen token (each unlisted
    token at most as likely as the last listed) has exactly that KL, so no higher lower end is certain."""
    lp, lq, y = _dists(3)
    ids, values = P.top_k(lq, k)
    rows = P.interval_rows(lp, y, lq[np.arange(len(y)), y], ids, values, None, k=k)
    for t in range(len(y)):
        known = {int(i): math.exp(v) for i, v in zip(ids[t], values[t], strict=True)}
        known[int(y[t])] = math.exp(lq[t, y[t]])
        q = _least_kl_candidate(lp[t], known, math.exp(values[t, -1]))
        others = np.delete(q, list(known))
        assert q.sum() == pytest.approx(1.0, abs=1e-9) and others.max() <= math.exp(values[t, -1]) * (1 + 1e-12)
        assert rows["kld_low"][t] == pytest.approx(_kl_loop(lp[t], np.log(q), None), abs=1e-9)


def test_a_list_whose_float32_probabilities_sum_past_1_still_gives_a_finite_lower_end():
    """A server normalizes in float32 (llama-server's 49152 probabilities sum to 1 within ~2e-4): a long
    list can then leave no unlisted mass. The lower end falls back to the cap alone, finite and certain
    up to the shift of the numbers (here log q + 1e-3)."""
    lp, lq, y = _dists(4, v=60)
    exact = P.exact_rows(lp, lq, y, None, k=3)
    ids, values = P.top_k(lq, 55)
    shift = 1e-3
    rows = P.interval_rows(lp, y, lq[np.arange(len(y)), y] + shift, ids, values + shift, None, k=3)
    assert np.isfinite(rows["kld_low"]).all()
    assert (rows["kld_low"] <= exact["kld_low"] + shift).all() and (rows["kld_low"] > 0).any()
