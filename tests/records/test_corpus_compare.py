"""Two models over one corpus: a synthetic corpus whose gain is known by construction, the
bootstrap's coverage measured over many synthetic corpora, and the real second model (Gemma 3,
another tokenizer) against the default one on a few short texts."""

import math

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.records.corpus.compare import bootstrap_ratio

LN2 = math.log(2)


def one_byte_trace(text: str, logprobs) -> lv.Trace:
    """A trace whose every token is one character (one byte: ASCII)."""
    return lv.Trace(tokens=list(text), logprobs=np.asarray(logprobs, dtype=np.float32), meta={"model": "synthetic"})


def synthetic_pair(rng, n_items: int, digit_gain_nats: float):
    """Corpora a and b over the same texts; b is better on digits only, by a known amount per item."""
    a, b, gains = [], [], []
    for _ in range(n_items):
        text = "abc " + "".join(rng.choice(list("0123456789"), size=int(rng.integers(3, 12)))) + " xyz."
        lp_a = -rng.uniform(0.5, 3.0, size=len(text))
        gain = digit_gain_nats + rng.normal(0, 0.2)  # per digit token, this item's own gain
        is_digit = np.array([c.isdigit() for c in text])
        lp_b = lp_a + np.where(is_digit, gain, 0.0)
        a.append(one_byte_trace(text, lp_a))
        b.append(one_byte_trace(text, lp_b))
        gains.append((gain * is_digit.sum(), is_digit.sum()))
    return lv.Corpus(a), lv.Corpus(b), np.array(gains)


def test_gain_per_class_is_the_constructed_one():
    rng = np.random.default_rng(0)
    a, b, gains = synthetic_pair(rng, 60, digit_gain_nats=0.4)
    report = lv.compare_corpora(a, b, labels=("old", "new"), n_boot=2000, seed=1)
    by_class = report.by_class.set_index("group")
    # on digits, b gains exactly what was added, in bits per digit byte (every token is one byte,
    # so every byte is an aligned span under both)
    digits = by_class.loc["digits"]
    assert digits["bytes"] == gains[:, 1].sum()
    assert digits["gain"] == pytest.approx(gains[:, 0].sum() / gains[:, 1].sum() / LN2, rel=1e-5)
    assert digits["gain_low"] < digits["gain"] < digits["gain_high"]
    for group in ("word-initial", "continuation", "whitespace", "punctuation"):
        assert by_class.loc[group, "gain"] == pytest.approx(0, abs=1e-6), "b changed nothing there"
    items = report.items
    np.testing.assert_allclose(items["gain"] * items["bytes"], gains[:, 0] / LN2, rtol=1e-5)
    assert (items["bits_per_byte:old"] - items["bits_per_byte:new"]).to_numpy() == pytest.approx(
        items["gain"].to_numpy())
    assert "gain of new" in repr(report)


def test_bootstrap_intervals_cover_the_true_ratio_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    true_gain, covered, runs = 0.3, 0, 300
    for run in range(runs):
        n_bytes = rng.integers(20, 200, size=40).astype(float)
        per_byte = rng.normal(true_gain, 0.5, size=40)  # each item's gain per byte, independent of its size
        _, low, high = bootstrap_ratio(per_byte * n_bytes, n_bytes, n_boot=400, seed=run)
        covered += low <= true_gain <= high
    assert 0.88 <= covered / runs <= 0.99, f"coverage {covered / runs:.3f} of a nominal 95% interval"


def test_same_seed_same_interval_and_identical_models_gain_nothing(runner):
    corpus = runner.score(["A robot may not injure a human being.", "Paris is in France, 1 2 3."], progress=False)
    report = corpus.compare(corpus, seed=3)
    assert (report.by_class["gain"] == 0).all() and (report.by_class["gain_high"] == 0).all()
    rng = np.random.default_rng(0)
    num, den = rng.normal(size=30), rng.uniform(1, 2, size=30)
    assert bootstrap_ratio(num, den, seed=5) == bootstrap_ratio(num, den, seed=5)
    with pytest.raises(ValueError, match="a has 2 items and b has 1"):
        lv.compare_corpora(corpus, corpus[:1])
    with pytest.raises(TypeError, match="compares two lv.Corpus objects"):
        lv.compare_corpora(corpus, corpus.traces)


def test_the_second_model_against_the_default_one(runner):
    from logprob_viz.sources.local import second_model as second

    if not second.is_installed() and not second.is_converted(second.model_dir()):  # scripts/test.sh installs it
        pytest.fail(f"the second model is not installed ({second.INSTALL_HINT})")
    gemma = second.load_second_model()
    texts = ["A robot may not injure a human being.", "The capital of France is Paris.", "print(1 + 2)"]
    small, other = runner.score(texts, progress=False), gemma.score(texts, progress=False)
    assert other[0].tokens[0] == "<bos>", "another tokenizer"
    assert other[0].token_ids.max() > runner.capabilities.vocab_size, "another tokenizer"
    report = lv.compare_corpora(small, other, labels=("smollm2", "gemma"), n_boot=500)
    for i, text in enumerate(texts):
        # each pair aligned by bytes without Gemma's <bos>, whose bytes the other text lacks
        cmp = report.comparisons[i]
        assert cmp.same_text and cmp.traces[1].text == text
        bpb = cmp.bits_per_byte()
        assert report.items.loc[i, "bits_per_byte:gemma"] == pytest.approx(bpb["gemma"])
        assert report.items.loc[i, "gain"] == pytest.approx(bpb["smollm2"] - bpb["gemma"])
    row = report.by_class.set_index("group").loc["all"]
    assert row["gain_low"] <= row["gain"] <= row["gain_high"]
