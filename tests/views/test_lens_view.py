"""The lens view's wire and its HTML outside a widget manager, on the real default model.

The payload and the kernel's detail reply are read with the suite's own reader of the wire
format (`tests/wire.py`) and compared with the lens's own arrays; the static HTML is checked for
what it must hold (one row per layer, escaped text, the views' whitespace marks).
"""

from __future__ import annotations

import html

import numpy as np
import pytest

import logprob_viz as lv
import wire
from browser.expected import expected_marks
from logprob_viz.views.lens.view import LensView

TEXT = "Say <b>hi</b>\tto the\n\nrobot"


@pytest.fixture(scope="module")
def lens(runner):
    return runner.lens(TEXT, top_logprobs=3)


def test_the_detail_reply_is_a_codec_message_with_the_layers_alternatives(lens):
    view = LensView(lens, detail="request")
    sent = []
    view.send = lambda content, buffers=None: sent.append((content, buffers))
    try:
        assert view._payload["top_text"] is None  # asked for per token instead
        got = wire.lens(view._payload)
        assert got["tokens"] == lens.tokens and np.array_equal(got["ranks"], lens.ranks)
        view._answer(view, {"type": "lens-detail", "id": "q1", "position": 4}, [])
        view._answer(view, {"type": "lens-detail", "id": "q2", "position": 999}, [])
    finally:
        view.close()
    (reply, buffers), (failed, _) = sent
    assert (reply["type"], reply["id"]) == ("lens-detail", "q1") and len(buffers) == len(reply["buffer_paths"]) == 2
    answer = wire.put_back(reply["payload"], reply["buffer_paths"], buffers)
    n_layers = len(lens.layers)
    top_logprobs, top_ids = wire.array(answer["top_logprobs"], "float32"), wire.array(answer["top_ids"], "int32")
    assert top_logprobs.shape == top_ids.shape == (n_layers, 3)  # [L, K], from the arrays' own shapes
    np.testing.assert_array_equal(top_logprobs, lens.top_logprobs[:, 4, :])
    np.testing.assert_array_equal(top_ids, lens.top_ids[:, 4, :])
    assert answer["texts"] == [row[4] for row in lens.top_tokens] and answer["token_id"] == lens.token_ids[4]
    assert failed["id"] == "q2" and "position must be a token index" in failed["error"]


def test_a_lens_has_an_offline_page_and_its_view_an_html_fallback(lens, tmp_path):
    page = lens.to_html()
    assert page.startswith("<!doctype html>") and "default-src 'none'" in page and "<script" not in page.lower()
    assert "<b>" not in page and "&lt;" in page  # token text is escaped (the tokenizer splits "<b>")
    assert page.count("<tr>") == len(lens.layers) + 1  # a row per layer, then the tokens
    for token in lens.tokens:  # the token row marks whitespace as every view does
        assert f"<td>{html.escape(expected_marks(token))}</td>" in page
    view = lens.view()
    try:
        data, _ = view._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in data
        assert data["text/html"].startswith('<div class="lvl-static"')
        path = lv.to_html(view, tmp_path / "lens.html")
        assert path == tmp_path / "lens.html"
        assert path.read_text(encoding="utf-8").count("<tr>") == len(lens.layers) + 1
    finally:
        view.close()


def test_the_payload_carries_each_layers_kl_to_the_final_distribution(runner, lens):
    """The rows of per-layer KL the view shows come from the lens's own KL(final || layer), recomputed
    here from the lens's final row: 0 at the final block."""
    payload = LensView(lens)._payload
    kl = wire.array(payload["kl_to_final"], "float32").reshape(payload["n_layers"], payload["n"])
    np.testing.assert_array_equal(kl, lens.kl_to_final)
    final = list(lens.layers).index(lens.n_blocks - 1) if lens.n_blocks - 1 in lens.layers else None
    if final is not None:
        np.testing.assert_allclose(kl[final, 1:], 0, atol=1e-5)
    assert np.isnan(kl[:, 0]).all() and (kl[:, 1:] >= -1e-5).all()
