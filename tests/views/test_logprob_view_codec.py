"""The widget's payload: a trace's arrays reach the browser as binary buffers, losslessly.

Each test decodes what `encode_trace` / `LogprobView` produce with the suite's own reader of the
wire format (`tests/wire.py`, numpy alone) and compares it with the trace it came from.
"""

from __future__ import annotations

import base64
import json
import math
import subprocess
import time

import numpy as np
import pytest
import traitlets as t

import logprob_viz as lv
import paths
import wire
from logprob_viz.records.trace import display_token
from logprob_viz.views.logprob.view import LogprobView, encode_trace

REPO = paths.REPO
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


decode = wire.trace  # the payload read as the browser does, by the suite's own reader


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
        assert payload["arrays"]["processed_logprobs"] is None and payload["arrays"]["processed_top_logprobs"] is None


def test_text_offsets_count_utf8_bytes_not_characters():
    trace = lv.Trace(tokens=["é", "🤖", "a"])
    payload = encode_trace(trace)
    assert payload["arrays"]["text_offsets"]["dtype"] == "uint16"
    np.testing.assert_array_equal(wire.array(payload["arrays"]["text_offsets"], "uint16"), [0, 2, 6, 7])
    assert bytes(payload["arrays"]["text"]["buffer"]) == "é🤖a".encode()


def dtypes(payload: dict) -> dict:
    a = payload["arrays"]
    assert a["token_text"]["dtype"] == a["top_text"]["dtype"] == a["split_text"]["dtype"], "references share a dtype"
    return {name: a[name]["dtype"] for name in ("text_offsets", "text_ids")} | {"refs": a["token_text"]["dtype"]}


def test_each_text_is_sent_once_and_references_are_uint16_or_uint32():
    tokens = [" the", " cat", " the", " the"]
    trace = lv.Trace(tokens=tokens, token_ids=[1, 2, 1, 1], top_tokens=[[" the", " a"], [" cat"], [" the"], []],
                     top_logprobs=[[-0.1, -2.0], [-0.5, -np.inf], [-0.2, -np.inf], [-np.inf, -np.inf]],
                     top_ids=[[1, 3], [2, -1], [1, -1], [-1, -1]])
    payload = encode_trace(trace)
    assert dtypes(payload) == {"text_offsets": "uint16", "text_ids": "uint16", "refs": "uint16"}
    assert bytes(payload["arrays"]["text"]["buffer"]) == b" the cat a"  # (1, " the"), (2, " cat"), (3, " a")
    np.testing.assert_array_equal(wire.array(payload["arrays"]["token_text"], "uint16"), [1, 2, 1, 1])
    assert payload["arrays"]["top_text"]["shape"] == [4, 2]
    top_refs = wire.array(payload["arrays"]["top_text"], "uint16").reshape(-1)
    np.testing.assert_array_equal(top_refs, [1, 3, 2, 0, 1, 0, 0, 0])
    got = decode(payload)
    assert got["top_tokens"] == trace.top_tokens
    np.testing.assert_array_equal(got["top_ids"], trace.top_ids)
    # The same text under another id is another entry (ids are shown and decide the chosen row).
    twin = decode(encode_trace(lv.Trace(tokens=["x", "x"], token_ids=[5, 6])))
    np.testing.assert_array_equal(twin["token_ids"], [5, 6])
    # More than 65,535 distinct texts: uint32 references.
    many = [f"t{i}" for i in range(70_000)]
    big = encode_trace(lv.Trace(tokens=many))
    assert dtypes(big) == {"text_offsets": "uint32", "text_ids": "uint16", "refs": "uint32"}
    assert decode(big)["tokens"] == many
    # Ids of a large vocabulary: uint32.
    wide = encode_trace(lv.Trace(tokens=["a", "b"], token_ids=[151_000, -1]))
    assert dtypes(wide)["text_ids"] == "uint32"
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
    size = sum(len(v["buffer"]) for v in payload["arrays"].values() if v is not None)
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
        # a piece completes one and starts the next
        ([b"\xf0\x9f", b"\xa4\x96\xf0", b"\x9f\xa6\xbe"], [(0, 3)], ["", "🤖", "🦾"]),
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
            assert ("_payload", "arrays", name, "buffer") in buffered, f"_payload.arrays.{name} is not a binary buffer"
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
    with pytest.raises(t.TraitError):
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


# ---- a growing trace: appends ------------------------------------------------------------------


