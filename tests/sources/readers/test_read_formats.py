"""lv.read recognises every server's logprobs format and keeps the server's numbers.

Fixtures: tests/fixtures/servers/ (sources in its SOURCES.md: TGI's own recorded snapshot, the
rest written from each project's documentation / schema), the recorded vLLM responses, and
tests/fixtures/llamacpp/ when the real llama.cpp recordings exist. Every expected number is read
from the fixture's raw JSON here (float32 of the value, or the log of a probability), never from
the code under test.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import paths
from logprob_viz.records.trace import Trace
from logprob_viz.sources.errors import LogprobFormatError, ServerError
from logprob_viz.sources.readers.inputs import parse_ndjson, parse_sse
from logprob_viz.sources.readers.reader import KNOWN_FORMATS, read

FIXTURES = paths.FIXTURES


def fixture(name: str) -> dict:
    return json.loads((FIXTURES / "servers" / f"{name}.json").read_text(encoding="utf-8"))


def body(name: str):
    return fixture(name)["body"]


def f32(x) -> float:
    return float(np.float32(x))


# -- llama.cpp native /completion ---------------------------------------------------------------


def test_llamacpp_completion_keeps_ids_bytes_logprobs_and_ranks():
    data = body("llamacpp_completion")
    t = read(json.dumps(data))
    entries = data["completion_probabilities"]
    assert t.meta["format"] == "llamacpp.completion" and t.meta["server"] == "llama.cpp"
    assert t.tokens == [e["token"] for e in entries] and t.text == data["content"]
    assert t.token_bytes == [bytes(e["bytes"]) for e in entries]
    assert t.token_ids.tolist() == [e["id"] for e in entries]
    assert t.logprobs.tolist() == [f32(e["logprob"]) for e in entries]
    for i, e in enumerate(entries):
        ranked = sorted(e["top_logprobs"], key=lambda a: -a["logprob"])
        assert t.top_ids[i].tolist() == [a["id"] for a in ranked]
        assert t.top_logprobs[i].tolist() == [f32(a["logprob"]) for a in ranked]
        assert t.ranks[i] == 1 + [a["id"] for a in ranked].index(e["id"])
    assert t.ranks[2] == 2  # " a" is second to " it" in this response
    assert t.processed_logprobs is None


def test_llamacpp_post_sampling_probabilities_are_the_processed_distribution_not_the_models():
    data = body("llamacpp_completion_post_sampling")
    t = read(data)
    entries = data["completion_probabilities"]
    assert np.isnan(t.logprobs).all()  # the model's logprobs are unknown
    assert t.processed_logprobs.tolist() == [f32(math.log(e["prob"])) for e in entries]
    row = sorted(entries[0]["top_probs"], key=lambda a: -a["prob"])
    assert t.processed_top_logprobs[0, :2].tolist() == [f32(math.log(a["prob"])) for a in row]
    assert np.isnan(t.top_logprobs[0, :2]).all()
    assert t.top_tokens[2] == [" a"] and t.processed_top_logprobs[2, 0] == 0.0  # fewer than n_probs after top_k
    assert t.meta["probabilities"] == "post_sampling" and any("after its samplers" in w for w in t.meta["warnings"])


def test_llamacpp_stream_merges_to_the_same_trace_as_the_full_response():
    text = body("llamacpp_completion_stream")
    assert text.startswith("data: ")
    streamed = read(text)
    full = read(body("llamacpp_completion"))
    assert streamed.tokens == full.tokens and streamed.logprobs.tolist() == full.logprobs.tolist()
    assert streamed.top_logprobs.tolist() == full.top_logprobs.tolist() and streamed.meta["stream_chunks"] == 4
    assert read(parse_sse(text)).tokens == full.tokens


def test_llamacpp_older_probs_shape_reads_probabilities_as_processed():
    data = body("llamacpp_completion_old_probs")
    t = read(data)
    assert t.tokens == [e["content"] for e in data["completion_probabilities"]]
    assert t.processed_logprobs.tolist() == [f32(math.log(0.557)), f32(math.log(0.268))]
    assert t.top_tokens[0] == [",", "."] and np.isnan(t.logprobs).all()


def test_real_llamacpp_recordings_read():
    files = sorted((FIXTURES / "llamacpp").glob("*.json"))
    assert len(files) >= 9, "the real llama.cpp recordings (tests/fixtures/llamacpp/) are committed"
    for path in files:
        record = json.loads(path.read_text(encoding="utf-8"))
        raw = record.get("body", record) if isinstance(record, dict) else record
        if isinstance(record, dict) and (record.get("status") or 200) >= 400:
            with pytest.raises(ServerError):
                read(raw)
            continue
        result = read(raw)
        for t in result if isinstance(result, list) else [result]:
            assert isinstance(t, Trace) and len(t) > 0, path.name
            known = t.logprobs[~np.isnan(t.logprobs)]
            assert (known <= 1e-4).all(), path.name


def llamacpp_record(name: str) -> dict:
    path = FIXTURES / "llamacpp" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def test_real_llamacpp_native_completion_and_its_stream():
    body_text = llamacpp_record("completion_greedy_n5")["body"]
    entries = json.loads(body_text)["completion_probabilities"]
    t = read(body_text)
    assert t.meta["server"] == "llama.cpp" and t.token_ids.tolist() == [e["id"] for e in entries]
    assert t.logprobs.tolist() == [f32(e["logprob"]) for e in entries]
    assert t.token_bytes == [bytes(e["bytes"]) for e in entries]
    assert t.top_ids.tolist() == [[a["id"] for a in e["top_logprobs"]] for e in entries]  # greedy: already sorted
    assert t.ranks.tolist() == [1] * len(t)
    stream_text = llamacpp_record("completion_stream")["body"]
    streamed = read(stream_text)
    events = [p for e in parse_sse(stream_text) for p in e.get("completion_probabilities", [])]
    assert streamed.logprobs.tolist() == [f32(p["logprob"]) for p in events]
    n = len(streamed)
    assert streamed.tokens == t.tokens[:n]
    # the same greedy request, streamed: llama.cpp's numbers differ in the 7th digit (batching)
    np.testing.assert_allclose(streamed.logprobs, t.logprobs[:n], rtol=0, atol=1e-5)


def test_real_llamacpp_post_sampling_probs():
    body_text = llamacpp_record("completion_sampled_post")["body"]
    entries = json.loads(body_text)["completion_probabilities"]
    t = read(body_text)
    assert np.isnan(t.logprobs).all()
    np.testing.assert_array_equal(t.processed_logprobs, np.float32([math.log(e["prob"]) for e in entries]))
    assert [len(row) for row in t.top_tokens] == [len(e["top_probs"]) for e in entries]


def test_real_llamacpp_openai_routes_give_ids_and_completions_use_the_chat_shape():
    record = llamacpp_record("v1_completions_k5")
    data = json.loads(record["body"])
    assert "content" in data["choices"][0]["logprobs"] and data["object"] == "text_completion"  # the quirk
    t = read(record["body"])
    content = data["choices"][0]["logprobs"]["content"]
    assert t.meta["server"] == "llama.cpp" and t.meta["format"] == "completions"
    assert t.token_ids.tolist() == [e["id"] for e in content] and t.text == data["choices"][0]["text"]
    chat = read(llamacpp_record("v1_chat_top5")["body"])
    assert chat.token_ids[-1] == 2 and chat.token_bytes[-1] == b"" and "no_bytes" in chat.flags[-1]  # <|im_end|>


def test_real_llamacpp_chat_merges_the_pieces_of_a_split_character():
    data = json.loads(llamacpp_record("v1_chat_emoji_split")["body"])
    content = data["choices"][0]["logprobs"]["content"]
    # the recording: one entry per emoji, all 4 bytes, while its alternatives hold the last byte only
    assert [bytes(e["bytes"]) for e in content] == ["🤖".encode()] * 2
    assert all(bytes(e["top_logprobs"][0]["bytes"]) == "🤖".encode()[-1:] for e in content)
    t = read(data)
    assert t.text == "🤖🤖" and all("pieces_merged" in f for f in t.flags) and t.ranks.tolist() == [1, 1]
    assert any("pieces" in w for w in t.warnings)


# -- TGI ----------------------------------------------------------------------------------------


def test_tgi_generate_snapshot_prefill_is_the_prompt():
    data = body("tgi_generate")
    t = read(data)
    details = data["details"]
    assert t.meta["format"] == "tgi.generate" and t.meta["server"] == "tgi"
    assert t.prompt_len == len(details["prefill"]) == 3
    assert t.token_ids.tolist() == [e["id"] for e in details["prefill"] + details["tokens"]]
    assert math.isnan(t.logprobs[0])  # TGI: the first prefill token has no logprob
    assert t.logprobs[1:].tolist() == [f32(e["logprob"]) for e in details["prefill"][1:] + details["tokens"]]
    assert t.completion.text == data["generated_text"] and t.k == 0


def test_tgi_top_tokens_and_the_stream_agree():
    data = body("tgi_generate_top_tokens")
    t = read(data)
    for i, row in enumerate(data["details"]["top_tokens"]):
        ranked = sorted(row, key=lambda a: -a["logprob"])
        j = t.prompt_len + i
        assert t.top_ids[j].tolist() == [a["id"] for a in ranked]
        chosen = data["details"]["tokens"][i]["id"]
        assert t.ranks[j] == 1 + [a["id"] for a in ranked].index(chosen)
    stream = read(body("tgi_generate_stream"))
    assert stream.meta["format"] == "tgi.generate_stream"
    assert stream.tokens == t.completion.tokens and stream.top_logprobs.tolist() == t.completion.top_logprobs.tolist()


def test_tgi_fixtures_follow_tgis_schema():
    from huggingface_hub import TextGenerationOutput, TextGenerationStreamOutput

    for name in ("tgi_generate", "tgi_generate_top_tokens"):
        parsed = TextGenerationOutput.parse_obj_as_instance(body(name))
        assert parsed.details is not None and parsed.details.tokens
    for event in parse_sse(body("tgi_generate_stream")):
        assert TextGenerationStreamOutput.parse_obj_as_instance(event).token.text


# -- SGLang -------------------------------------------------------------------------------------


def test_sglang_triples_input_is_the_prompt_and_ids_only_need_a_tokenizer():
    data = body("sglang_generate")
    info = data["meta_info"]
    t = read(data)
    assert t.meta["format"] == "sglang.generate" and t.prompt_len == len(info["input_token_logprobs"]) == 5
    rows = info["input_token_logprobs"] + info["output_token_logprobs"]
    assert t.tokens == [r[2] for r in rows] and t.token_ids.tolist() == [r[1] for r in rows]
    assert math.isnan(t.logprobs[0]) and t.logprobs[1:].tolist() == [f32(r[0]) for r in rows[1:]]
    tops = info["input_top_logprobs"] + info["output_top_logprobs"]
    assert t.ranks[3] == 2 and t.top_tokens[3] == [" Spain", " France"]  # France second in the prompt
    assert t.ranks[6] == 2  # "." after ","
    assert t.ranks[1] == 0 and "outside_top_k" in t.flags[1]  # " capital" is not among its top 2
    assert [len(r or []) for r in tops] == [len(row) for row in t.top_tokens]
    ids_only = read(body("sglang_generate_ids_only"))
    assert ids_only.token_ids.tolist() == t.token_ids.tolist() and all("no_text" in f for f in ids_only.flags)


# -- Ollama, OpenAI Responses, Gemini ---------------------------------------------------------


def test_ollama_generate_and_chat_stream():
    data = body("ollama_generate")
    t = read(data)
    assert t.meta["format"] == "ollama.generate" and t.meta["server"] == "ollama" and t.text == data["response"]
    assert t.logprobs.tolist() == [f32(e["logprob"]) for e in data["logprobs"]]
    assert t.ranks.tolist() == [1, 1, 1] and t.k == 3
    text = body("ollama_chat_stream")
    chat = read(text)
    assert chat.meta["format"] == "ollama.chat" and chat.tokens == t.tokens and chat.meta["stream_chunks"] == 4
    assert read(parse_ndjson(text)).tokens == t.tokens


def test_openai_responses_and_its_stream_and_sdk_object():
    from openai.types.responses import Response, ResponseTextDeltaEvent

    data = body("openai_responses")
    t = read(data)
    entries = data["output"][0]["content"][0]["logprobs"]
    assert t.meta["format"] == "openai.responses" and t.text == data["output"][0]["content"][0]["text"]
    assert t.token_bytes == [bytes(e["bytes"]) for e in entries]
    assert t.logprobs.tolist() == [f32(e["logprob"]) for e in entries]
    sdk = Response.model_validate(data)  # the fixture follows the SDK's schema
    assert read(sdk).to_dict() == t.to_dict()
    text = body("openai_responses_stream")
    events = parse_sse(text)
    for e in events[1:]:
        ResponseTextDeltaEvent.model_validate(e)
    streamed = read(text)
    assert streamed.tokens == t.tokens and streamed.top_logprobs.tolist() == t.top_logprobs.tolist()


def test_gemini_logprobs_result():
    data = body("gemini_generate_content")
    t = read(data)
    result = data["candidates"][0]["logprobsResult"]
    assert t.meta["format"] == "gemini.generate_content" and t.meta["server"] == "gemini"
    assert t.tokens == [c["token"] for c in result["chosenCandidates"]]
    assert t.logprobs.tolist() == [f32(c["logProbability"]) for c in result["chosenCandidates"]]
    assert t.top_tokens[0] == ["The", "Because"] and t.ranks.tolist() == [1, 1, 1, 1]
    assert t.mean_logprob() == pytest.approx(data["candidates"][0]["avgLogprobs"], abs=1e-4)
    # the google-genai SDK's model_dump writes snake_case; the same response that way
    snake = {"candidates": [{"content": data["candidates"][0]["content"], "logprobs_result": {
        "chosen_candidates": [{"token": c["token"], "log_probability": c["logProbability"]}
                              for c in result["chosenCandidates"]],
        "top_candidates": [{"candidates": [{"token": c["token"], "log_probability": c["logProbability"]}
                                           for c in row["candidates"]]} for row in result["topCandidates"]]}}]}
    assert read(snake).top_logprobs.tolist() == t.top_logprobs.tolist()


# -- recognising, and saying what is not recognised -------------------------------------------


def test_openai_compatible_responses_read_like_from_openai():
    import logprob_viz as lv

    for path in sorted((FIXTURES / "vllm").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record["status"] != 200:
            with pytest.raises(ServerError):
                read(record["body"])
            continue
        got, expected = read(record["body"]), lv.from_openai(record["body"])
        for a, b in zip(got if isinstance(got, list) else [got], expected if isinstance(expected, list) else [expected],
                        strict=True):
            assert a.meta["server"] == "vllm" and a.meta["format"] == b.meta["format"]
            assert a.tokens == b.tokens and np.array_equal(a.logprobs, b.logprobs, equal_nan=True)


def test_unknown_input_lists_the_known_formats_and_what_it_got():
    with pytest.raises(LogprobFormatError) as err:
        read({"result": {"tokens": [1, 2]}, "status": "ok"})
    message = str(err.value)
    assert "result, status" in message and all(name in message for name in KNOWN_FORMATS)
    with pytest.raises(LogprobFormatError, match="neither JSON"):
        read("hello")
    with pytest.raises(LogprobFormatError, match="a list of 2"):
        read([1, 2])
    with pytest.raises(ServerError, match="Input validation error"):  # TGI's error body
        read({"error": "Input validation error: `top_n_tokens` must be <= 5", "error_type": "validation"})


def test_openai_compatible_routes_of_llamacpp_and_ollama_are_named_by_their_fingerprint():
    # Minimal chat responses: llama.cpp writes its build ("b<number>-<commit>", common.cpp build_info) as
    # system_fingerprint; Ollama's OpenAI routes write "fp_ollama".
    def chat(fingerprint):
        return {"id": "chatcmpl-Xq3", "object": "chat.completion", "system_fingerprint": fingerprint,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi"}, "logprobs": {"content": [
                    {"token": "Hi", "logprob": -0.1, "bytes": [72, 105], "top_logprobs": []}]}}]}

    assert read(chat("b6548-1f8cbea4")).meta["server"] == "llama.cpp"
    assert read(chat("fp_ollama")).meta["server"] == "ollama"
    assert read(chat("fp_44709d6fcb")).meta["server"] == "openai"
