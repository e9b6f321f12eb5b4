"""llama-perplexity's statistics of per-token KL, Δp and same-top (tools/perplexity/perplexity.cpp,
``kl_divergence``), by its definitions, so a figure can be checked against ``llama-perplexity
--kl-divergence`` itself. The pieces it uses, quoted:

    auto mean_and_uncertainty = [] (double sum, double sum2, size_t count) {
        if (count < 1) return std::make_pair(0., 0.);
        double f = sum/count;
        double df = sum2/count - f*f;
        df = df > 0 && count > 10 ? sqrt(df/(count-1)) : 0.;         // standard error; 0 for <= 10 values
        return std::make_pair(f, df); };
    auto covariance = [] (double suma, double sumb, double sumab, size_t count) {
        if (count < 10) return 0.0;
        double var = sumab/count - (suma/count)*(sumb/count);
        var /= count - 1; return var; };
    auto percentile = [] (std::vector<float> values, float fraction) {   // values sorted
        if (fraction <= 0) return values.front();
        if (fraction >= 1) return values.back();
        float p = fraction*(values.size() - 1);
        size_t ip = size_t(p); p -= ip;
        return (1 - p)*values[ip] + p*values[std::min(ip+1, values.size()-1)]; };
    median: the middle value, or the mean of the two middle ones
    RMS Δp = sqrt(mean of Δp²), its uncertainty 0.5/RMS * (uncertainty of the mean of Δp²)
    same top p = n_same_top/count, uncertainty sqrt(p*(1 - p)/(count - 1))
    ln(PPL(Q)/PPL(base)) = mean nll(Q) - mean nll(base), uncertainty
        sqrt(err(Q)² + err(base)² - 2*cov(nll(Q), nll(base)))

Probabilities are fractions (llama.cpp prints percent). llama.cpp prints the KL and Δp tables only
from 100 tokens on; here they are computed for any count (with the same 0 uncertainty up to 10).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["Interval", "summary", "mean_and_uncertainty", "percentile", "median", "KLD_PERCENTILES",
           "DELTA_P_PERCENTILES"]

# (key suffix, fraction) of the percentiles llama.cpp prints, top down
KLD_PERCENTILES = (("99_9", 0.999), ("99", 0.99), ("95", 0.95), ("90", 0.90), ("10", 0.10), ("5", 0.05),
                   ("1", 0.01), ("0_1", 0.001))
DELTA_P_PERCENTILES = (("99_9", 0.999), ("99", 0.99), ("95", 0.95), ("90", 0.90), ("75", 0.75), ("25", 0.25),
                       ("10", 0.10), ("5", 0.05), ("1", 0.01), ("0_1", 0.001))


class Interval(NamedTuple):
    """A statistic known only within [low, high] (a side gave only its top-K): never one number."""

    low: float
    high: float


def mean_and_uncertainty(values: np.ndarray) -> tuple[float, float]:
    """llama.cpp's mean and its standard error (0 for 10 values or fewer, or no spread)."""
    count = len(values)
    if count < 1:
        return 0.0, 0.0
    f = float(np.sum(values)) / count
    df = float(np.sum(np.square(values))) / count - f * f
    return f, math.sqrt(df / (count - 1)) if df > 0 and count > 10 else 0.0


def _covariance(a: np.ndarray, b: np.ndarray) -> float:
    count = len(a)
    if count < 10:
        return 0.0
    return (float(np.dot(a, b)) / count - (float(np.sum(a)) / count) * (float(np.sum(b)) / count)) / (count - 1)


def percentile(sorted_values: np.ndarray, fraction: float) -> float:
    """llama.cpp's percentile: linear interpolation at fraction * (N - 1) of the sorted values."""
    if fraction <= 0:
        return float(sorted_values[0])
    if fraction >= 1:
        return float(sorted_values[-1])
    p = fraction * (len(sorted_values) - 1)
    ip = int(p)
    p -= ip
    return float((1 - p) * sorted_values[ip] + p * sorted_values[min(ip + 1, len(sorted_values) - 1)])


