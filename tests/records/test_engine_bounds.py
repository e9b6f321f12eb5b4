"""The ranges a server's top K allow in each engine's order (records/sampling_bounds.py, `engine=`).

The independent computation: whole distributions built here (test_sampling_bounds.with_tail), the K
most likely given to `probability_ranges(..., engine=)`, and each known token's exact probability
in that engine's order from the whole distribution by the plain-Python reference of each engine's
source (test_samplers.reference). Every exact value must lie in its range, for every spread of the
unknown rest tried; where the number is exact (T = 0, top-k <= K) the range is a point.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from logprob_viz.records.sampling_bounds import probability_ranges
from logprob_viz.views.explorer.sampling_settings import Settings
from tests.records.test_samplers import reference
from tests.records.test_sampling_bounds import K, with_tail

ENGINES = ("vllm", "llama.cpp", "sglang", "ollama")
TEMPERATURES = (0.0, 0.4, 1.0, 1.6)
TOP_KS = (0, K - 2, K, K + 3)
TOP_PS = (1.0, 0.9, 0.5)
MIN_PS = (0.0, 0.05, 0.3)


def exact_probs(full: np.ndarray, engine: str, t: float, k: int, p: float, m: float) -> np.ndarray:
    out = np.zeros(len(full))
    if t == 0:  # greedy in every engine: the most likely token alone
        out[int(np.argmax(full))] = 1.0
        return out
    kept = reference(full, engine, t=t, top_k=k, top_p=p, min_p=m)
    for i, lp in kept.items():
        out[i] = math.exp(lp)
    return out


def check_grid(full: np.ndarray, known_lp: np.ndarray, engine: str) -> int:
    order = np.argsort(-full, kind="stable")[:K]
    checks = 0
    for t, k, p, m in itertools.product(TEMPERATURES, TOP_KS, TOP_PS, MIN_PS):
        ranges = probability_ranges(known_lp, Settings(temperature=t, top_k=k, top_p=p, min_p=m), engine=engine)
        exact = exact_probs(full, engine, t, k, p, m)[order]
        for (low, high), value in zip(ranges, exact, strict=True):
            assert low - 1e-9 <= value <= high + 1e-9, (engine, t, k, p, m, low, value, high)
            checks += 1
    return checks


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("spread", ["like the last", "thin", "a few", "random"])
def test_every_spread_lies_in_each_engines_ranges(engine, spread):
    rng = np.random.default_rng(11)
    grid = len(TEMPERATURES) * len(TOP_KS) * len(TOP_PS) * len(MIN_PS)
    for _ in range(2):
        known = np.sort(rng.dirichlet(np.full(K + 1, 0.6)))[::-1][:K]
        full = with_tail(known, spread, rng)
        assert check_grid(full, np.log(known), engine) == grid * K


def test_the_engines_ranges_differ_where_their_orders_do():
    """llama.cpp judges min-p at T = 1: at T = 1.6 and min-p 0.3 it keeps tokens transformers cuts, and
    says so in its ranges (a token transformers surely cuts gets a positive p in llama.cpp)."""
    known = np.log(np.array([0.4, 0.2, 0.1, 0.08, 0.05]))
    settings = Settings(temperature=1.6, min_p=0.3)
    theirs = probability_ranges(known, settings)
    llama = probability_ranges(known, settings, engine="llama.cpp")
    # p / p_top >= 0.3 ** 1.6 = 0.146 in transformers (min-p after T) but >= 0.3 in llama.cpp: 0.1 / 0.4 = 0.25
    assert theirs[2][0] > 0 and llama[2] == (0.0, 0.0)
    # nothing unknown passes llama.cpp's min-p (each is < 0.05 < 0.3 * 0.4): its numbers are exact
    assert all(low == pytest.approx(high) for low, high in llama)
    w = np.array([0.4, 0.2]) ** (1 / 1.6)
    assert llama[0][0] == pytest.approx(w[0] / w.sum(), rel=1e-12)


def test_an_unknown_engine_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="engine must be one of transformers, vllm, llama.cpp, sglang, ollama"):
        probability_ranges(np.log([0.5, 0.2]), Settings(temperature=1.0), engine="tgi")
