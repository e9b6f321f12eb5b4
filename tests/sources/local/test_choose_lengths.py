"""The length rules of runner.choose against lm-eval 0.4.13's definitions (issue 48 item 2): ``per_char``
is lm-eval's acc_norm (the log-likelihood over ``len(choice)``, characters), ``per_byte`` its acc_bytes
(over ``len(choice.encode("utf-8"))``), the choice without the target delimiter (a space) lm-eval puts
before it. Non-ASCII options (Kraków: 6 characters, 7 bytes) are where the two differ.

The formulas are written here from lm-eval's source (lm_eval/api/task.py, ConfigurableTask.process_results,
multiple_choice: ``completion_len = np.array([float(len(i)) for i in choices])``, ``byte_length =
np.array([float(len(i.encode("utf-8"))) for i in choices])``); where lm-eval 0.4.13 is importable
(tests/lm_eval_peer.py), its own process_results decides the same predictions."""

import numpy as np
import pytest

import logprob_viz as lv
from choose_reference import independent_sum, softmax
from lm_eval_peer import lm_eval_or_skip, multiple_choice_task

TOL = 1e-4
QUESTION = "Question: Which city is in Poland?\nAnswer:"
CHOICES = ["Kraków", "Paris", "Łódź and Gdańsk", "São Paulo", "Zürich"]  # lm-eval's choices: no leading space
OPTIONS = [" " + c for c in CHOICES]  # what choose is given: the target delimiter in front, as lm-eval scores


def _lm_eval_scores(sums, choices, rule):
    if rule == "per_char":
        return np.asarray(sums) / np.array([float(len(c)) for c in choices])  # acc_norm's completion_len
    return np.asarray(sums) / np.array([float(len(c.encode("utf-8"))) for c in choices])  # acc_bytes' byte_length


@pytest.mark.parametrize("rule", ["per_char", "per_byte"])
def test_per_char_and_per_byte_are_lm_eval_acc_norm_and_acc_bytes_on_the_model(runner, reference_model, rule):
    ch = runner.choose(QUESTION, OPTIONS, length=rule, progress=False)
    sums = [independent_sum(reference_model, runner.tokenizer, QUESTION, o)[0] for o in OPTIONS]
    expected = softmax(list(_lm_eval_scores(sums, CHOICES, rule)))
    np.testing.assert_allclose(list(ch.probs.values()), expected, atol=TOL)
    assert ch.length == rule and ch.predicted == OPTIONS[int(np.argmax(expected))]
    np.testing.assert_allclose(list(ch.logprobs.values()), sums, atol=TOL)  # the sums are not normalised


def test_per_char_and_per_byte_pick_differently_where_characters_are_not_bytes():
    # sums where the two rules disagree: " Kraków" is 6 characters, 7 bytes; " Paris" 5 and 5
    # (-13 / 6 = -2.17 < -10.5 / 5 = -2.1 < -13 / 7 = -1.86)
    trace = lv.Trace(tokens=["Q", " x"], logprobs=[float("nan"), -1.0], prompt_len=1)
    sums = [[-13.0, -10.5]]
    by_char = lv.Choices(["Q"], [" Kraków", " Paris"], [[trace, trace]], sums, length="per_char")
    by_byte = lv.Choices(["Q"], [" Kraków", " Paris"], [[trace, trace]], sums, length="per_byte")
    assert by_char.predicted == [" Paris"] and by_byte.predicted == [" Kraków"]
    np.testing.assert_allclose(by_char.scores, [[-13 / 6, -10.5 / 5]])
    np.testing.assert_allclose(by_byte.scores, [[-13 / 7, -10.5 / 5]])


def _lm_eval_picks(question, choices, lls) -> dict:
    """The option index lm-eval's own process_results predicts by acc_norm and by acc_bytes. It says only
    whether its prediction is the gold one: asking with each option as gold finds it."""
    task = multiple_choice_task([{"question": question, "choices": choices, "answer": g} for g in range(len(choices))])
    hits = {"acc_norm": [], "acc_bytes": []}
    for doc in task.test_docs():
        result = task.process_results(doc, [(float(ll), False) for ll in lls])
        for metric in hits:
            hits[metric].append(result[metric])
    assert all(sum(h) == 1 for h in hits.values()), hits
    return {metric: int(np.argmax(h)) for metric, h in hits.items()}


def test_lm_eval_own_process_results_predicts_as_per_char_and_per_byte(runner):
    lm_eval_or_skip()
    ch = runner.choose(QUESTION, OPTIONS, progress=False)
    picks = _lm_eval_picks(QUESTION, CHOICES, [ch.logprobs[o] for o in OPTIONS])
    for rule, metric in (("per_char", "acc_norm"), ("per_byte", "acc_bytes")):
        assert runner.choose(QUESTION, OPTIONS, length=rule, progress=False).predicted == OPTIONS[picks[metric]]
    # and where the two rules disagree (the sums of the test above), lm-eval disagrees the same way
    picks = _lm_eval_picks(QUESTION, ["Kraków", "Paris"], [-13.0, -10.5])
    assert picks == {"acc_norm": 1, "acc_bytes": 0}


