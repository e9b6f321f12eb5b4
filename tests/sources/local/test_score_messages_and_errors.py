"""Scoring chat messages scores them as given; wrong arguments and over-long texts get errors in the user's words.

The token ids are checked against the tokenizer's own chat template (``apply_chat_template``,
tokenized by transformers), not against what the runner computed.
"""

from __future__ import annotations

import pytest

ANSWERED = [{"role": "user", "content": "Is the sky blue? Answer yes or no."},
            {"role": "assistant", "content": "Yes."}]
ASKED = ANSWERED[:1]


def _template_ids(tokenizer, messages, generation_prompt: bool) -> list[int]:
    ids = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=generation_prompt)
    return list(ids["input_ids"] if hasattr(ids, "keys") else ids)


def test_scoring_messages_that_end_with_the_answer_adds_no_empty_assistant_turn(runner):
    tok = runner.tokenizer
    trace = runner.score(messages=ANSWERED, progress=False)
    expected = _template_ids(tok, ANSWERED, generation_prompt=False)
    assert trace.token_ids.tolist() == expected
    with_prompt = _template_ids(tok, ANSWERED, generation_prompt=True)
    assert len(with_prompt) > len(expected)  # the template does add a turn when asked: it is left out here
    assert not trace.text.rstrip().endswith("<|im_start|>assistant")
    # the same in a list (batched scoring)
    corpus = runner.score(messages=[ANSWERED, ANSWERED], progress=False)
    assert [t.token_ids.tolist() for t in corpus.traces] == [expected, expected]


def test_scoring_a_question_still_ends_with_the_generation_prompt_and_generate_is_unchanged(runner):
    tok = runner.tokenizer
    assert runner.score(messages=ASKED, progress=False).token_ids.tolist() == _template_ids(tok, ASKED, True)
    t = runner.generate(messages=ASKED, max_new_tokens=1, progress=False)
    assert t.token_ids[:t.prompt_len].tolist() == _template_ids(tok, ASKED, True)


@pytest.mark.parametrize("call, args", [
    ("score", dict(text="Hello", colour="red")),
    ("score", dict(text=["Hello", "World"], colour="red")),
    ("generate", dict(prompt="Hello", colour="red")),
    ("generate", dict(prompt=["Hello", "World"], colour="red")),
    ("stream", dict(prompt="Hello", colour="red")),
])
def test_an_unknown_argument_is_named_as_given_with_what_the_call_takes(runner, call, args):
    with pytest.raises(TypeError) as info:
        result = getattr(runner, call)(**args)
        list(result) if call == "stream" else None
    message = str(info.value)
    assert message.startswith(f"{call}() got an unexpected keyword argument 'colour'")
    assert "top_logprobs" in message and "_batch" not in message and "Runner." not in message


def test_a_misspelt_argument_gets_the_near_name(runner):
    with pytest.raises(TypeError, match=r"'top_logprob' \(did you mean 'top_logprobs'\?\)"):
        runner.score(["a", "b"], top_logprob=3)


def test_an_over_long_text_to_score_speaks_of_its_length(runner):
    limit = runner.model.config.max_position_embeddings
    long_ids = [runner.tokenizer.eos_token_id or 0] * (limit + 5)
    with pytest.raises(ValueError) as info:
        runner.score(prompt_ids=long_ids)
    assert f"the text is {limit + 5} tokens long" in str(info.value)
    assert "max_new_tokens" not in str(info.value)
    with pytest.raises(ValueError, match="max_new_tokens=10"):
        runner.generate(prompt_ids=long_ids[:limit - 5], max_new_tokens=10)
