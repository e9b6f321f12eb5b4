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
from logprob_viz.trace import display_token
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
    dtypes = {name: {"u2": "<u2", "u4": "<u4"}[d] for name, d in payload["dtypes"].items()}
    ref = dtypes["refs"]

    def arr(name, dtype, count=None):
        out = np.frombuffer(payload[name], dtype=dtype)
        assert count is None or out.shape == (count,), f"{name}: {out.shape} values, expected {count}"
        return out

    blob = bytes(payload["text"])
    offsets = arr("text_offsets", dtypes["text_offsets"])
    u = len(offsets) - 1
    table = [blob[offsets[e] : offsets[e + 1]].decode("utf-8") for e in range(u)]
    table_ids = arr("text_ids", dtypes["text_ids"], u).astype(np.int64) - 1  # stored as id + 1
    assert len(set(zip(table_ids.tolist(), table))) == u, "the table holds each (id, text) once"
    token_refs = arr("token_text", ref, n).astype(np.int64) - 1  # -1: none
    top_refs = arr("top_text", ref, n * k).astype(np.int64).reshape(n, k) - 1
    assert (token_refs >= 0).all() and (token_refs < u).all() and (top_refs < u).all()
    counts = (top_refs >= 0).sum(axis=1)
    # padding only after a token's alternatives
    assert all((top_refs[i, counts[i]:] == -1).all() for i in range(n))
    out = {
        "tokens": [table[r] for r in token_refs],
        "token_ids": table_ids[token_refs] if n else np.zeros(0, np.int32),
        "top_tokens": [[table[r] for r in top_refs[i, : counts[i]]] for i in range(n)],
        "top_ids": np.where(top_refs >= 0, table_ids[np.maximum(top_refs, 0)] if u else -1, -1),
        "logprobs": arr("logprobs", "<f4", n),
        "ranks": arr("ranks", "<i4", n),
        "entropy": arr("entropy", "<f4", n) if payload["entropy"] is not None else np.full(n, np.nan, np.float32),
        "top_logprobs": arr("top_logprobs", "<f4", n * k).reshape(n, k),
    }
    starts, ends = arr("split_starts", "<i4"), arr("split_ends", "<i4")
    members = [i for s, e in zip(starts, ends) for i in range(s, e)]
    split_refs = arr("split_text", ref, len(members)).astype(np.int64) - 1
    byte_offsets = arr("split_byte_offsets", "<u4", len(members) + 1)
    raw = bytes(payload["split_bytes"])
    out["shown"] = list(out["tokens"])
    out["split_bytes"] = {}
    for m, i in enumerate(members):
        out["shown"][i] = table[split_refs[m]]
        out["split_bytes"][i] = raw[byte_offsets[m] : byte_offsets[m + 1]]
    out["split_runs"] = list(zip(starts.tolist(), ends.tolist()))
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
    assert got["shown"] == trace.tokens and got["split_runs"] == []
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
    assert payload["dtypes"]["text_offsets"] == "u2"
    np.testing.assert_array_equal(np.frombuffer(payload["text_offsets"], "<u2"), [0, 2, 6, 7])
    assert bytes(payload["text"]) == "é🤖a".encode()


def test_each_text_is_sent_once_and_references_are_uint16_or_uint32():
    tokens = [" the", " cat", " the", " the"]
    trace = lv.Trace(tokens=tokens, token_ids=[1, 2, 1, 1], top_tokens=[[" the", " a"], [" cat"], [" the"], []],
                     top_logprobs=[[-0.1, -2.0], [-0.5, -np.inf], [-0.2, -np.inf], [-np.inf, -np.inf]],
                     top_ids=[[1, 3], [2, -1], [1, -1], [-1, -1]])
    payload = encode_trace(trace)
    assert payload["dtypes"] == {"text_offsets": "u2", "text_ids": "u2", "refs": "u2"}
    assert bytes(payload["text"]) == b" the cat a"  # (1, " the"), (2, " cat"), (3, " a")
    np.testing.assert_array_equal(np.frombuffer(payload["token_text"], "<u2"), [1, 2, 1, 1])
    np.testing.assert_array_equal(np.frombuffer(payload["top_text"], "<u2"), [1, 3, 2, 0, 1, 0, 0, 0])
    got = decode(payload)
    assert got["top_tokens"] == trace.top_tokens
    np.testing.assert_array_equal(got["top_ids"], trace.top_ids)
    # The same text under another id is another entry (ids are shown and decide the chosen row).
    twin = decode(encode_trace(lv.Trace(tokens=["x", "x"], token_ids=[5, 6])))
    np.testing.assert_array_equal(twin["token_ids"], [5, 6])
    # More than 65,535 distinct texts: uint32 references.
    many = [f"t{i}" for i in range(70_000)]
    big = encode_trace(lv.Trace(tokens=many))
    assert big["dtypes"] == {"text_offsets": "u4", "text_ids": "u2", "refs": "u4"}
    assert decode(big)["tokens"] == many
    # Ids of a large vocabulary: uint32.
    wide = encode_trace(lv.Trace(tokens=["a", "b"], token_ids=[151_000, -1]))
    assert wide["dtypes"]["text_ids"] == "u4"
    np.testing.assert_array_equal(decode(wide)["token_ids"], [151_000, -1])


