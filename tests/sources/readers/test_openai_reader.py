"""lv.from_openai reads every OpenAI-compatible logprobs format, on real responses.

Real data: the seed response (an older vLLM serving mpt-7b, byte-level BPE strings) and the
responses recorded from a real vLLM 0.32 CPU server in tests/fixtures/vllm/ (re-record with
``python -m tests.vllm_live.recordings URL``; the live suite in tests/vllm_live/ checks the same claims
on fresh answers). Where no real response shows a quirk (OpenAI's real bytes of a split
character, -9999.0, a duplicated JSON key, SentencePiece strings, "bytes:" tokens), a minimal
dict is built in the test and says so.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import logprob_viz as lv
import paths
from logprob_viz.sources.errors import ServerError
from logprob_viz.sources.readers.openai import parse_sse
from vllm_live import recordings  # the requests behind the recorded fixtures

FIXTURES = paths.FIXTURES

SEED_TEXT = " or, through inaction, allow a human being to come to harm.\n"


def seed() -> dict:
    return json.loads((FIXTURES / "seed_vllm_completion_mpt7b.json").read_text(encoding="utf-8"))


def body(name: str):
    """The raw response text of a recorded vLLM response, and the request that produced it."""
    rec = recordings.load(name)
    return rec["body"], rec["request"]


def raw(name: str) -> dict:
    return json.loads(body(name)[0])


def gpt2_byte_decoder() -> dict[str, int]:
    # GPT-2's bytes_to_unicode, written out here as an independent check of the adapter's decoding.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs, strict=True)}


def f32(x) -> float:
    return float(np.float32(x))


# -- the seed: older vLLM, byte-level BPE strings ------------------------------------------------


def test_seed_reads_back_exactly():
    data = seed()
    t = lv.from_openai(data)
    lp = data["choices"][0]["logprobs"]
    assert t.text == SEED_TEXT
    assert len(t) == 16 and t.prompt_len == 0 and t.k == 5
    assert t.tokens == [" or", ",", " through", " in", "action", ",", " allow", " a", " human", " being", " to",
                        " come", " to", " harm", ".", "\n"]
    dec = gpt2_byte_decoder()
    assert t.token_bytes == [bytes(dec[c] for c in s) for s in lp["tokens"]]
    assert t.logprobs.tolist() == [f32(x) for x in lp["token_logprobs"]]  # exact, as float32
    for i, top in enumerate(lp["top_logprobs"]):
        expected = sorted(top.items(), key=lambda kv: -kv[1])
        assert t.top_tokens[i] == [bytes(dec[c] for c in s).decode() for s, _ in expected]
        assert t.top_logprobs[i].tolist() == [f32(v) for _, v in expected]
    assert t.top_tokens[10][1] == "’"  # "\u00e2\u0122\u013b" in the source
    assert t.ranks.tolist() == [1] * 16  # each chosen token heads its dict
    assert t.meta["tokens_encoding"] == "byte_level"
    assert t.meta["model"] == "mosaicml/mpt-7b" and t.meta["source"] == "vllm"
    assert not any(t.flags)


def test_seed_as_json_text_sdk_object_and_choice_give_the_same_trace():
    from openai.types import Completion

    data = seed()
    reference = lv.from_openai(data).to_dict()
    text = json.dumps(data)
    assert lv.from_openai(text).to_dict() == reference
    assert lv.from_openai(text.encode()).to_dict() == reference
    assert lv.from_openai(Completion.model_validate(data)).to_dict()["tokens"] == reference["tokens"]
    assert lv.from_openai(data["choices"][0]).logprobs.tolist() == reference["logprobs"]  # a choice
    assert lv.from_openai(data["choices"][0]["logprobs"]).tokens == reference["tokens"]  # its logprobs


def test_byte_level_text_is_detected_without_markers_by_the_response_text():
    # A minimal dict: byte-level strings of a word with "é" (bytes C3 A9 -> "Ã©") and no Ġ/Ċ
    # marker; only the response's text tells the two encodings apart.
    resp = {"choices": [{"index": 0, "text": "café", "logprobs": {
        "tokens": ["caf", "Ã©"], "token_logprobs": [-1.0, -0.5], "text_offset": [0, 3],
        "top_logprobs": [{"caf": -1.0}, {"Ã©": -0.5}]}}]}
    t = lv.from_openai(resp)
    assert t.tokens == ["caf", "é"] and t.text == "café" and t.meta["tokens_encoding"] == "byte_level"
    decoded = {"choices": [{"index": 0, "text": "cafÃ©", "logprobs": {
        "tokens": ["caf", "Ã©"], "token_logprobs": [-1.0, -0.5], "top_logprobs": [{"caf": -1.0}, {"Ã©": -0.5}]}}]}
    assert lv.from_openai(decoded).text == "cafÃ©"  # the text says these are decoded strings


# -- every recorded real response parses --------------------------------------------------------


@pytest.mark.parametrize("name", sorted(n for n in recordings.REQUESTS if not n.startswith("error")))
def test_every_recorded_response_parses_and_keeps_the_servers_numbers(name):
    text, request = body(name)
    assert recordings.check(lv.from_openai(text), text, request) >= 1


def test_greedy_completion_ids_text_and_ranks():
    data = raw("completions_greedy_k5")
    t = lv.from_openai(data)
    c = data["choices"][0]
    assert t.text == c["text"] == ", but a human may be injured by a robot that causes them harm.\n"
    assert t.token_ids.tolist() == c["token_ids"]
    # greedy: every chosen token is the most likely one
    assert t.ranks.tolist() == [1] * len(t) and [row[0] for row in t.top_tokens] == t.tokens
    assert t.meta["tokens_encoding"] == "decoded" and t.k == 5


def test_k_plus_one_entries_when_the_chosen_token_is_outside_the_top_k():
    data = raw("completions_sampled_k1")
    lp = data["choices"][0]["logprobs"]
    assert all(len(d) == 2 for d in lp["top_logprobs"])  # the server sent K+1 = 2 entries
    t = lv.from_openai(data)
    assert t.k == 1 and t.meta["top_logprobs"] == 1  # K inferred from the response
    for i, (tok, d) in enumerate(zip(lp["tokens"], lp["top_logprobs"], strict=True)):
        (other,) = [key for key in d if key != tok]
        assert t.top_tokens[i] == [other] and t.top_logprobs[i, 0] == f32(d[other])
        assert t.ranks[i] == 0 and "outside_top_k" in t.flags[i]
    assert lv.from_openai(data, top_logprobs=1).to_dict() == t.to_dict()


def test_echo_with_prompt_logprobs_keeps_what_string_keys_collapsed():
    data = raw("completions_echo_split")
    c = data["choices"][0]
    t = lv.from_openai(data)
    assert t.prompt_len == len(c["prompt_token_ids"]) == len(c["prompt_logprobs"]) == 22
    assert t.token_ids.tolist() == c["prompt_token_ids"] + c["token_ids"]
    assert t.text == recordings.SPLIT + c["text"]
    # prompt ranks are the server's own
    pairs = zip(c["prompt_logprobs"][1:], c["prompt_token_ids"][1:], strict=True)
    assert t.ranks[1:22].tolist() == [e[str(i)]["rank"] for e, i in pairs]
    # position 3 ("\x9f" of 🤖): the string-keyed dict collapsed three "" tokens into one key...
    assert c["logprobs"]["top_logprobs"][3] == {"": pytest.approx(-1.6084024906158447)}
    # ...the id-keyed prompt_logprobs keep the top 2 apart, and the chosen token (rank 16) aside
    assert t.top_ids[3].tolist() == [235, 230] and t.top_tokens[3] == ["", ""]
    assert t.ranks[3] == 16 and t.logprobs[3] == f32(c["logprobs"]["token_logprobs"][3])
    # the "" tokens are flagged: the source gave no bytes for these pieces of characters
    empty = [i for i, s in enumerate(c["logprobs"]["tokens"]) if s == ""]
    assert empty == [2, 3, 6, 8, 11, 13]
    assert [i for i, f in enumerate(t.flags) if "no_bytes" in f] == empty
    assert t.tokens[4] == " 🤖"  # the whole character, on the token that completed it
    assert any("no text or bytes" in w for w in t.warnings)


def test_collided_string_keys_are_detected_without_prompt_logprobs():
    # The same real response as an older vLLM (or OpenAI) would send it: no prompt_logprobs, no ids.
    data = raw("completions_echo_split")
    c = data["choices"][0]
    for key in ("prompt_logprobs", "prompt_token_ids", "token_ids"):
        c.pop(key)
    t = lv.from_openai(data, top_logprobs=2, prompt=recordings.SPLIT)
    flags = t.flags
    # position 3: chosen "" at -4.92 but the key "" holds -1.61: another token's value; and one entry for K=2
    assert "collided" in flags[3] and t.ranks[3] == 0 and t.top_tokens[3] == [""]
    assert t.logprobs[3] == f32(c["logprobs"]["token_logprobs"][3])
    collided = [i for i, f in enumerate(flags) if "collided" in f]
    short = [i for i, d in enumerate(c["logprobs"]["top_logprobs"]) if d is not None and len(d) < 2]
    assert set(short) <= set(collided)
    assert any("collided" in w for w in t.warnings)


def test_text_offset_counts_characters_and_tells_where_the_prompt_ends():
    data = raw("completions_echo_split")
    c = data["choices"][0]
    lp = c["logprobs"]
    # the server's offsets are characters of the decoded text, not bytes
    assert lp["text_offset"] == [len("".join(lp["tokens"][:i])) for i in range(len(lp["tokens"]))]
    assert len(recordings.SPLIT) != len(recordings.SPLIT.encode())
    for key in ("prompt_logprobs", "prompt_token_ids", "token_ids"):
        c.pop(key)
    data.pop("usage")
    t = lv.from_openai(data, prompt=recordings.SPLIT)
    assert t.prompt_len == 22  # the prompt's 22 tokens (their count from the full response above)
    assert t.completion.text == c["text"]
    without = lv.from_openai(data)
    assert without.prompt_len == 1 and any("prompt=" in w for w in without.meta["warnings"])


def test_prompt_logprobs_alone_score_the_prompt():
    data = raw("completions_prompt_logprobs")
    c = data["choices"][0]
    t = lv.from_openai(data, prompt=recordings.ROBOT)
    assert len(t) == t.prompt_len == 8 and t.text == recordings.ROBOT
    assert t.token_ids.tolist() == c["prompt_token_ids"]
    assert math.isnan(t.logprobs[0]) and t.ranks[0] == 0
    for i in range(1, 8):
        e = c["prompt_logprobs"][i][str(c["prompt_token_ids"][i])]
        assert t.logprobs[i] == f32(e["logprob"]) and t.ranks[i] == e["rank"]
    assert t.k == 5
    # without the prompt, the first token is known by its id only, and flagged
    bare = lv.from_openai(data)
    assert bare.tokens[0] == "" and "first_token_unknown" in bare.flags[0]
    # the prompt_logprobs list on its own
    assert lv.from_openai(c["prompt_logprobs"]).logprobs[1:].tolist() == t.logprobs[1:].tolist()


def test_token_id_tokens_carry_ids_and_a_tokenizer_gives_their_text(runner):
    data = raw("completions_token_ids")
    t = lv.from_openai(data)
    ids = [int(s.split(":")[1]) for s in data["choices"][0]["logprobs"]["tokens"]]
    assert t.token_ids.tolist() == ids
    assert ids[:5] == raw("completions_prompt_logprobs")["choices"][0]["prompt_token_ids"][:5]  # same prompt words
    assert t.prompt_len == 5 and t.ranks[1:5].tolist() == [16950, 35, 3, 1292]
    no_text = [i for i, f in enumerate(t.flags) if "no_text" in f]
    assert no_text == [0, 5, 6, 7, 8] and t.tokens[5] == "token_id:253"
    with_tok = lv.from_openai(data, tokenizer=runner.tokenizer)
    assert with_tok.text == "A robot may not injure a human, but"
    assert with_tok.top_ids[5].tolist() == [253, 260] and with_tok.top_tokens[5] == [" a", " the"]
    assert not any("no_text" in f for f in with_tok.flags)


def test_two_choices_give_two_traces():
    data = raw("completions_n2")
    traces = lv.from_openai(data)
    assert isinstance(traces, list) and len(traces) == 2
    for t, c in zip(traces, data["choices"], strict=True):
        assert t.text == c["text"] and t.meta["choice"] == c["index"]


def test_completion_stream_merges_to_the_same_trace_as_the_full_response():
    text, _ = body("completions_stream")
    assert text.startswith("data: ") and text.rstrip().endswith("data: [DONE]")
    t = lv.from_openai(text)
    full = lv.from_openai(raw("completions_greedy_k5"))  # the same greedy request, not streamed, K=5
    n = len(t)
    assert n == 8 and t.meta["stream_chunks"] == 8
    assert t.tokens == full.tokens[:n] and t.token_ids.tolist() == full.token_ids[:n].tolist()
    assert t.logprobs.tolist() == full.logprobs[:n].tolist()
    assert t.top_logprobs.tolist() == full.top_logprobs[:n, :3].tolist()
    # the chunks as parsed JSON give the same trace (the SDK's own stream: tests/vllm_live/)
    assert lv.from_openai(parse_sse(text)).to_dict() == t.to_dict()


def test_interleaved_stream_of_two_prompts_is_merged_per_choice():
    text, request = body("completions_stream_two_prompts")
    chunks = parse_sse(text)
    order = [c["choices"][0]["index"] for c in chunks if c["choices"]]
    assert order != sorted(order)  # the two choices really interleave
    traces = lv.from_openai(text)
    for t, i in zip(traces, (0, 1), strict=True):
        pieces = [c["choices"][0]["text"] for c in chunks if c["choices"] and c["choices"][0]["index"] == i]
        assert t.text == "".join(pieces)


def test_chat_with_prompt_logprobs_ids_and_bytes():
    data = raw("chat_top_logprobs")
    c = data["choices"][0]
    t = lv.from_openai(data)
    assert t.prompt_len == len(data["prompt_token_ids"]) == 31
    assert t.token_ids.tolist() == data["prompt_token_ids"] + c["token_ids"]
    assert c["finish_reason"] == "stop"  # the end-of-turn token is in the logprobs, not in the content
    assert t.completion.text == c["message"]["content"] + "<|im_end|>"
    assert t.completion.token_bytes == [bytes(e["bytes"]) for e in c["logprobs"]["content"]]
    assert t.completion.ranks.tolist() == [1] * len(t.completion)  # greedy
    assert t.k == 5
    # the first prompt token is known by its id only (lv.connect asks the server to detokenize it)
    assert t.token_ids[0] == 1 and "first_token_unknown" in t.flags[0]


def test_chat_split_emoji_arrives_as_empty_tokens():
    data = raw("chat_emoji_split")
    c = data["choices"][0]
    content = c["logprobs"]["content"]
    assert [e["token"] for e in content[:3]] == ["", "", "🤖"] and content[0]["bytes"] == []
    t = lv.from_openai(data)
    assert t.text == c["message"]["content"] == "🤖🤖"
    empty = [i for i, e in enumerate(content) if e["token"] == ""]
    assert [i for i, f in enumerate(t.flags) if "no_bytes" in f] == empty
    assert t.token_ids.tolist() == c["token_ids"]


def test_chat_split_emoji_with_the_tokenizer_gets_exact_bytes(runner):
    data = raw("chat_emoji_split")
    t = lv.from_openai(data, tokenizer=runner.tokenizer)
    dec = gpt2_byte_decoder()  # SmolLM2's tokenizer is byte-level BPE: its pieces spell the bytes
    pieces = runner.tokenizer.convert_ids_to_tokens(data["choices"][0]["token_ids"])
    assert t.token_bytes == [bytes(dec[c] for c in p) for p in pieces]
    assert b"".join(t.token_bytes[:3]) == "🤖".encode()
    assert all(0 < len(b) < 4 for b in t.token_bytes[:2])  # real pieces of the 4 bytes
    assert t.tokens[0].startswith("\\x")  # shown by its bytes, never as U+FFFD
    assert not any(t.flags)


def test_chat_vllm_lists_the_chosen_first_and_cuts_at_k():
    data = raw("chat_sampled_k1")
    content = data["choices"][0]["logprobs"]["content"]
    assert all([a["token"] for a in e["top_logprobs"]] == [e["token"]] for e in content)  # only the chosen, K=1
    t = lv.from_openai(data)
    assert t.ranks.tolist() == [0] * len(t)  # unknown: the most likely token was cut
    assert all("alternatives_incomplete" in f for f in t.flags)


def test_chat_token_id_tokens():
    data = raw("chat_token_ids")
    content = data["choices"][0]["logprobs"]["content"]
    t = lv.from_openai(data)
    assert t.token_ids.tolist() == [int(e["token"].split(":")[1]) for e in content]
    # vLLM puts the real bytes on the chosen token, the placeholder's own bytes on alternatives
    assert t.text == data["choices"][0]["message"]["content"] == "Hello! How can"
    assert t.top_ids[0].tolist() == [19556, 26843] and t.top_tokens[0][1] == "token_id:26843"


def test_chat_end_of_turn_token_is_kept():
    data = raw("chat_eos")
    c = data["choices"][0]
    t = lv.from_openai(data)
    assert c["finish_reason"] == "stop" and t.tokens[-1] == "<|im_end|>" and t.token_ids[-1] == 2
    assert t.text == c["message"]["content"] + "<|im_end|>"
    assert t.meta["finish_reason"] == "stop"


def test_chat_stream_with_usage_chunk_merges():
    text, _ = body("chat_stream")
    t = lv.from_openai(text)
    full = lv.from_openai(raw("chat_top_logprobs")).completion  # the same greedy chat, not streamed
    n = len(t)
    assert n == 6 and t.tokens == full.tokens[:n] and t.logprobs.tolist() == full.logprobs[:n].tolist()
    assert t.top_logprobs.tolist() == full.top_logprobs[:n, :3].tolist()
    assert t.meta["usage"]["completion_tokens"] == 6
    from openai.types.chat import ChatCompletionChunk

    assert lv.from_openai([ChatCompletionChunk.model_validate(c) for c in parse_sse(text)]).tokens == t.tokens


def test_chat_sdk_object_keeps_vllm_fields():
    from openai.types.chat import ChatCompletion

    data = raw("chat_top_logprobs")
    assert lv.from_openai(ChatCompletion.model_validate(data)).to_dict() == lv.from_openai(data).to_dict()


@pytest.mark.parametrize("name,message", [
    ("error_logprobs_25", "greater than max allowed: 20"),
    ("error_unknown_model", "does not exist"),
])
def test_error_bodies_raise_with_the_servers_message(name, message):
    text, _ = body(name)
    assert recordings.load(name)["status"] in (400, 404)
    with pytest.raises(ServerError, match=message) as err:
        lv.from_openai(text)
    assert err.value.type in ("BadRequestError", "NotFoundError")


def test_an_error_event_in_a_stream_raises():
    text, _ = body("completions_stream")
    events = text.split("\n\n")
    error = 'data: {"error": {"message": "engine died", "type": "InternalServerError", "code": 500}}'
    broken = "\n\n".join(events[:2] + [error])
    with pytest.raises(ServerError, match="engine died"):
        lv.from_openai(broken)


# -- quirks no real response here shows: minimal dicts --------------------------------------------


def test_openai_real_bytes_of_a_split_character_win_over_the_string():
    # Minimal dict in OpenAI's documented chat format: ’ (E2 80 99) split over two tokens whose
    # strings cannot hold the pieces; the `bytes` fields do.
    first = {"token": "\\xe2\\x80", "logprob": -0.5, "bytes": [226, 128]}
    second = {"token": "\\x99s", "logprob": -0.1, "bytes": [153, 115]}
    content = [{**first, "top_logprobs": [first, {"token": "'", "logprob": -1.5, "bytes": [39]}]},
               {**second, "top_logprobs": [second]}]
    resp = {"object": "chat.completion",
            "choices": [{"index": 0, "message": {"content": "’s"}, "logprobs": {"content": content}}]}
    t = lv.from_openai(resp)
    assert t.token_bytes == [b"\xe2\x80", b"\x99s"] and t.text == "’s"
    assert t.tokens == ["\\xe2\\x80", "\\x99s"]  # pieces shown by their bytes, never U+FFFD
    assert t.ranks.tolist() == [1, 1] and t.meta["source"] == "openai"


def test_minus_9999_is_minus_infinity():
    # Minimal dict: OpenAI documents -9999.0 for "very unlikely" (no real response here has one).
    a = {"token": "a", "logprob": -0.1, "bytes": [97]}
    b = {"token": "b", "logprob": -9999.0, "bytes": [98]}
    content = [{**a, "top_logprobs": [a, b]}, {**b, "top_logprobs": []}]
    resp = {"object": "chat.completion",
            "choices": [{"index": 0, "message": {"content": "ab"}, "logprobs": {"content": content}}]}
    t = lv.from_openai(resp)
    assert t.top_logprobs[0, 1] == -np.inf and t.logprobs[1] == -np.inf
    assert t.perplexity() == math.inf


def test_duplicate_json_keys_are_all_kept_and_flagged():
    # Minimal JSON text: a server that writes colliding keys twice (json.loads would keep the last).
    text = ('{"choices": [{"index": 0, "text": "\\u00e9", "logprobs": {"tokens": ["", "\\u00e9"],'
            ' "token_logprobs": [-0.2, -0.01], "text_offset": [0, 0],'
            ' "top_logprobs": [{"": -0.2, "": -1.7, "x": -2.0}, {"\\u00e9": -0.01}]}}]}')
    t = lv.from_openai(text)
    assert t.top_logprobs[0].tolist() == [f32(-0.2), f32(-1.7), -2.0] and t.top_tokens[0] == ["", "", "x"]
    assert "collided" in t.flags[0] and "no_bytes" in t.flags[0]


def test_openai_legacy_bytes_tokens_and_replacement_characters():
    # Minimal dicts: OpenAI's legacy Completions wrote split pieces as "bytes:\\xe2\\x80";
    # some servers write U+FFFD, which loses the bytes (flagged).
    legacy = {"choices": [{"index": 0, "text": "’", "logprobs": {"tokens": ["bytes:\\xe2\\x80", "bytes:\\x99"],
              "token_logprobs": [-0.3, -0.01], "top_logprobs": [{"bytes:\\xe2\\x80": -0.3}, {"bytes:\\x99": -0.01}]}}]}
    t = lv.from_openai(legacy)
    assert t.token_bytes == [b"\xe2\x80", b"\x99"] and t.text == "’"
    lossy = {"choices": [{"index": 0, "text": "\ufffd\ufffd", "logprobs": {"tokens": ["\ufffd", "\ufffd"],
             "token_logprobs": [-0.3, -0.01], "top_logprobs": [{"\ufffd": -0.3}, {"\ufffd": -0.01}]}}]}
    t = lv.from_openai(lossy)
    assert all("replacement_char" in f for f in t.flags)


def test_sentencepiece_strings_are_decoded():
    # Minimal dict: an older vLLM serving a Llama (SentencePiece) model returned "▁" for spaces
    # and "<0xE2>" byte-fallback pieces.
    resp = {"choices": [{"index": 0, "text": " the ’", "logprobs": {
        "tokens": ["▁the", "▁", "<0xE2>", "<0x80>", "<0x99>"], "token_logprobs": [-1.0, -0.5, -0.2, -0.1, -0.1],
        "top_logprobs": [{"▁the": -1.0}, {"▁": -0.5}, {"<0xE2>": -0.2}, {"<0x80>": -0.1}, {"<0x99>": -0.1}]}}]}
    t = lv.from_openai(resp)
    assert t.meta["tokens_encoding"] == "sentencepiece"
    assert t.token_bytes == [b" the", b" ", b"\xe2", b"\x80", b"\x99"] and t.text == " the ’"


def test_a_response_without_logprobs_says_how_to_ask_for_them():
    with pytest.raises(ValueError, match="logprobs=5"):
        lv.from_openai({"choices": [{"index": 0, "text": "hi", "logprobs": None}]})
    with pytest.raises(ValueError, match="neither JSON"):
        lv.from_openai("not json")


def test_import_stays_light():
    code = "import sys, logprob_viz as lv; lv.from_openai; print('torch' in sys.modules, 'openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_traces_from_servers_survive_json_round_trip():
    for name in ("completions_echo_split", "chat_top_logprobs", "completions_sampled_k1"):
        t = lv.from_openai(body(name)[0])
        back = lv.Trace.from_dict(json.loads(json.dumps(t.to_dict())))
        assert back.to_dict() == t.to_dict()
        assert back.flags == t.flags
