"""The divergence view's payload (issue 44): the default model against a copy whose weights are rounded to
bf16, one text. Every number the view shows is the record's (the record's numbers are checked against an
independent float64 computation in tests/sources/test_divergence.py); here: the payload carries exactly
those, the hover's two columns list each side's alternatives in one order with the side's own logprob,
a top-K candidate's KL stays a range (never one number), and the page escapes token text."""

from __future__ import annotations

import math

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.views.codec import read_array
from logprob_viz.views.divergence.view import DivergenceView

TEXT = "The quick brown fox jumps over the lazy dog. <b>Then</b> it ran into the forest and nobody found it."


@pytest.fixture(scope="module")
def exact(runner, rounded):
    return lv.divergence(runner, rounded, TEXT, cutoff=None)


def _texts(field) -> list[str]:
    blob, offsets = bytes(read_array(field["blob"])), read_array(field["offsets"])
    return [blob[a:b].decode() for a, b in zip(offsets[:-1], offsets[1:], strict=True)]


def test_per_token_numbers_are_the_record_s(exact):
    view = exact.view()
    assert isinstance(view, DivergenceView)
    p = view._payload
    assert p["n"] == len(exact) and _texts(p["tokens"]) == exact.tokens
    for name in ("kld_low", "kld_high", "delta_p", "same_top", "base_logprob", "cand_logprob"):
        sent = read_array(p[name]).astype(np.float64)
        want = exact.arrays[name]
        assert np.array_equal(np.isnan(sent), np.isnan(want)), name
        np.testing.assert_allclose(sent[~np.isnan(want)], want[~np.isnan(want)], rtol=1e-6, atol=1e-12, err_msg=name)
    assert exact.exact and np.nanmax(exact.kld) > 0  # a real, nonzero divergence


def test_header_is_the_summary_and_flips_are_where_the_tops_differ(exact):
    s, stats = exact.summary(), exact.view().stats
    assert stats["mean_kld"] == [s["mean_kld"], s["mean_kld"]] and stats["max_kld"] == [s["kld_max"], s["kld_max"]]
    for key in ("same_top", "ppl_ratio", "tokens"):
        assert stats[key] == s[key], key
    a = exact.arrays
    scored = ~np.isnan(a["delta_p"])
    differ = np.flatnonzero(scored & (a["base_top_id"] != a["cand_top_id"]))
    assert stats["flips"] == differ.tolist()
    assert len(stats["flips"]) == round((1 - s["same_top"]) * s["tokens"])


def test_hover_lists_both_sides_alternatives_in_one_order(exact):
    p, a = exact.view()._payload, exact.arrays
    start = read_array(p["alt_start"])
    names, base, cand, chosen = (_texts(p["alt_texts"]), read_array(p["alt_base"]), read_array(p["alt_cand"]),
                                 read_array(p["alt_chosen"]))
    k = a["base_alt_ids"].shape[1]
    assert k > 0 and start[0] == 0 and start[1] == 0  # the first token is not scored: nothing to hover
    for i in np.flatnonzero(~np.isnan(a["delta_p"])):
        rows = range(start[i], start[i + 1])
        base_ids, cand_ids = list(a["base_alt_ids"][i]), list(a["cand_alt_ids"][i])
        order = base_ids + [t for t in cand_ids if t not in base_ids]
        order += [] if exact.token_ids[i] in order else [int(exact.token_ids[i])]
        assert [names[j] for j in rows] == [exact.vocab[t] for t in order]
        for j, tid in zip(rows, order, strict=True):
            for side, got, ids in (("base", base, base_ids), ("cand", cand, cand_ids)):
                if tid == exact.token_ids[i]:  # the token that followed: both sides always give it
                    want = a[f"{side}_logprob"][i]
                elif tid in ids:
                    want = a[f"{side}_alt_logprobs"][i][ids.index(tid)]
                else:
                    assert math.isnan(got[j]), (i, side, tid)
                    continue
                assert got[j] == pytest.approx(want, rel=1e-6, abs=1e-12), (i, side, tid)
        assert [bool(chosen[j]) for j in rows] == [t == exact.token_ids[i] for t in order]


def test_a_top_k_candidate_s_kl_is_a_range_in_the_payload_and_the_header(runner, rounded):
    d = lv.divergence(runner, rounded.score(TEXT, top_logprobs=3), TEXT, cutoff=None)
    assert not d.exact
    view = d.view()
    low, high = read_array(view._payload["kld_low"]), read_array(view._payload["kld_high"])
    ranged = ~np.isnan(d.arrays["kld_low"]) & (d.arrays["kld_low"] != d.arrays["kld_high"])
    assert ranged.any() and np.all(high[ranged] > low[ranged])
    mean = d.summary()["mean_kld"]
    assert view.stats["mean_kld"] == [mean.low, None if math.isinf(mean.high) else mean.high]
    assert "KL in [" in view.page_html()


def test_to_html_and_the_notebook_display(exact):
    page = exact.to_html()
    assert "&lt;" in page and "<b>" not in page  # token text is text
    assert "mean KLD" in page and "flips of" in page
    bundle = exact._repr_mimebundle_()
    bundle = bundle[0] if isinstance(bundle, tuple) else bundle  # (data, metadata)
    assert "application/vnd.jupyter.widget-view+json" in bundle and "text/html" in bundle


def test_bad_input_says_what_to_do(exact):
    with pytest.raises(TypeError, match="one Divergence"):
        DivergenceView(lv.Divergences([exact]))
    view = exact.view()
    with pytest.raises(Exception, match="selected must be"):
        view.selected = len(exact)
    with pytest.raises(Exception, match="size must be one of 'normal', 'projector'"):
        view.size = "huge"


def test_the_size_follows_lv_settings_as_the_trace_view(exact):
    before = lv.settings.size
    try:
        lv.settings.size = "projector"
        assert exact.view().size == "projector"
        assert DivergenceView(exact, size="normal").size == "normal"  # its own keyword wins
    finally:
        lv.settings.size = before
    assert exact.view().size == before