def test_payload_is_under_200_bytes_per_token_at_k20_with_a_realistic_vocabulary():
    rng = np.random.default_rng(0)
    n, k = 2000, 20
    vocab = [f" w{j}" for j in range(3000)]
    ids = rng.integers(0, len(vocab), (n, k))
    trace = lv.Trace(tokens=[vocab[j] for j in ids[:, 0]], token_ids=ids[:, 0], logprobs=np.full(n, -1.0),
                     ranks=np.ones(n, int), entropy=np.ones(n), top_tokens=[[vocab[j] for j in row] for row in ids],
                     top_logprobs=np.sort(rng.uniform(-9, 0, (n, k)), axis=1)[:, ::-1], top_ids=ids)
    payload = encode_trace(trace)
    size = sum(len(v) for v in payload.values() if isinstance(v, (bytes, memoryview)))
    assert size / n <= 200, f"{size / n:.0f} bytes per token"
    got = decode(payload)
    assert got["top_tokens"] == trace.top_tokens
    np.testing.assert_array_equal(got["top_logprobs"], trace.top_logprobs)


ROBOT_BYTES = [b"Rob", b"ots", b" \xf0\x9f", b"\xa4", b"\x96", b"\xf0\x9f", b"\xa6", b"\xbe", b" and", b" \xe2\x80\x99"]


def test_a_character_split_across_tokens_is_sent_whole_with_each_piece_s_bytes():
    tokens = [display_token(b) for b in ROBOT_BYTES]
    assert tokens[2] == " \\xf0\\x9f"  # the trace shows a piece by its bytes
    trace = lv.Trace(tokens=tokens, token_bytes=ROBOT_BYTES, logprobs=-np.arange(len(tokens), dtype=float))
    got = decode(encode_trace(trace))
    assert got["tokens"] == tokens  # the tokens themselves are unchanged (the chart shows them)
    assert got["split_runs"] == [(2, 5), (5, 8)]
    assert got["shown"] == ["Rob", "ots", " ", "", "🤖", "", "", "🦾", " and", " ’"]
    assert "".join(got["shown"]) == "Robots 🤖🦾 and ’" == trace.text
    assert got["split_bytes"] == {i: ROBOT_BYTES[i] for i in range(2, 8)}


@pytest.mark.parametrize(
    ("pieces", "runs", "shown"),
    [
        ([b"\xf0\x9f", b"\xa4\x96\xf0", b"\x9f\xa6\xbe"], [(0, 3)], ["", "🤖", "🦾"]),  # a piece completes one and starts the next
        ([b"a\xe2\x80"], [], ["a\\xe2\\x80"]),  # never completed (the trace ends): the bytes, escaped
        ([b"\xe2\x80", b"x"], [], ["\\xe2\\x80", "x"]),  # not continued by its bytes: no run
        ([b"\x80", b"\xe2\x80\x99"], [], ["\\x80", "’"]),  # a stray continuation byte stays on its own
        ([b"\xe2", b"", b"\x80\x99"], [(0, 3)], ["", "", "’"]),  # an empty token inside the run
    ],
)
def test_split_runs_only_where_the_bytes_decode_together(pieces, runs, shown):
    trace = lv.Trace(tokens=[display_token(b) for b in pieces], token_bytes=pieces)
    got = decode(encode_trace(trace))
    assert got["split_runs"] == runs and got["shown"] == shown


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
        for name in ("text", "text_offsets", "text_ids", "token_text", "top_text", "logprobs", "ranks", "entropy",
                     "top_logprobs", "processed_logprobs", "processed_top_logprobs"):
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


def test_what_a_source_lost_is_sent_for_the_view_to_mark():
    trace = lv.Trace(tokens=["a", "", "b"], flags=[[], ["no_bytes", "outside_top_k"], ["collided"]])
    notes = lv.LogprobView(trace).flag_notes
    assert list(notes) == ["1", "2"]
    assert notes["1"] == [notes["1"][0]] and notes["1"][0].startswith("no_bytes: the source gave no text or bytes")
    assert notes["2"][0].startswith("collided: alternatives collided")
