"""The ranges a server's top K allow under other sampling settings (records/sampling_bounds.py).

The independent computation: whole distributions built here, the K most likely tokens given to
`probability_ranges`, and each known token's exact probability under the settings computed from
the whole distribution by transformers' own logits warpers (the order `generate` applies them), then
a softmax. The unknown rest is spread in the ways that push the bounds (one token per K-th
probability, thousands of tiny tokens, a few) and at random; every exact value must lie in its
range, and the range must be a point where the number is exact.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from logprob_viz.records.sampling_bounds import probability_ranges
from logprob_viz.views.explorer.sampling_settings import Settings
from warpers import warp

K = 5
TEMPERATURES = (0.0, 0.3, 0.7, 1.0, 1.5, 2.0)
TOP_KS = (0, K - 1, K, K + 3, K + 200)
TOP_PS = (1.0, 0.95, 0.6, 0.2)
MIN_PS = (0.0, 0.02, 0.3)


def warped(logprobs: np.ndarray, temperature: float, top_k: int, top_p: float, min_p: float) -> np.ndarray:
    import torch

    return warp(torch.tensor(logprobs, dtype=torch.float64)[None], temperature, top_k, top_p, min_p)


def with_tail(known_p: np.ndarray, spread: str, rng) -> np.ndarray:
    """A whole distribution (logprobs) whose K most likely are `known_p` (descending), the rest `spread`."""
    mass, last = 1.0 - known_p.sum(), known_p[-1]
    if spread == "like the last":  # as few tokens as can hold it, each (just under) as likely as the K-th
        # just under and not tied: transformers' top-k keeps every token tied with the k-th
        n = int(np.floor(mass / last))
        tail = last * (1 - 1e-9 * np.arange(1, n + 1))
        tail = np.concatenate([tail, [mass - tail.sum()]])
    elif spread == "thin":  # (not tied, as above)
        tail = np.linspace(1.0, 1.001, 20_000)
        tail *= mass / tail.sum()
    elif spread == "a few":
        n = 8 if mass / 8 <= last else int(np.ceil(mass / last))
        tail = np.linspace(1.0, 1.001, n)
        tail *= min(mass / tail.sum(), last * (1 - 1e-9) / tail.max())
        tail = np.concatenate([tail, [mass - tail.sum()]])
    else:  # at random, capped at the K-th
        tail = rng.dirichlet(np.full(int(rng.integers(2, 3000)), rng.uniform(0.05, 3.0))) * mass
        cap = last * (1 - 1e-9)  # (just under the K-th, as above)
        while tail.max() > cap:
            over = tail > cap
            excess = (tail[over] - cap).sum()
            tail[over] = cap
            pieces = np.ceil(excess / (last * 0.5))
            tail = np.concatenate([tail, np.full(int(pieces), excess / pieces)])
    tail = tail[tail > 0]
    return np.log(np.concatenate([known_p, tail]))


def check_all_settings(full: np.ndarray, known_lp: np.ndarray) -> int:
    """Every setting of the grid: each known token's exact p lies in its range. Returns the checks."""
    order = np.argsort(-full, kind="stable")[:K]
    checks = 0
    for t, k, p, m in itertools.product(TEMPERATURES, TOP_KS, TOP_PS, MIN_PS):
        ranges = probability_ranges(known_lp, Settings(temperature=t, top_k=k, top_p=p, min_p=m))
        exact = warped(full, t, k, p, m)[order]
        for (low, high), value in zip(ranges, exact, strict=True):
            assert low - 1e-9 <= value <= high + 1e-9, (t, k, p, m, low, value, high)
            checks += 1
    return checks


@pytest.mark.parametrize("spread", ["like the last", "thin", "a few", "random"])
def test_every_spread_of_the_unknown_mass_lies_in_the_ranges(spread):
    rng = np.random.default_rng(7)
    for _ in range(3):
        known = np.sort(rng.dirichlet(np.full(K + 1, 0.6)))[::-1][:K]  # the top K of some distribution
        known = np.sort(known)[::-1]
        full = with_tail(known, spread, rng)
        settings = len(TEMPERATURES) * len(TOP_KS) * len(TOP_PS) * len(MIN_PS)
        assert check_all_settings(full, np.log(known)) == settings * K


