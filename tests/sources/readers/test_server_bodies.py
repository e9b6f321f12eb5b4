"""lv.read on bodies from the servers' own projects: their test snapshots, recorded streams and
fixtures (TGI, openai-python, ollama-python, LiteLLM's captured Gemini responses), listed with
repository, path and commit in tests/fixtures/servers/SOURCES.md.

Every expected number is read from the fixture's raw JSON in the test (float32 of the value),
never from the code under test. What carries per-token logprobs is read; what does not is
refused with a message that says so.
"""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest

import paths
from logprob_viz.sources.readers import LogprobFormatError, read
from logprob_viz.sources.readers.inputs import parse_sse

SERVERS = paths.FIXTURES / "servers"


def body(name: str):
    return json.loads((SERVERS / f"{name}.json").read_text(encoding="utf-8"))["body"]


def f32(x) -> float:
    return float(np.float32(x))


def tgi_values(tokens: list) -> list:
    """TGI's logprobs as a trace keeps them: float32, and NaN where TGI wrote null."""
    return [math.nan if t["logprob"] is None else f32(t["logprob"]) for t in tokens]


def same(a, b) -> bool:
    """Lists of floats equal, NaN equal to NaN."""
    return np.array_equal(np.asarray(a, np.float64), np.asarray(b, np.float64), equal_nan=True)


# -- TGI /generate: real snapshots of TGI's integration tests ------------------------------------


def test_tgi_special_end_token_with_null_logprob_is_read_as_unknown_not_refused():
    data = body("tgi_starcoder_special_end_null")
    t = read(data)
    tokens = data["details"]["tokens"]
    assert tokens[-1]["special"] and tokens[-1]["logprob"] is None  # the shape under test
    assert t.prompt_len == 0 and t.tokens == [e["text"] for e in tokens]
    assert t.token_ids.tolist() == [e["id"] for e in tokens]
    assert same(t.logprobs, tgi_values(tokens)) and np.isnan(t.logprobs[-1])
    assert t.meta["text"] == data["generated_text"] and t.meta["finish_reason"] == "eos_token"
    # the unknown logprob is left out of the numbers, not counted as 0 or -inf
    assert math.isclose(t.mean_logprob(), f32(tokens[0]["logprob"]), rel_tol=1e-6)


def test_tgi_first_generated_token_special_is_kept_in_place():
    data = body("tgi_idefics_first_generated_special")
    t = read(data)
    prefill, tokens = data["details"]["prefill"], data["details"]["tokens"]
    assert tokens[0]["special"]
    assert t.prompt_len == len(prefill) and len(t) == len(prefill) + len(tokens)
    assert t.tokens[t.prompt_len] == tokens[0]["text"] and t.token_ids[t.prompt_len] == tokens[0]["id"]
    assert same(t.logprobs, tgi_values(prefill + tokens))


def test_tgi_return_full_text_keeps_the_prompt_out_of_the_generated_text():
    data = body("tgi_return_full_text")
    t = read(data)
    prefill, tokens = data["details"]["prefill"], data["details"]["tokens"]
    generated = "".join(e["text"] for e in tokens)
    assert data["generated_text"] != generated and data["generated_text"].endswith(generated)  # prompt first
    assert t.meta["text"] == generated and t.meta["full_text"] is True
    assert t.completion.text == generated and t.prompt_len == len(prefill)
    assert same(t.logprobs, tgi_values(prefill + tokens))
    assert (t.logprobs[t.prompt_len:] == 0).sum() == sum(e["logprob"] == 0 for e in tokens) == 2


def test_older_tgi_without_top_tokens_reads_with_no_alternatives():
    data = body("tgi_no_top_tokens")
    assert "top_tokens" not in data["details"]
    t = read(data)
    tokens = data["details"]["tokens"]
    assert t.top_logprobs.shape == (len(t), 0) and t.meta["top_logprobs"] == 0
    assert same(t.logprobs[t.prompt_len:], tgi_values(tokens)) and t.meta["text"] == data["generated_text"]


def test_tgi_chat_route_with_integer_zero_logprobs_and_no_bytes():
    """TGI's /v1/chat/completions writes ChatCompletionLogprob {token, logprob, top_logprobs} (router/src/lib.rs):
    no bytes; a client that re-serialises writes a certain token's 0.0 as the integer 0."""
    data = body("tgi_generate")  # the real snapshot's tokens, as TGI's chat route would give them
    tokens = data["details"]["tokens"]
    entries = [{"token": e["text"], "logprob": 0 if i == 1 else e["logprob"],
                "top_logprobs": [{"token": e["text"], "logprob": 0 if i == 1 else e["logprob"]}]}
               for i, e in enumerate(tokens)]
    chat = {"object": "chat.completion", "model": "tgi", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": data["generated_text"]},
         "logprobs": {"content": entries}, "finish_reason": "length"}]}
    t = read(json.dumps(chat))
    assert t.tokens == [e["text"] for e in tokens] and t.logprobs[1] == 0.0 and t.ranks[1] == 1
    assert same(t.logprobs, [f32(e["logprob"]) for e in entries])


