"""lv.calibration against a binning written here (a loop over items and bins, nothing of the package's)."""

import math
import random

import numpy as np
import pytest

import logprob_viz as lv


def independent(probs, correct, bins):
    """Per bin (count, mean confidence, accuracy) by a plain loop; ECE, MCE, Brier from them."""
    edges = [i / bins for i in range(bins + 1)]
    rows = []
    for b in range(bins):
        lo, hi = edges[b], edges[b + 1]
        inside = [i for i, p in enumerate(probs) if lo <= p < hi or (b == bins - 1 and p == 1.0)]
        n = len(inside)
        conf = sum(probs[i] for i in inside) / n if n else math.nan
        acc = sum(correct[i] for i in inside) / n if n else math.nan
        rows.append((n, conf, acc))
    total = len(probs)
    ece = sum(n / total * abs(acc - conf) for n, conf, acc in rows if n)
    mce = max(abs(acc - conf) for n, conf, acc in rows if n)
    brier = sum((p - c) ** 2 for p, c in zip(probs, correct, strict=True)) / total
    return rows, ece, mce, brier


@pytest.mark.parametrize("bins", [1, 5, 10, 15])
def test_the_table_and_the_errors_equal_an_independent_binning(bins):
    rng = random.Random(bins)
    probs = [rng.random() for _ in range(300)] + [0.0, 1.0, 0.5]
    correct = [rng.random() < p ** 0.7 for p in probs]  # over-confident at the low end
    cal = lv.calibration(probs, correct, bins=bins)
    rows, ece, mce, brier = independent(probs, correct, bins)
    table = cal.table
    assert len(table) == bins
    assert table["count"].tolist() == [n for n, _, _ in rows]
    np.testing.assert_allclose(table["confidence"].to_numpy(), [c for _, c, _ in rows], rtol=1e-12)
    np.testing.assert_allclose(table["accuracy"].to_numpy(), [a for _, _, a in rows], rtol=1e-12)
    assert abs(cal.ece - ece) < 1e-12 and abs(cal.mce - mce) < 1e-12 and abs(cal.brier - brier) < 1e-12
    in_bins = sorted(i for b in range(bins) for i in cal.items_in(b).tolist())
    assert in_bins == list(range(len(probs)))


def test_empty_bins_are_nan_and_left_out_of_the_errors():
    cal = lv.calibration([0.95, 0.92, 0.15], [True, False, False], bins=10)
    assert cal.table["count"].tolist() == [0, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert math.isnan(cal.table["accuracy"][5])
    assert abs(cal.ece - (2 / 3 * abs(0.5 - 0.935) + 1 / 3 * 0.15)) < 1e-12
    assert abs(cal.mce - 0.435) < 1e-12


def test_bad_input_says_what_to_give():
    with pytest.raises(ValueError, match="one outcome per probability"):
        lv.calibration([0.5, 0.6], [True])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        lv.calibration([1.5], [True])
    # issue 48 item 7: the message names the item and its value
    with pytest.raises(ValueError) as outside:
        lv.calibration([0.5, 0.9, 87.0, -2.3], [True, False, True, True])
    assert str(outside.value) == (
        "probs must be probabilities in [0, 1] (the confidence of each answer), without NaN: item 2 is 87.0 "
        "(and 1 more of the 4 items); a logprob gives its probability as np.exp(logprob), a percentage as p / 100")
    with pytest.raises(ValueError, match=r"without NaN: item 1 is nan; "):
        lv.calibration([0.5, float("nan")], [True, False])
    with pytest.raises(ValueError, match="booleans"):
        lv.calibration([0.5], [2])
    with pytest.raises(ValueError, match="bins must be an int"):
        lv.calibration([0.5], [True], bins=0)


def test_the_reliability_diagram_draws_the_table():
    pytest.importorskip("plotly")
    cal = lv.calibration([0.95, 0.92, 0.15, 0.55], [True, False, False, True], bins=4)
    figure = cal.plot()
    bars = figure.data[0]
    assert bars.type == "bar"
    assert list(bars.y) == [0.0, None, 1.0, 0.5]  # an empty bin draws no bar
    assert [int(c[0]) for c in bars.customdata] == [1, 0, 1, 2]