def robot_trace() -> lv.Trace:
    """Ten tokens with two characters split across tokens (positions 2-4 and 5-7), K=2, a prompt of 2."""
    n = len(ROBOT_BYTES)
    top = np.full((n, 2), -np.inf, dtype=np.float32)
    top[:, 0] = -0.25
    top[::2, 1] = -2.0
    return lv.Trace(
        tokens=[display_token(b) for b in ROBOT_BYTES],
        token_bytes=ROBOT_BYTES,
        token_ids=np.arange(n) + 100,
        logprobs=-np.arange(n, dtype=float) / 4,
        entropy=np.linspace(0.5, 2.0, n),
        top_tokens=[[display_token(b)] + ([f"alt{i}"] if i % 2 == 0 else []) for i, b in enumerate(ROBOT_BYTES)],
        top_logprobs=top,
        top_ids=[[100 + i, 900 + i if i % 2 == 0 else -1] for i in range(n)],
        prompt_len=2,
        meta={"model": "robot"},
    )


class Sent:
    """What a view sends as custom messages (the kernel's comm is not there in a unit test)."""

    def __init__(self, view):
        self.messages = []
        view.send = lambda content, buffers=None: self.messages.append(join_buffers(content, buffers))


def join_buffers(content: dict, buffers) -> dict:
    payload = json.loads(json.dumps(content["payload"]))  # what JSON carries, as the browser gets it
    return wire.put_back(payload, content["buffer_paths"], buffers)


def stitched(first: dict, appends: list[dict]) -> dict:
    """The browser's trace after `first` and the appends: each keeps the tokens before its start."""
    got = decode(first)
    for a in appends:
        more = decode({**a, "n": a["n"] - a["start"]})
        s = a["start"]
        for key in ("tokens", "top_tokens", "shown"):
            got[key] = got[key][:s] + more[key]
        for key in ("token_ids", "logprobs", "ranks", "entropy", "top_logprobs", "top_ids"):
            got[key] = np.concatenate([got[key][:s], more[key]])
    return got