# -- OpenAI Chat streams recorded by openai-python's own tests -----------------------------------


def test_openai_chat_stream_whose_first_chunk_has_empty_content_logprobs():
    text = body("openai_chat_stream_logprobs")
    chunks = parse_sse(text)
    assert chunks[0]["choices"][0]["logprobs"] == {"content": [], "refusal": None}
    entries = [e for c in chunks for ch in c["choices"] if ch.get("logprobs")
               for e in ch["logprobs"]["content"] or []]
    t = read(text)
    assert t.tokens == [e["token"] for e in entries] and t.token_bytes == [bytes(e["bytes"]) for e in entries]
    assert same(t.logprobs, [f32(e["logprob"]) for e in entries]) and t.meta["text"] == "Foo!"
    assert "refusal" not in t.meta


def test_a_refusal_is_read_from_logprobs_refusal_with_its_text():
    text = body("openai_chat_stream_refusal_logprobs")
    chunks = parse_sse(text)
    entries = [e for c in chunks for ch in c["choices"] if ch.get("logprobs")
               for e in ch["logprobs"]["refusal"] or []]
    refusal = "".join(ch["delta"].get("refusal") or "" for c in chunks for ch in c["choices"])
    assert entries and all(ch["logprobs"]["content"] is None
                           for c in chunks for ch in c["choices"] if ch.get("logprobs"))
    t = read(text)
    assert t.meta["refusal"] is True and t.meta["text"] == refusal == t.text
    assert t.tokens == [e["token"] for e in entries]
    assert same(t.logprobs, [f32(e["logprob"]) for e in entries])


def test_alternatives_with_bytes_null_take_their_text_from_the_token_string():
    data = json.loads(json.loads((paths.FIXTURES / "vllm" / "chat_top_logprobs.json").read_text())["body"])
    for entry in data["choices"][0]["logprobs"]["content"]:
        for alt in entry["top_logprobs"]:
            alt["bytes"] = None
    t = read(copy.deepcopy(data))
    entries = data["choices"][0]["logprobs"]["content"]
    assert len(t) - t.prompt_len == len(entries)
    for i, e in enumerate(entries, start=t.prompt_len):
        ranked = sorted(e["top_logprobs"], key=lambda a: -a["logprob"])
        assert t.top_tokens[i][: len(ranked)] == [a["token"] for a in ranked]
        assert t.top_logprobs[i, : len(ranked)].tolist() == [f32(a["logprob"]) for a in ranked]


# -- Ollama: ollama-python's own fixtures (no created_at, no done) -------------------------------


@pytest.mark.parametrize("name, fmt", [("ollama_chat_without_done", "ollama.chat"),
                                       ("ollama_generate_without_done", "ollama.generate")])
def test_ollama_bodies_without_created_at_or_done_are_recognised(name, fmt):
    data = body(name)
    assert "created_at" not in data and "done" not in data
    t = read(data)
    [entry] = data["logprobs"]
    assert t.meta["format"] == fmt and t.tokens == [entry["token"]]
    assert t.logprobs.tolist() == [f32(entry["logprob"])]
    # Ollama repeats the chosen token as its first alternative: that is rank 1, not a second token
    assert entry["top_logprobs"][0]["token"] == entry["token"] and t.ranks.tolist() == [1]
    assert t.top_tokens[0] == [a["token"] for a in entry["top_logprobs"]]
    assert t.top_logprobs[0].tolist() == [f32(a["logprob"]) for a in entry["top_logprobs"]]


# -- Gemini: LiteLLM's captured responses --------------------------------------------------------


def snake(tree):
    """The google-genai SDK's model_dump() spelling: logprobsResult -> logprobs_result, and so on."""
    if isinstance(tree, dict):
        return {"".join("_" + c.lower() if c.isupper() else c for c in k): snake(v) for k, v in tree.items()}
    return [snake(v) for v in tree] if isinstance(tree, list) else tree


