"""`records.audit` with a reference known at its top N only (`TopN`), on distributions made here.

The truth is each distribution over its whole vocabulary (float64, numpy, written here): the
normaliser's bounds must hold the true normaliser, and a top-N reference must name raw, processed
and moved numbers as the whole one does. Zipf-like distributions with a long tail, so that the tokens
beyond the N matter at T > 1, as on a real model (test_audit_llamacpp.py measures them there).
"""

from __future__ import annotations

import numpy as np
import pytest

from logprob_viz.records.audit import Listed, TopN, classify, log_z_bounds
from logprob_viz.records.samplers import sampled_from

VOCAB = 5000
N = 100


def distribution(rng, steepness: float) -> np.ndarray:
    """Log-probabilities (VOCAB,): a Zipf-like shape, shuffled ids, a little noise."""
    logits = -steepness * np.log(np.arange(1, VOCAB + 1)) + rng.normal(0, 0.3, VOCAB)
    lp = logits - np.logaddexp.reduce(logits)
    return lp[rng.permutation(VOCAB)]


def top_n(lp: np.ndarray, n: int = N, also: int | None = None) -> TopN:
    known = np.full(len(lp), np.nan)
    ids = np.argsort(-lp)[:n]
    known[ids] = lp[ids]
    if also is not None:
        known[also] = lp[also]
    return TopN(known, n)


@pytest.mark.parametrize("temperature", [0.5, 0.7, 1.0, 1.5, 2.0])
@pytest.mark.parametrize("steepness", [0.8, 1.2, 2.0])
def test_the_bounds_hold_the_whole_normaliser(temperature, steepness):
    rng = np.random.default_rng(int(steepness * 10 + temperature * 100))
    for _ in range(5):
        lp = distribution(rng, steepness)
        truth = np.logaddexp.reduce(lp / temperature)
        lo, hi = log_z_bounds(top_n(lp, also=int(np.argmin(lp))), temperature)
        assert lo - 1e-9 <= truth <= hi + 1e-9, (lo, truth, hi)
        if temperature == 1.0:
            assert hi - lo < 1e-9  # at T = 1 the values are out of the whole vocabulary: exact


def listed(lp_served: np.ndarray, chosen: list[int], k: int = 5) -> list[Listed]:
    """The chosen token and the top k of each served row, as a server lists them."""
    rows = []
    for i, (row, c) in enumerate(zip(lp_served, chosen, strict=True)):
        ids = list(dict.fromkeys([c, *np.argsort(-row)[:k].tolist()]))
        rows.append(Listed(i, f"t{i}", np.array(ids), row[ids]))
    return rows


def processed(lp: np.ndarray, t: float, keep: int) -> np.ndarray:
    """Cut to the `keep` most likely tokens, scaled by 1 / t, renormalised (-inf: cut)."""
    out = np.full(len(lp), -np.inf)
    kept = np.argsort(-lp)[:keep]
    out[kept] = lp[kept] / t - np.logaddexp.reduce(lp[kept] / t)
    return out


def test_a_top_n_reference_names_what_the_whole_one_does():
    rng = np.random.default_rng(7)
    whole = [distribution(rng, 1.2) for _ in range(8)]
    chosen = [int(np.argsort(-lp)[1]) for lp in whole]
    refs = [top_n(lp) for lp in whole]
    raw = classify(listed(np.array(whole), chosen), refs)
    assert raw.kind == "raw" and raw.limits == []
    sizes = [3, 7, 12, 20, 5, 9, 30, 4]
    served = np.array([processed(lp, 0.7, n) for lp, n in zip(whole, sizes, strict=True)])
    rows = listed(served, chosen, k=40)
    got = classify(rows, refs, requested={"temperature": 0.7, "top_k": 40})
    assert got.kind == "processed" and got.settings["temperature"] == pytest.approx(0.7, abs=1e-6)
    assert got.settings["kept"] == classify(rows, whole).settings["kept"]  # the same ranges as the whole reference
    for n, k in zip(sizes, got.settings["kept"], strict=True):
        lo, hi = k if isinstance(k, tuple) else (k, k)
        assert lo == n <= hi < N  # (the cut tokens listed are arbitrary ones: sizes above n the tolerance allows)
    # llama.cpp's chain (package's sampler; what is compared is the two references): the same engines named,
    # but SGLang, whose joint top-p needs the whole vocabulary
    chain = {"temperature": 0.7, "top_k": 40, "top_p": 0.9, "min_p": 0.05}
    served = np.array([sampled_from(lp, engine="llama.cpp", **chain) for lp in whole])
    by_top_n, by_whole = (classify(listed(served, chosen, k=40), r, requested=chain) for r in (refs, whole))
    assert by_top_n.kind == by_whole.kind == "processed"
    assert "llama.cpp" in by_top_n.settings["engines_with_requested"]
    assert by_top_n.settings["engines_with_requested"] == [e for e in by_whole.settings["engines_with_requested"]
                                                           if e != "sglang"]
    assert "sglang" in by_top_n.explanation
    moved = listed(served, chosen, k=40)
    for i in (2, 5):
        moved[i].values[0] -= 0.3  # the chosen token, listed first
    bad = classify(moved, refs)
    assert bad.kind == "mismatch" and [p["index"] for p in bad.positions] == [2, 5]
    assert bad.positions[0]["reference"][chosen[2]] == pytest.approx(whole[2][chosen[2]])


def test_scaled_beyond_what_the_top_n_can_tell_says_so():
    rng = np.random.default_rng(3)
    whole = [distribution(rng, 0.8) for _ in range(6)]  # a long tail: at T 1.5 it weighs
    chosen = [int(np.argmax(lp)) for lp in whole]
    served = np.array([lp / 1.5 - np.logaddexp.reduce(lp / 1.5) for lp in whole])
    got = classify(listed(served, chosen), [top_n(lp) for lp in whole])
    assert got.kind == "scaled" and got.settings["temperature"] == pytest.approx(1.5, abs=1e-6)
    assert got.limits and "cannot tell" in got.explanation
    assert classify(listed(served, chosen), whole).limits == []  # the whole reference decides
