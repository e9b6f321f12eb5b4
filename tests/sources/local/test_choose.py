"""runner.choose on the real default model: each option's logprob against an independent teacher-forced
sum (the tokenizer and a plain unpadded forward pass of a separately loaded copy of the model, log_softmax
in float64: tests/choose_reference.py), the probabilities against a softmax written there, and the traces
against runner.score."""

import warnings

import numpy as np
import pytest
import torch

import logprob_viz as lv
from choose_reference import independent_sum, softmax

TOL = 1e-4
PROMPT = "Review: The plot was dull and the actors looked bored. Sentiment:"
OPTIONS = [" positive", " negative", " mixed, but mostly good", " 🤖"]  # 1, 1, several tokens, split bytes
PROMPTS = [
    "Q: What is the capital of France?\nA:",
    "Q: Is ice cold? Answer yes or no.\nA: ",  # a trailing space: it moves to the option (lm-eval)
    "Question: 2 + 2 =",
    "Review: I would watch it again tomorrow! Sentiment:",
    "x",
]


def test_one_prompt_logprobs_equal_independent_sums_and_probs_sum_to_one(runner, reference_model):
    ch = runner.choose(PROMPT, OPTIONS, top_logprobs=3)
    assert isinstance(ch, lv.Choices) and list(ch.logprobs) == OPTIONS
    expected = {o: independent_sum(reference_model, runner.tokenizer, PROMPT, o)[0] for o in OPTIONS}
    for option in OPTIONS:
        assert abs(ch.logprobs[option] - expected[option]) < TOL, option
    assert abs(sum(ch.probs.values()) - 1) < 1e-12
    for option, p in zip(OPTIONS, softmax([expected[o] for o in OPTIONS]), strict=True):
        assert abs(ch.probs[option] - p) < TOL
    assert ch.predicted == max(expected, key=expected.get)
    assert ch.length == "sum"


def test_each_trace_is_the_prompt_and_its_option_as_runner_score_gives_it(runner):
    ch = runner.choose(PROMPT, OPTIONS, top_logprobs=4)
    for option, trace in zip(OPTIONS, ch.traces, strict=True):
        alone = runner.score(PROMPT + option, top_logprobs=4)
        assert trace.token_ids.tolist() == alone.token_ids.tolist()
        assert trace.text == PROMPT + option
        assert trace.prompt_len == len(runner.tokenizer(PROMPT)["input_ids"])
        np.testing.assert_allclose(trace.logprobs, alone.logprobs, atol=TOL)
        np.testing.assert_allclose(trace.top_logprobs, alone.top_logprobs, atol=TOL)
        np.testing.assert_array_equal(trace.ranks[1:], alone.ranks[1:])
        assert trace.meta["mode"] == "choose" and trace.meta["option"] == option


@pytest.mark.parametrize("batch_tokens", [None, 40])  # one batch; several (sorted, padded, reordered)
def test_a_list_of_prompts_gives_a_row_per_prompt(runner, reference_model, batch_tokens):
    options = [" yes", " no", " Paris", " 4"]
    ch = runner.choose(PROMPTS, options, gold=[" Paris", " yes", 3, " yes", " no"], batch_tokens=batch_tokens,
                       progress=False)
    assert len(ch) == len(PROMPTS) and ch.logprob_table.shape == (len(PROMPTS), 4)
    for r, prompt in enumerate(PROMPTS):
        sums = [independent_sum(reference_model, runner.tokenizer, prompt, o)[0] for o in options]
        np.testing.assert_allclose(ch.logprob_table[r], sums, atol=TOL)
        np.testing.assert_allclose(ch.prob_table[r], softmax(sums), atol=TOL)
        assert ch[r].logprobs == {o: ch.logprob_table[r, j] for j, o in enumerate(options)}
    np.testing.assert_allclose(ch.prob_table.sum(axis=1), 1, atol=1e-12)
    frame = ch.to_pandas()
    assert list(frame.columns) == ["prompt", *options, "predicted", "confidence", "gold", "correct"]
    np.testing.assert_allclose(frame[" Paris"].to_numpy(), ch.probs[" Paris"])
    best = ch.prob_table.argmax(axis=1)
    assert frame["correct"].tolist() == (best == np.array([2, 0, 3, 0, 1])).tolist()
    # the calibration of the choices is that of their confidence (the predicted option's p) and correctness
    cal = ch.calibration(bins=4)
    confidence = [max(softmax([independent_sum(reference_model, runner.tokenizer, p, o)[0] for o in options]))
                  for p in PROMPTS]
    counts = [sum(1 for c in confidence if lo / 4 <= c < (lo + 1) / 4 or (lo == 3 and c == 1)) for lo in range(4)]
    assert cal.table["count"].tolist() == counts
    np.testing.assert_allclose(cal.probs, confidence, atol=TOL)
    assert abs(cal.brier - np.mean((np.array(confidence) - frame["correct"].to_numpy()) ** 2)) < TOL