def test_gemini_chosen_candidates_with_integer_zero_logprobs_in_camel_and_snake_case():
    data = body("gemini_litellm_chosen_only")
    chosen = data["candidates"][0]["logprobsResult"]["chosenCandidates"]
    assert any(type(c["logProbability"]) is int for c in chosen)
    for given in (data, snake(data), json.dumps(snake(data))):
        t = read(given)
        assert t.tokens == [c["token"] for c in chosen]
        assert t.logprobs.tolist() == [f32(c["logProbability"]) for c in chosen]
        assert t.meta["model"] == data["modelVersion"] and t.meta["finish_reason"] == "STOP"


def test_gemini_minus_1_27e30_is_minus_infinity_and_ranks_come_from_the_top_candidates():
    data = body("gemini_litellm_top_candidates")
    result = data["candidates"][0]["logprobsResult"]
    t = read(data)
    for i, row in enumerate(result["topCandidates"]):
        values = [-math.inf if c["logProbability"] <= -1e30 else f32(c["logProbability"]) for c in row["candidates"]]
        assert t.top_logprobs[i].tolist() == sorted(values, reverse=True)
        assert t.top_tokens[i][0] == row["candidates"][0]["token"]
        tops = [c["token"] for c in row["candidates"]]
        assert t.ranks[i] == 1 + tops.index(result["chosenCandidates"][i]["token"])
    assert np.isneginf(t.top_logprobs).sum() == sum(c["logProbability"] <= -1e30 for r in result["topCandidates"]
                                                     for c in r["candidates"])


def test_gemini_avg_logprobs_without_logprobs_result_is_refused_clearly():
    data = body("gemini_litellm_avg_logprobs_only")
    assert "avgLogprobs" in data["candidates"][0] and "logprobsResult" not in data["candidates"][0]
    with pytest.raises(LogprobFormatError, match=r"only avgLogprobs .* no per-token logprobs.*responseLogprobs=true"):
        read(data)


# -- OpenAI transcriptions -----------------------------------------------------------------------


def test_transcription_logprobs_at_the_top_level():
    data = body("openai_transcription")
    t = read(data)
    entries = data["logprobs"]
    assert t.meta["format"] == "openai.transcription" and t.meta["text"] == data["text"] == t.text
    assert t.tokens == [e["token"] for e in entries]
    assert t.token_bytes == [bytes(int(b) for b in e["bytes"]) for e in entries]  # bytes typed as numbers
    assert t.logprobs.tolist() == [f32(e["logprob"]) for e in entries]


def test_transcription_stream_reads_the_done_event_once_not_every_logprob_twice():
    text = body("openai_transcription_stream")
    events = parse_sse(text)
    [done] = [e for e in events if e["type"] == "transcript.text.done"]
    deltas = [e for e in events if e["type"] == "transcript.text.delta"]
    assert len(done["logprobs"]) == sum(len(e["logprobs"]) for e in deltas)  # the repetition under test
    t = read(text)
    assert len(t) == len(done["logprobs"]) and t.meta["text"] == done["text"]
    assert t.logprobs.tolist() == [f32(e["logprob"]) for e in done["logprobs"]]
    cut = read(events[:-1])  # a stream cut before its done event: the deltas' logprobs
    assert cut.logprobs.tolist() == [f32(e["logprobs"][0]["logprob"]) for e in deltas]


# -- what does not carry per-token logprobs is refused clearly -----------------------------------


def test_a_responses_answer_with_empty_logprobs_is_refused_with_what_to_request():
    data = body("openai_responses")
    for item in data["output"]:
        for part in item.get("content") or []:
            if "logprobs" in part:
                part["logprobs"] = []
    with pytest.raises(LogprobFormatError, match=r"no logprobs: request them with include="):
        read(data)


def test_sglang_finish_reason_as_an_object_is_its_type():
    data = body("sglang_generate")
    data["meta_info"]["finish_reason"] = {"type": "length", "length": 8}
    assert read(data).meta["finish_reason"] == "length"


def test_a_responses_stream_token_whose_bytes_were_lost_is_kept_and_flagged():
    """vLLM's Responses stream writes a piece of a split emoji as the token "" with no bytes."""
    events = parse_sse(body("openai_responses_stream"))
    deltas = [e for e in events if e["type"] == "response.output_text.delta"]
    lost = {"token": "", "logprob": -0.25, "top_logprobs": [{"token": "", "logprob": -0.25}]}
    deltas[1]["delta"], deltas[1]["logprobs"] = "", [lost]
    t = read(events)
    entries = [e for d in deltas for e in d["logprobs"]]
    assert t.tokens[1] == "" and t.token_bytes[1] == b"" and "no_bytes" in t.flags[1]
    assert t.logprobs.tolist() == [f32(e["logprob"]) for e in entries] and t.ranks[1] == 1
    assert any("no text or bytes" in w for w in t.warnings)