def wait_until(condition, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_growing_trace_sends_only_its_new_tokens_and_is_folded_into_the_state_when_it_stops():
    full = robot_trace()
    view = LogprobView(full[:3])  # ends inside " 🤖": its first byte piece
    sent = Sent(view)
    first = view._payload
    try:
        view.trace = full[:5]  # the first growth goes at once
        assert len(sent.messages) == 1
        a = sent.messages[0]
        # The character completed: the view gets it again from its first piece, then the new tokens.
        assert (a["start"], a["n"]) == (2, 5)
        view.trace = full[:9]  # within BATCH_S of the last send: held, then sent by the timer
        view.trace = full[:10]
        wait_until(lambda: len(sent.messages) == 2)
        assert (sent.messages[1]["start"], sent.messages[1]["n"]) == (5, 10)  # the browser had 5
        assert view._payload is first, "the state is not resent while tokens arrive"
        got = stitched(first, sent.messages)
        want = decode(encode_trace(full))
        assert got["tokens"] == full.tokens and got["top_tokens"] == full.top_tokens
        assert got["shown"] == want["shown"] == ["Rob", "ots", " ", "", "🤖", "", "", "🦾", " and", " ’"]
        for key in ("token_ids", "logprobs", "ranks", "entropy", "top_logprobs", "top_ids"):
            np.testing.assert_array_equal(got[key], getattr(full, key))
        # The header follows: each append carries the whole trace's numbers.
        assert sent.messages[1]["summary"]["perplexity"] == pytest.approx(full.perplexity())
        assert sent.messages[1]["prompt_len"] == 2
        # Tokens stopped: the whole trace goes into the saved state, under the same id (no rebuild).
        wait_until(lambda: view._payload["n"] == 10)
        assert view._payload["id"] == first["id"]
        folded = decode(view._payload)
        assert folded["tokens"] == full.tokens and folded["shown"] == want["shown"]
        np.testing.assert_array_equal(folded["top_logprobs"], full.top_logprobs)
    finally:
        view.close()


def test_append_takes_the_tokens_that_follow_or_a_longer_trace_and_anything_else_replaces():
    full = robot_trace()
    view = LogprobView(full[:4])
    sent = Sent(view)
    try:
        view.append(full[4:7])  # the tokens that follow
        view.append(full)  # a longer trace that extends it
        view.flush()
        assert view.trace.tokens == full.tokens and view.trace.prompt_len == 2
        np.testing.assert_array_equal(view.trace.top_ids, full.top_ids)
        assert [m["start"] for m in sent.messages] == [2, 5]
        assert view._payload["n"] == 10
        replaced_id = view._payload["id"]
        view.selected = 9
        view.trace = full[:6]  # shorter: a new trace, a new id, nothing pinned
        assert view._payload["id"] != replaced_id and view._payload["n"] == 6 and view.selected == -1
        with pytest.raises(ValueError, match="a prompt of 1 tokens after generated tokens"):
            view.append(lv.Trace(tokens=["x"], prompt_len=1))
        assert view.trace.tokens == full.tokens[:6], "a refused append changes nothing"
    finally:
        view.close()


READER = """
import { readFileSync } from "node:fs";
import { decodePayload } from "%s";
const msgs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const put = (m) => {
  m.buffer_paths.forEach((path, i) => {
    let o = m.payload;
    for (const key of path.slice(0, -1)) o = o[key];
    const bytes = Buffer.from(m.buffers[i], "base64");
    o[path[path.length - 1]] = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  });
  return m.payload;
};
const data = decodePayload(put(msgs[0]));
for (const m of msgs.slice(1)) data.apply(put(m));
const num = (a) => Array.from(a, (x) => (Number.isNaN(x) ? "nan" : x === -Infinity ? "-inf" : x));
const alts = data.tokens.map((_, i) =>
  Array.from({ length: data.topCount(i) }, (_, j) => [data.altText(i, j), data.altId(i, j)]));
console.log(JSON.stringify({ n: data.n, promptLen: data.promptLen, tokens: data.tokens, shown: data.shown,
  ids: num(data.tokenIds), logprobs: num(data.logprobs), entropy: num(data.entropy), top: num(data.topLogprobs), alts,
  splits: data.tokens.map((_, i) => { const s = data.splitOf(i); return s && [s.start, s.end, s.text]; }) }));
"""


def as_message(payload: dict) -> dict:
    from logprob_viz.views.codec import split_buffers

    content, paths, buffers = split_buffers(payload)
    encoded = [base64.b64encode(bytes(b)).decode() for b in buffers]
    return {"payload": content, "buffer_paths": paths, "buffers": encoded}


def test_the_browser_s_reader_gives_the_trace_back_from_a_payload_and_its_appends(tmp_path):
    full = robot_trace()
    view = LogprobView(full[:3])
    sent = Sent(view)
    first = view._payload
    try:
        view.trace = full[:5]
        view.append(full[5:])
        view.flush()
    finally:
        view.close()
    assert [m["start"] for m in sent.messages] == [2, 5]
    (tmp_path / "msgs.json").write_text(json.dumps([as_message(first)] + [as_message(m) for m in sent.messages]))
    script = tmp_path / "read.mjs"
    script.write_text(READER % (REPO / "js" / "logprob" / "trace_data.js").as_uri())
    args = ["node", str(script), str(tmp_path / "msgs.json")]
    out = subprocess.run(args, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)

    def floats(values):
        as32 = np.asarray(values, np.float32).tolist()
        return ["nan" if math.isnan(x) else "-inf" if x == -math.inf else x for x in as32]

    assert got["n"] == 10 and got["promptLen"] == 2
    assert got["tokens"] == full.tokens
    assert got["shown"] == ["Rob", "ots", " ", "", "🤖", "", "", "🦾", " and", " ’"]
    assert got["splits"][3] == [2, 5, " 🤖"] and got["splits"][7] == [5, 8, "🦾"] and got["splits"][8] is None
    assert got["ids"] == full.token_ids.tolist()
    assert got["logprobs"] == floats(full.logprobs) and got["entropy"] == floats(full.entropy)
    assert got["top"] == floats(full.top_logprobs.reshape(-1))
    want_alts = [[[a, int(full.top_ids[i, j])] for j, a in enumerate(row)] for i, row in enumerate(full.top_tokens)]
    assert got["alts"] == want_alts


def test_a_longer_trace_with_more_alternatives_is_sent_whole_and_a_closed_view_stops_streaming():
    full = robot_trace()  # K=2
    view = LogprobView(full[:4])
    sent = Sent(view)
    first_id = view._payload["id"]
    wider = lv.Trace(tokens=["!"], top_tokens=[["!", "?", "."]], top_logprobs=[[-0.1, -2.0, -3.0]])
    view.append(wider)  # K=3 now: the browser's columns do not fit; the whole trace goes again
    assert sent.messages == [] and view._payload["id"] != first_id
    assert view._payload["n"] == 5 and view._payload["k"] == 3 and view.trace.tokens == full.tokens[:4] + ["!"]
    assert decode(view._payload)["top_tokens"][4] == ["!", "?", "."]
    view.trace = view.trace[:5]  # the same tokens: nothing to send
    assert sent.messages == []
    view.append(lv.Trace(tokens=["x"]))  # the first growth goes at once; its fold is pending
    assert [m["start"] for m in sent.messages] == [5] and view._timer is not None
    view.close()  # the pending fold is cancelled with the view
    assert view._timer is None