@pytest.mark.parametrize("length", ["per_token", "per_char", "per_byte"])
def test_length_normalised_probabilities(runner, reference_model, length):
    ch = runner.choose(PROMPT, OPTIONS, length=length)
    scores = []
    for option in OPTIONS:
        total, n_tokens, _ = independent_sum(reference_model, runner.tokenizer, PROMPT, option)
        # per character / byte: the option without its leading space, as lm-eval's acc_norm / acc_bytes count it
        count = {"per_token": n_tokens, "per_char": len(option.lstrip()), "per_byte": len(option.lstrip().encode())}
        scores.append(total / count[length])
    for option, p in zip(OPTIONS, softmax(scores), strict=True):
        assert abs(ch.probs[option] - p) < TOL
    assert ch.length == length
    for option, total in ch.logprobs.items():  # the logprobs stay the sums
        assert abs(total - independent_sum(reference_model, runner.tokenizer, PROMPT, option)[0]) < TOL


def test_chat_messages_score_the_answer_after_the_generation_prompt(runner, reference_model):
    messages = [{"role": "user", "content": "Is the sun hot? Answer Yes or No."}]
    ch = runner.choose(messages=messages, options=["Yes", "No"])
    text = runner.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert ch.prompts == [text]
    for option in ("Yes", "No"):
        expected = independent_sum(reference_model, runner.tokenizer, text, option, chat=True)[0]
        assert abs(ch.logprobs[option] - expected) < TOL


def test_a_token_across_the_boundary_is_split_as_lm_eval_does_and_flagged(runner, reference_model):
    tokenizer = runner.tokenizer
    # " http" + "s://x" tokenizes as " https", "://", "x": the whole's first tokens are not the prompt's
    # own, and lm-eval scores the prompt's tokens followed by the whole's after as many tokens ("://", "x")
    prompt, option = "See http", "s://x"
    context, whole = tokenizer(prompt)["input_ids"], tokenizer(prompt + option)["input_ids"]
    assert whole[: len(context)] != context, "the example must straddle"
    with pytest.warns(UserWarning, match=r"'s' of option 's://x' was not scored; the scored text is 'See http://x'"):
        ch = runner.choose(prompt, [option, " world"])
    assert ch.traces[0].text == "See http://x"  # (what lm-eval scores too: the merged "s" is lost)
    trace = ch.traces[0]
    expected, _, ids = independent_sum(reference_model, tokenizer, prompt, option)
    assert trace.token_ids.tolist() == ids and abs(ch.logprobs[option] - expected) < TOL
    assert trace.flags[len(context)] == ["straddles_prompt"]
    assert any("begin in the prompt" in w for w in trace.warnings)
    assert not ch.traces[1].flagged()  # " world" starts a token of its own


def test_many_options_cost_one_pass_of_the_prompt(runner):
    calls = []
    hook = runner.model.register_forward_hook(lambda module, args, kwargs, out: calls.append(kwargs["input_ids"].shape),
                                              with_kwargs=True)
    try:
        runner.choose(PROMPT, [f" option {i}" for i in range(8)], progress=False)
    finally:
        hook.remove()
    n_prompt = len(runner.tokenizer(PROMPT)["input_ids"])
    n_options = sum(len(runner.tokenizer(PROMPT + f" option {i}")["input_ids"]) - n_prompt for i in range(8))
    assert calls == [torch.Size([1, n_prompt + n_options])]  # one row: the prompt once, then every option


