"""`lv.audit` on OpenAI Completions bodies this test builds from the default model's own distribution
(plain transformers, float64, computed here), read by `lv.read` as a server's body would be: raw,
scaled at T = 0.7, processed (T = 0.7, top-p 0.9 in transformers' order, computed here by a loop) and
one with numbers altered at known tokens."""

from __future__ import annotations

import math

import numpy as np
import pytest

import logprob_viz as lv

PROMPT = "A robot may not injure a human being"
N_NEW = 14
K = 5
CUT = -9999.0  # what vLLM writes for a -inf logprob in JSON


@pytest.fixture(scope="module")
def model_rows(reference_model, runner):
    """(continuation ids, float64 logits (N_NEW, V) predicting each): greedy from the prompt."""
    import torch

    tok = runner.tokenizer
    ids = list(tok(PROMPT)["input_ids"])
    with torch.inference_mode():
        for _ in range(N_NEW):
            ids.append(int(reference_model(torch.tensor([ids])).logits[0, -1].argmax()))
        logits = reference_model(torch.tensor([ids])).logits[0].double()
    p = len(ids) - N_NEW
    return ids[p:], logits[p - 1:-1].numpy()


def _log_softmax(x):
    return x - (x.max() + math.log(np.exp(x - x.max()).sum()))


def _top_p_transformers(scaled, top_p):
    """Kept ids, most likely first: a token goes when its mass with every less likely one's is <= 1 - top_p."""
    order = sorted(range(len(scaled)), key=lambda i: -scaled[i])
    probs = np.exp(_log_softmax(scaled))
    kept, suffix = [], 0.0
    for index in range(len(order) - 1, -1, -1):
        suffix += probs[order[index]]
        if suffix > 1 - top_p or index == 0:
            kept.append(order[index])
    return kept[::-1]


def _body(tokenizer, chosen, rows):
    """An OpenAI Completions body: each position's chosen token and its top K by value (CUT for -inf)."""
    text = [tokenizer.decode([i]) for i in chosen]
    tops, values = [], []
    for i, row in zip(chosen, rows, strict=True):
        top = np.argsort(-row, kind="stable")[:K]
        tops.append({tokenizer.decode([int(j)]): float(row[j]) if np.isfinite(row[j]) else CUT for j in top})
        values.append(float(row[i]))
    return {"id": "cmpl-audit", "object": "text_completion", "model": "smollm2",
            "choices": [{"index": 0, "text": "".join(text), "finish_reason": "length",
                         "logprobs": {"tokens": text, "token_logprobs": values, "top_logprobs": tops,
                                      "text_offset": None}}]}


def _audit(runner, body, **settings):
    return lv.audit(lv.read(body), runner, prompt=PROMPT, settings=settings or None)


def test_raw_numbers_are_named_raw(runner, model_rows):
    chosen, logits = model_rows
    result = _audit(runner, _body(runner.tokenizer, chosen, [_log_softmax(z) for z in logits]))
    assert isinstance(result, lv.Audit)
    assert result.kind == "raw", result.explanation
    assert result.positions == [] and result.checked == N_NEW


def test_scaled_numbers_give_their_temperature(runner, model_rows):
    chosen, logits = model_rows
    result = _audit(runner, _body(runner.tokenizer, chosen, [_log_softmax(z / 0.7) for z in logits]))
    assert result.kind == "scaled", result.explanation
    assert result.settings["temperature"] == pytest.approx(0.7, abs=1e-3)


def test_processed_numbers_give_the_kept_sets_and_the_orders(runner, model_rows):
    chosen, logits = model_rows
    rows, sizes = [], []
    for z in logits:
        scaled = z / 0.7
        kept = _top_p_transformers(scaled, 0.9)
        row = np.full(len(z), -np.inf)
        row[kept] = _log_softmax(scaled[kept])
        rows.append(row)
        sizes.append(len(kept))
    assert max(sizes) > 1 and min(sizes) < K  # some positions keep several tokens, some cut inside the listed K
    result = _audit(runner, _body(runner.tokenizer, chosen, rows), temperature=0.7, top_p=0.9)
    assert result.kind == "processed", result.explanation
    assert result.settings["temperature"] == pytest.approx(0.7, abs=1e-3)
    # with the request's settings: the orders that judge top-p after temperature keep these sets, llama.cpp's not
    assert result.settings["engines_with_requested"] == ["transformers", "vllm", "sglang", "ollama"]
    for want, got in zip(sizes, result.settings["kept"], strict=True):
        low, high = got if isinstance(got, tuple) else (got, got)
        assert low <= want <= high
    assert "transformers" in result.settings["engines"] and "vllm" in result.settings["engines"]
    top_p = [c for c in result.settings["cuts"] if c["setting"] == "top_p" and "transformers" in c["engines"]]
    assert top_p and top_p[0]["low"] < 0.9 <= top_p[0]["high"]


def test_llamacpp_order_is_told_apart_from_the_others(runner, model_rows):
    """Top-p 0.9 judged at T = 1, then T = 0.7 (llama.cpp's chain): only llama.cpp's order explains it."""
    chosen, logits = model_rows
    rows = []
    for z in logits:
        kept = _top_p_transformers(z, 0.9)  # at T = 1; llama.cpp's ">= p" running sum keeps the same tokens here
        row = np.full(len(z), -np.inf)
        row[kept] = _log_softmax(z[kept] / 0.7)
        rows.append(row)
    result = _audit(runner, _body(runner.tokenizer, chosen, rows), temperature=0.7, top_p=0.9)
    assert result.kind == "processed", result.explanation
    assert result.settings["engines"] == ["llama.cpp"], result.explanation
    assert result.settings["engines_with_requested"] == ["llama.cpp"]


def test_altered_numbers_are_a_mismatch_at_exactly_those_tokens(runner, model_rows):
    chosen, logits = model_rows
    rows = [_log_softmax(z) for z in logits]
    body = _body(runner.tokenizer, chosen, rows)
    lp = body["choices"][0]["logprobs"]
    altered = [3, 9]
    for i in altered:
        lp["token_logprobs"][i] += 0.3
        lp["top_logprobs"][i][lp["tokens"][i]] += 0.3
    result = _audit(runner, body)
    assert result.kind == "mismatch", result.explanation
    assert [p["index"] for p in result.positions] == altered
    first = result.positions[0]
    assert first["served"][chosen[3]] == pytest.approx(rows[3][chosen[3]] + 0.3, abs=1e-5)
    assert first["reference"][chosen[3]] == pytest.approx(rows[3][chosen[3]], abs=1e-3)
    assert str(result.tolerance) in result.explanation


def test_no_logprobs_says_so(runner):
    body = {"id": "cmpl-none", "object": "text_completion", "model": "smollm2",
            "choices": [{"index": 0, "text": " but", "finish_reason": "length", "logprobs": None}]}
    with pytest.raises(ValueError, match="the provider returned no logprobs"):
        lv.audit(body, runner, prompt=PROMPT)
    unknown = lv.Trace(tokens=[" but", " a"], logprobs=[math.nan, math.nan])  # a stream that carried none
    with pytest.raises(ValueError, match="the provider returned no logprobs"):
        lv.audit(unknown, runner, prompt=PROMPT)


def test_a_body_without_its_prompt_asks_for_it(runner, model_rows):
    chosen, logits = model_rows
    trace = lv.read(_body(runner.tokenizer, chosen, [_log_softmax(z) for z in logits]))
    with pytest.raises(ValueError, match="give prompt="):
        lv.audit(trace, runner)