def median(sorted_values: np.ndarray) -> float:
    n = len(sorted_values)
    return float(sorted_values[n // 2] if n % 2 else 0.5 * (sorted_values[n // 2] + sorted_values[n // 2 - 1]))


def _kld_stats(low: np.ndarray, high: np.ndarray) -> dict:
    """The KL lines; where any value is a range, each statistic is an `Interval`: the mean, the median
    and the percentiles of the lows and of the highs bound those of the true values (each is monotone in
    every value), while the standard error of unknown values has no bound (None)."""
    exact = bool(np.array_equal(low, high))
    sides = [np.sort(low)] if exact else [np.sort(low), np.sort(high)]

    def stat(fn):
        values = [fn(s) for s in sides]
        return values[0] if exact else Interval(*values)

    out = {"mean_kld": stat(lambda s: mean_and_uncertainty(s)[0]),
           "mean_kld_err": mean_and_uncertainty(low)[1] if exact else None,
           "median_kld": stat(median), "kld_max": stat(lambda s: float(s[-1]))}
    for name, fraction in KLD_PERCENTILES:
        out[f"kld_{name}"] = stat(lambda s, f=fraction: percentile(s, f))
    out["kld_min"] = stat(lambda s: float(s[0]))
    return out


def _delta_p_stats(delta_p: np.ndarray) -> dict:
    out = dict(zip(("mean_delta_p", "mean_delta_p_err"), mean_and_uncertainty(delta_p), strict=True))
    ordered = np.sort(delta_p)
    out["delta_p_max"] = float(ordered[-1])
    for name, fraction in DELTA_P_PERCENTILES:
        out[f"delta_p_{name}"] = percentile(ordered, fraction)
    out["median_delta_p"] = median(ordered)
    out["delta_p_min"] = float(ordered[0])
    mse, mse_err = mean_and_uncertainty(np.square(delta_p))
    rms = math.sqrt(mse)
    out["rms_delta_p"], out["rms_delta_p_err"] = rms, (0.5 / rms * mse_err if rms > 0 else 0.0)
    return out


def _ppl_stats(nll: np.ndarray, nll_base: np.ndarray) -> dict:
    mean_q, err_q = mean_and_uncertainty(nll)
    mean_base, err_base = mean_and_uncertainty(nll_base)
    ratio = mean_q - mean_base
    ratio_err = math.sqrt(max(err_q ** 2 + err_base ** 2 - 2.0 * _covariance(nll, nll_base), 0.0))
    return {"mean_ln_ppl_ratio": ratio, "mean_ln_ppl_ratio_err": ratio_err, "ppl_ratio": math.exp(ratio),
            "ppl_ratio_err": math.exp(ratio) * ratio_err, "ppl": math.exp(mean_q), "ppl_base": math.exp(mean_base)}


def summary(kld_low, kld_high, delta_p, same_top, cand_logprob, base_logprob) -> dict:
    """llama-perplexity's statistics of the scored positions given (1-D arrays, NaN-free except
    ``same_top``, NaN where a side's top token is unknown). Keys: llama.cpp's names in snake case."""
    count = len(delta_p)
    if count == 0:
        raise ValueError("no scored token: a divergence needs at least one position that both sides predict "
                         "(a text of two tokens or more)")
    out = _kld_stats(np.asarray(kld_low, dtype=np.float64), np.asarray(kld_high, dtype=np.float64))
    out.update(_delta_p_stats(np.asarray(delta_p, dtype=np.float64)))
    same = np.asarray(same_top, dtype=np.float64)
    same = same[~np.isnan(same)]
    if len(same):
        p_top = float(same.sum()) / len(same)
        out["same_top"] = p_top
        out["same_top_err"] = math.sqrt(p_top * (1 - p_top) / (len(same) - 1)) if len(same) > 1 else 0.0
    else:
        out["same_top"] = out["same_top_err"] = None  # no position where both top tokens are known
    out.update(_ppl_stats(-np.asarray(cand_logprob, dtype=np.float64), -np.asarray(base_logprob, dtype=np.float64)))
    out["tokens"] = count
    return out