def test_bad_arguments_say_what_to_give(runner):
    with pytest.raises(TypeError, match="options must be a non-empty list"):
        runner.choose(PROMPT, " positive")
    with pytest.raises(ValueError, match="distinct"):
        runner.choose(PROMPT, [" a", " a"])
    with pytest.raises(ValueError, match="length must be one of"):
        runner.choose(PROMPT, [" a", " b"], length="mean")
    with pytest.raises(ValueError, match="not one of the options"):
        runner.choose(PROMPT, [" a", " b"], gold=" c")
    with pytest.raises(ValueError, match="one gold answer per prompt"):
        runner.choose([PROMPT, PROMPT], [" a", " b"], gold=[0])
    with pytest.raises(ValueError, match="prompt is empty"):
        runner.choose("   ", [" a", " b"])


def test_small_option_messages_say_what_was_given(runner):
    # issue 48 item 7: the message names what was wrong, with the error type Python uses for it
    with pytest.raises(TypeError) as empty:
        runner.choose(PROMPT, [])
    assert str(empty.value).endswith("e.g. [' positive', ' negative']; got an empty list")
    with pytest.raises(TypeError) as one:
        runner.choose(PROMPT, " positive")
    assert str(one.value).endswith("got the string ' positive' (one option is still a list: [' positive'])")
    with pytest.raises(TypeError) as number:
        runner.choose(PROMPT, [" a", 3])
    assert str(number.value) == ("option 1 is 3, an int: each option must be a string, the answer's text "
                                 "(a missing value in a table column reads as nan or None)")
    with pytest.raises(ValueError, match="option 0 is '': each option must be a non-empty string"):
        runner.choose(PROMPT, ["", " a"])


def test_whitespace_only_options_are_scored_with_a_warning(runner):
    with pytest.warns(UserWarning) as caught:
        ch = runner.choose(PROMPT, [" ", "  ", " positive"], progress=False)
    assert [str(w.message) for w in caught] == [
        "options 0 (' '), 1 ('  ') are only whitespace: scored as the whitespace the model writes next, not as an "
        "answer (length='per_char' or 'per_byte' counts each as 1); if the options stand for answers, give their text "
        "(e.g. ' yes')"]
    assert caught[0].filename == __file__  # the user's line, not the package's
    assert abs(sum(ch.probs.values()) - 1) < 1e-12 and ch.traces[0].text == PROMPT + " "


def test_an_option_partly_merged_into_the_prompt_names_what_was_not_scored(runner):
    # issue 48 item 1: "http" + "s://" tokenizes as "https", "://": the option's "s" goes into the prompt's
    # last token, which keeps its own tokens ("http"), so "s://" is scored as "://", the same as "://"
    with pytest.warns(UserWarning) as caught:
        ch = runner.choose("http", ["s://", "://"], progress=False)
    lost = ("'s' of option 's://' was not scored; the scored text is 'http://' (the tokenizer merged it into the "
            "prompt's last token, and the prompt keeps its own tokens, as lm-eval does)")
    same = ("options 's://' and '://' become the same scored text 'http://': the same tokens, so the same logprob; "
            "choosing between them says nothing")
    assert [str(w.message) for w in caught] == [f"{lost}; {same}. End the prompt with a space or start the options "
                                               "with one, or pass strict=True to raise"]
    assert caught[0].filename == __file__
    assert [t.text for t in ch.traces] == ["http://", "http://"]  # what the model scored, as the note says
    assert ch.logprobs["s://"] == ch.logprobs["://"]
    assert ch.traces[0].warnings[:2] == [lost, same] and ch.traces[1].warnings[0] == same
    with pytest.raises(ValueError) as strict:
        runner.choose("http", ["s://", "://"], progress=False, strict=True)
    assert str(strict.value) == (f"strict=True: {lost}; {same}. End the prompt with a space or start the options "
                                 "with one so that no token crosses the prompt's end (the error's .choices holds "
                                 "the result)")
    assert strict.value.choices.logprobs == ch.logprobs  # nothing computed is lost
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an option that starts a token of its own: no word, strict or not
        clean = runner.choose("http", [" s://", " x"], progress=False, strict=True)
    assert not any(t.meta.get("warnings") for t in clean.traces)


def test_each_prompt_of_a_list_names_its_own_merged_option(runner):
    with pytest.warns(UserWarning) as caught:
        ch = runner.choose(["See http", "Go to http"], ["s://x", " world"], progress=False)
    message = str(caught[0].message)
    assert message.startswith("prompt 0: 's' of option 's://x' was not scored; the scored text is 'See http://x'")
    assert "; prompt 1: 's' of option 's://x' was not scored; the scored text is 'Go to http://x'" in message
    assert ch.traces[1][0].warnings[0].startswith("'s' of option 's://x' was not scored")
