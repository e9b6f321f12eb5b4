"""The widget's payload: a trace's arrays reach the browser as binary buffers, losslessly.

Each test decodes what `encode_trace` / `LogprobView` produce with numpy alone (the layout the
JS side reads) and compares it with the trace it came from.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.widget import LogprobView, encode_trace

ALT = "<img src=x onerror=\"window.__pwned=1\">"


def hand_made_trace(processed: bool = False) -> lv.Trace:
    """Six tokens: a prompt of two, then spaces, a newline, a tab, non-ASCII and hostile text."""
    tokens = ["Hello", ",", " wörld", "\n", "\t<script>alert(1)</script>", " 🤖"]
    n, k = len(tokens), 3
    top_tokens = [[], [",", "!", " there"], [" wörld", " world", ALT], ["\n", " ", "."], ["\t", "<b>"], [" 🤖"]]
    top = np.full((n, k), -np.inf, dtype=np.float32)
    for i, row in enumerate(top_tokens):
        top[i, : len(row)] = np.log(np.array([0.6, 0.3, 0.05][: len(row)], dtype=np.float32))
    top_ids = np.full((n, k), -1)
    for i, row in enumerate(top_tokens):
        top_ids[i, : len(row)] = 100 * i + np.arange(len(row))
    return lv.Trace(
        tokens=tokens,
        token_ids=[7, 100, 200, 300, 451, 500],
        logprobs=[np.nan, top[1, 0], top[2, 0], top[3, 0], -6.25, top[5, 0]],
        ranks=[0, 1, 1, 1, 12, 1],
        entropy=[np.nan, 0.9, 1.1, 0.7, 3.5, 0.0],
        top_tokens=top_tokens,
        top_logprobs=top,
        top_ids=top_ids,
        processed_logprobs=np.zeros(n) - 0.1 if processed else None,
        processed_top_logprobs=np.where(np.isfinite(top), top * 0.5, -np.inf) if processed else None,
        prompt_len=2,
        meta={"model": "hand-made", "source": "test", "temperature": 0.7, "bad": float("nan"), "arr": np.arange(2)},
    )


def decode(payload: dict) -> dict:
    """Read a payload as the browser does, from its bytes alone."""
    n, k = payload["n"], payload["k"]

    def arr(name, dtype, count):
        out = np.frombuffer(payload[name], dtype=dtype)
        assert out.shape == (count,), f"{name}: {out.shape} values, expected {count}"
        return out

    blob = bytes(payload["text"])
    offsets = arr("text_offsets", "<u4", n + n * k + 1)
    texts = [blob[offsets[s] : offsets[s + 1]].decode("utf-8") for s in range(n + n * k)]
    counts = arr("top_counts", "<i4", n)
    out = {
        "tokens": texts[:n],
        "top_tokens": [texts[n + i * k : n + i * k + counts[i]] for i in range(n)],
        "padding": [texts[n + i * k + counts[i] : n + (i + 1) * k] for i in range(n)],
        "token_ids": arr("token_ids", "<i4", n),
        "logprobs": arr("logprobs", "<f4", n),
        "ranks": arr("ranks", "<i4", n),
        "entropy": arr("entropy", "<f4", n),
        "top_logprobs": arr("top_logprobs", "<f4", n * k).reshape(n, k),
        "top_ids": arr("top_ids", "<i4", n * k).reshape(n, k),
    }
    if payload["processed_logprobs"] is not None:
        out["processed_logprobs"] = arr("processed_logprobs", "<f4", n)
        out["processed_top_logprobs"] = arr("processed_top_logprobs", "<f4", n * k).reshape(n, k)
    return out


@pytest.mark.parametrize("processed", [False, True])
def test_payload_round_trips_every_per_token_array(processed):
    trace = hand_made_trace(processed)
    payload = encode_trace(trace)
    got = decode(payload)
    assert (payload["n"], payload["k"]) == (6, 3)
    assert got["tokens"] == trace.tokens
    assert got["top_tokens"] == trace.top_tokens
    assert all(text == "" for row in got["padding"] for text in row)
    np.testing.assert_array_equal(got["token_ids"], trace.token_ids)
    np.testing.assert_array_equal(got["ranks"], trace.ranks)
    np.testing.assert_array_equal(got["top_ids"], trace.top_ids)
    # float32 both sides: bit-exact, NaN and -inf included
    np.testing.assert_array_equal(got["logprobs"], trace.logprobs)
    np.testing.assert_array_equal(got["entropy"], trace.entropy)
    np.testing.assert_array_equal(got["top_logprobs"], trace.top_logprobs)
    if processed:
        np.testing.assert_array_equal(got["processed_logprobs"], trace.processed_logprobs)
        np.testing.assert_array_equal(got["processed_top_logprobs"], trace.processed_top_logprobs)
    else:
        assert payload["processed_logprobs"] is None and payload["processed_top_logprobs"] is None


def test_text_offsets_count_utf8_bytes_not_characters():
    trace = lv.Trace(tokens=["é", "🤖", "a"])
    payload = encode_trace(trace)
    np.testing.assert_array_equal(np.frombuffer(payload["text_offsets"], "<u4"), [0, 2, 6, 7])
    assert bytes(payload["text"]) == "é🤖a".encode()


def test_empty_trace_and_no_alternatives():
    for trace in (lv.Trace(tokens=[]), lv.Trace(tokens=["a", "b"], logprobs=[-1.0, -2.0])):
        got = decode(encode_trace(trace))
        assert got["tokens"] == trace.tokens
        assert got["top_tokens"] == [[] for _ in trace.tokens]
        np.testing.assert_array_equal(got["logprobs"], trace.logprobs)


def test_ids_that_do_not_fit_int32_are_refused():
    trace = lv.Trace(tokens=["a"])
    trace.token_ids = np.array([2**40])  # an array set after construction, not checked by the Trace
    with pytest.raises(ValueError, match="int32"):
        encode_trace(trace)


def test_widget_state_sends_arrays_as_buffers_and_the_rest_as_strict_json():
    from ipywidgets.widgets.widget import _remove_buffers

    trace = hand_made_trace(processed=True)
    view = LogprobView(trace)
    try:
        state, paths, buffers = _remove_buffers(view.get_state())
        buffered = {tuple(p) for p in paths}
        for name in ("token_ids", "logprobs", "ranks", "entropy", "top_logprobs", "top_ids", "text", "text_offsets",
                     "processed_logprobs", "processed_top_logprobs"):
            assert ("_payload", name) in buffered, f"_payload.{name} is not a binary buffer"
        # What remains is small JSON: no per-token lists, no NaN (the kernel's JSON is strict).
        text = json.dumps(state, allow_nan=False)
        assert "Hello" not in text and "-0.51" not in text
        assert view.n_tokens == 6 and view.k == 3 and view.prompt_len == 2
        assert view.perplexity == pytest.approx(trace.perplexity())
        assert view.mean_logprob == pytest.approx(trace.mean_logprob())
        assert view.meta == {"model": "hand-made", "source": "test", "temperature": 0.7, "bad": None, "arr": "[0 1]"}
    finally:
        view.close()


def test_selected_is_checked_and_reset_when_the_trace_changes():
    view = LogprobView(hand_made_trace(), selected=4)
    try:
        assert view.selected == 4
        with pytest.raises(Exception, match="between 0 and 5"):
            view.selected = 6
        short = lv.Trace(tokens=["x", "y"], logprobs=[-0.1, -0.2])
        view.trace = short
        assert view.trace is short and view.selected == -1 and view.n_tokens == 2
        np.testing.assert_array_equal(decode(view._payload)["logprobs"], short.logprobs)
    finally:
        view.close()


def test_unknown_perplexity_is_sent_as_none():
    view = LogprobView(lv.Trace(tokens=["only"]))  # no logprob known
    try:
        assert math.isnan(view.trace.perplexity())
        assert view.perplexity is None and view.mean_logprob is None
    finally:
        view.close()


def test_a_trace_displays_as_the_widget():
    trace = hand_made_trace()
    data, _metadata = trace._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert data["text/plain"].startswith("LogprobView(<Trace 6 tokens (2 prompt)")


def test_missing_bundle_says_how_to_build_it(monkeypatch):
    monkeypatch.delattr(LogprobView, "_esm")
    with pytest.raises(FileNotFoundError, match=r"npm run build.*js/"):
        LogprobView(hand_made_trace())


def test_constructing_from_something_else_says_what_is_expected():
    with pytest.raises(TypeError, match="logprob_viz.Trace, got dict"):
        LogprobView({"tokens": ["a"]})


def test_color_mode_palette_and_range_are_checked_and_surprisal_is_an_alias():
    view = LogprobView(hand_made_trace(), color_mode="surprisal", palette="cividis")
    assert view.color_mode == "logprob" and view.palette == "cividis" and view.color_range is None
    for mode in ("probability", "logprob", "entropy", "rank", "ratio"):
        view.color_mode = mode
        assert view.color_mode == mode
    with pytest.raises(Exception, match="color_mode must be one of probability, logprob"):
        view.color_mode = "heat"
    view.color_range = [0, 2.5]
    assert view.color_range == [0.0, 2.5]
    with pytest.raises(Exception, match=r"finite min < max"):
        view.color_range = [3, 1]
    with pytest.raises(Exception):
        view.palette = "jet"  # not colour-blind safe, not offered
    view.color_range = None
    view.show_ids = True
    state = view.get_state()
    assert state["color_mode"] == "ratio"
    assert state["show_ids"] is True and state["color_range"] is None


def test_mean_entropy_is_the_mean_of_the_known_entropies():
    trace = hand_made_trace()
    view = LogprobView(trace)
    known = [float(x) for x in trace.entropy if not math.isnan(x)]
    assert view.mean_entropy == pytest.approx(sum(known) / len(known))
    assert LogprobView(lv.Trace(tokens=["only"])).mean_entropy is None