def test_with_length_re_ranks_from_the_stored_sums_without_a_forward_pass(runner, reference_model):
    ch = runner.choose(QUESTION, OPTIONS, gold=" Kraków", progress=False)
    sums = [independent_sum(reference_model, runner.tokenizer, QUESTION, o) for o in OPTIONS]  # (sum, n_tokens, ids)
    calls = []
    hook = runner.model.register_forward_hook(lambda *_: calls.append(1))
    try:
        rules = {rule: ch.with_length(rule) for rule in ("sum", "per_token", "per_char", "per_byte")}
    finally:
        hook.remove()
    assert calls == []  # no forward pass
    counts = {"sum": [1] * len(OPTIONS), "per_token": [n for _, n, _ in sums], "per_char": [len(c) for c in CHOICES],
              "per_byte": [len(c.encode()) for c in CHOICES]}
    for rule, other in rules.items():
        expected = softmax([total / n for (total, _, _), n in zip(sums, counts[rule], strict=True)])
        np.testing.assert_allclose(list(other.probs.values()), expected, atol=TOL)
        assert other.length == rule and other.gold.tolist() == [0] and other.traces == ch.traces
        assert other.correct == (int(np.argmax(expected)) == 0)
    assert ch.length == "sum"  # the original is unchanged
    with pytest.raises(ValueError, match="length must be one of 'sum', 'per_token', 'per_char', 'per_byte'"):
        ch.with_length("per_word")


PER_PROMPT = [
    ("Question: Which city is in Poland?\nAnswer:", [" Kraków", " Paris", " Zürich"], " Kraków"),
    ("Question: What colour is snow?\nAnswer:", [" white", " green", " black"], 0),
]


def test_each_prompt_its_own_options_scored_and_tabled_wide(runner, reference_model):
    prompts, options, gold = (list(x) for x in zip(*PER_PROMPT, strict=True))
    ch = runner.choose(prompts, options=options, gold=gold, length="per_char", progress=False)
    assert ch.per_prompt and ch.options == options and ch.prob_table.shape == (2, 3)
    for r, (prompt, row, _) in enumerate(PER_PROMPT):
        sums = [independent_sum(reference_model, runner.tokenizer, prompt, o)[0] for o in row]
        np.testing.assert_allclose(ch.logprob_table[r], sums, atol=TOL)
        np.testing.assert_allclose(ch.prob_table[r], softmax([s / len(o.lstrip()) for s, o in zip(sums, row,
                                                                                                  strict=True)]),
                                   atol=TOL)
        assert [t.meta["option"] for t in ch.traces[r]] == row and ch.traces[r][0].text == prompt + row[0]
        assert ch.probs[r] == {o: ch.prob_table[r, j] for j, o in enumerate(row)}  # a dict per prompt
        assert ch[r].options == row and ch[r].probs == ch.probs[r]
    frame = ch.to_pandas()
    assert list(frame.columns) == ["prompt", "option_0", "p_0", "option_1", "p_1", "option_2", "p_2", "predicted",
                                   "confidence", "gold", "correct"]
    assert frame["option_0"].tolist() == [" Kraków", " white"] and frame["gold"].tolist() == [" Kraków", " white"]
    np.testing.assert_allclose(frame["p_1"].to_numpy(), ch.prob_table[:, 1])
    assert frame["predicted"].tolist() == [row[j] for row, j in zip(options, ch.prob_table.argmax(axis=1),
                                                                    strict=True)]
    assert ch.with_length("per_byte").options == options and ch.to_corpus().metadata[1]["gold"] == " white"
    assert ch.view().bars._payload["per_prompt"] is True


def test_per_prompt_options_that_do_not_fit_say_what_to_give(runner):
    prompts = [p for p, _, _ in PER_PROMPT]
    with pytest.raises(ValueError, match=r"options is a list of 1 lists .* got 2"):
        runner.choose(prompts, options=[[" a", " b"]])
    with pytest.raises(ValueError, match="give every prompt the same number of options .* 2 for prompt 0, 3 for "
                                         "prompt 1"):
        runner.choose(prompts, options=[[" a", " b"], [" a", " b", " c"]])
    with pytest.raises(TypeError, match="prompt 1's options: options must be a non-empty list of strings"):
        runner.choose(prompts, options=[[" a", " b"], []])
    with pytest.raises(ValueError, match=r"gold answer 1 is ' a', which is not one of the options \[' c', ' d'\]"):
        runner.choose(prompts, options=[[" a", " b"], [" c", " d"]], gold=[" a", " a"])