def test_the_real_models_distribution_and_its_tail_reshaped(runner):
    """The default model's next-token distribution after a prompt: its real tail, then the same mass
    spread the other ways."""
    from logprob_viz.views.explorer.pinned import Distributions

    ids = runner.tokenizer("The largest planet in the solar system is")["input_ids"]
    full = Distributions().compute(runner, tuple(ids))
    known_lp = np.sort(full)[::-1][:K]
    check_all_settings(full, known_lp)
    rng = np.random.default_rng(3)
    for spread in ("like the last", "thin", "random"):
        check_all_settings(with_tail(np.exp(known_lp), spread, rng), known_lp)


def test_a_point_where_the_number_is_exact():
    known = np.log(np.array([0.5, 0.2, 0.1, 0.05, 0.03]))
    full = with_tail(np.exp(known), "thin", np.random.default_rng(0))
    for settings in (Settings(temperature=1.0), Settings(temperature=0.0), Settings(temperature=1.7, top_k=3),
                     Settings(temperature=0.5, min_p=0.2)):  # min-p 0.2 at T 0.5 cuts below 0.5 * 0.2**0.5
        ranges = probability_ranges(known, settings)
        exact = warped(full, settings.temperature, settings.top_k, settings.top_p, settings.min_p)[:K]
        for (low, high), value in zip(ranges, exact, strict=True):
            assert low == pytest.approx(high, abs=1e-12) and value == pytest.approx(low, abs=1e-9), settings


def test_the_ranges_are_not_wider_than_the_spreads_make_them():
    """At T = 0.7 with no cut, the top token's range runs from the concentrated tail (lowest) to the
    thinnest one (highest): both ends are reached by some spread (the thin one's 20,000 tokens still
    hold 0.3 % of the weight: the limit is reached as their number grows)."""
    known_p = np.array([0.4, 0.2, 0.1, 0.05, 0.05])
    (low, high), *_ = probability_ranges(np.log(known_p), Settings(temperature=0.7))
    rng = np.random.default_rng(0)
    concentrated = warped(with_tail(known_p, "like the last", rng), 0.7, 0, 1.0, 0.0)[0]
    thin = warped(with_tail(known_p, "thin", rng), 0.7, 0, 1.0, 0.0)[0]
    assert low == pytest.approx(concentrated, rel=1e-9)
    assert thin < high <= thin * 1.005


def test_the_panel_of_a_servers_trace_shows_ranges_that_hold(runner):
    """A generated trace read as a server's (its top 5 only): the panel's ranges hold the exact
    numbers from the model's whole distribution, and hostile token text stays text."""
    import dataclasses

    from logprob_viz.views.explorer.pinned import Distributions, ranges_at
    from logprob_viz.views.explorer.pinned_html import ranges_html

    trace = runner.generate("The largest planet in the solar system is", max_new_tokens=4, top_logprobs=K)
    at = trace.prompt_len  # the first generated token
    full = Distributions().compute(runner, tuple(int(i) for i in trace.token_ids[:at]))
    settings = Settings(temperature=0.6, top_p=0.9)
    numbers = ranges_at(trace, at, settings)
    exact = warped(full, 0.6, 0, 0.9, 0.0)
    assert [row["text"] for row in numbers["rows"]] == list(trace.top_tokens[at])
    for row, token_id in zip(numbers["rows"], trace.top_ids[at], strict=True):
        assert row["low"] - 1e-9 <= exact[token_id] <= row["high"] + 1e-9
        assert row["model"] == pytest.approx(np.exp(full[token_id]), rel=1e-4)
    assert numbers["rest"] == pytest.approx(1 - np.exp(np.sort(full)[::-1][:K]).sum(), abs=1e-4)

    hostile = '<img src=x onerror="window.__pwned = 1">'
    tops = [list(row) for row in trace.top_tokens]
    tops[at][1] = hostile
    page = ranges_html(trace, at, ranges_at(dataclasses.replace(trace, top_tokens=tops, vocab=None), at, settings))
    assert "<img" not in page and "&lt;img" in page
