"""Batched scoring and generation on the real default model: every trace of a batch against the
same input run one at a time, and against a plain unpadded forward pass of a separately loaded
copy of the model (nothing of the runner's own code)."""

import _thread
import threading

import numpy as np
import pytest
import torch

import logprob_viz as lv

TOL = 1e-4  # fp32 on the CPU: padded and unpadded passes differ by ~1e-5 here
TEXTS = [
    "A robot may not injure a human being",
    "Hello",
    "The capital of France is Paris, and 2 + 2 = 4.",
    "    def f(x):\n        return x ** 2  # squares",
    "Robots 🤖 say こんにちは — it’s “fine”.",
    "Short one.",
    "A much longer text, so that the batch has to pad the short ones: once upon a time there was a robot "
    "who wanted to write poems, and it wrote many.",
]


def assert_same_trace(batched, single, *, prompt_only=False):
    assert batched.token_ids.tolist() == single.token_ids.tolist()
    assert batched.prompt_len == single.prompt_len and batched.text == single.text
    np.testing.assert_allclose(batched.logprobs, single.logprobs, atol=TOL)
    np.testing.assert_allclose(batched.entropy, single.entropy, atol=TOL)
    np.testing.assert_allclose(batched.top_logprobs, single.top_logprobs, atol=TOL)
    np.testing.assert_array_equal(batched.ranks, single.ranks)
    np.testing.assert_array_equal(batched.top_ids, single.top_ids)
    assert list(map(list, batched.top_tokens)) == list(map(list, single.top_tokens))


def reference(model, ids, k):
    """Per position of one unpadded sequence: chosen logprob, rank, entropy, top-K logprobs (float64)."""
    with torch.no_grad():
        logp = torch.log_softmax(model(torch.tensor([ids])).logits[0, :-1].double(), dim=-1)
    chosen = torch.tensor(ids[1:], dtype=torch.long)
    lp = logp[torch.arange(len(chosen)), chosen]
    return lp.numpy(), ((logp > lp[:, None]).sum(-1) + 1).numpy(), -(logp.exp() * logp).sum(-1).numpy(), \
        torch.topk(logp, k, dim=-1).values.numpy()


@pytest.mark.parametrize("batch_tokens", [None, 48])  # one batch; many batches (sorted, padded, reordered)
def test_batched_scores_equal_one_at_a_time_and_a_plain_forward_pass(runner, reference_model, batch_tokens):
    corpus = runner.score(TEXTS, top_logprobs=5, batch_tokens=batch_tokens, progress=False)
    assert isinstance(corpus, lv.Corpus) and len(corpus) == len(TEXTS)
    assert [t.text for t in corpus] == TEXTS, "results come back in input order"
    assert [m["index"] for m in corpus.metadata] == list(range(len(TEXTS)))
    for text, batched in zip(TEXTS, corpus, strict=True):
        assert_same_trace(batched, runner.score(text, top_logprobs=5))
        lp, rank, entropy, top = reference(reference_model, batched.token_ids.tolist(), 5)
        np.testing.assert_allclose(batched.logprobs[1:], lp, atol=TOL)
        np.testing.assert_array_equal(batched.ranks[1:], rank)
        np.testing.assert_allclose(batched.entropy[1:], entropy, atol=TOL)
        np.testing.assert_allclose(batched.top_logprobs[1:], top, atol=TOL)
        assert batched.meta["mode"] == "score" and batched.meta["prompt"] == text


def test_lists_of_messages_and_of_prompt_ids(runner):
    chats = [[{"role": "user", "content": "Say hi."}], [{"role": "user", "content": "What is 2 + 2?"}]]
    corpus = runner.score(messages=chats, top_logprobs=3, progress=False)
    for chat, batched in zip(chats, corpus, strict=True):
        assert_same_trace(batched, runner.score(messages=chat, top_logprobs=3))
    ids = [runner.tokenizer(t)["input_ids"] for t in TEXTS[:3]]
    by_ids = lv.load((runner.model, runner.tokenizer)).score(prompt_ids=ids, top_logprobs=3, progress=False)
    assert [t.token_ids.tolist() for t in by_ids] == ids


def test_batched_greedy_generation_equals_one_at_a_time(runner, reference_model):
    prompts = TEXTS[:4]
    corpus = runner.generate(prompts, max_new_tokens=12, top_logprobs=5, progress=False)
    for prompt, batched in zip(prompts, corpus, strict=True):
        single = runner.generate(prompt, max_new_tokens=12, top_logprobs=5)
        assert_same_trace(batched, single)
        assert batched.meta["finish_reason"] == single.meta["finish_reason"]
        lp, rank, _, _ = reference(reference_model, batched.token_ids.tolist(), 5)
        np.testing.assert_allclose(batched.logprobs[1:], lp, atol=TOL)
        assert (batched.completion.ranks == 1).all()
    assert corpus[0].completion.text.startswith(", but a human may be injured by a robot")


def test_each_row_stops_on_its_own_at_eos(runner):
    chats = [[{"role": "user", "content": "Say hi."}], [{"role": "user", "content": "Write a long poem about robots."}]]
    corpus = runner.generate(messages=chats, max_new_tokens=40, top_logprobs=2, progress=False)
    for chat, batched in zip(chats, corpus, strict=True):
        single = runner.generate(messages=chat, max_new_tokens=40, top_logprobs=2)
        assert_same_trace(batched, single)
        assert batched.meta["finish_reason"] == single.meta["finish_reason"]
    assert corpus[0].meta["finish_reason"] == "eos" and corpus[0].tokens[-1] == "<|im_end|>"
    assert corpus[1].meta["finish_reason"] == "length" and len(corpus[1].completion) == 40


def test_seeded_sampling_item_i_uses_seed_plus_i(runner):
    kwargs = dict(max_new_tokens=10, temperature=0.9, top_p=0.95, top_logprobs=4)
    prompts = TEXTS[:3]
    corpus = runner.generate(prompts, seed=11, progress=False, **kwargs)
    for i, (prompt, batched) in enumerate(zip(prompts, corpus, strict=True)):
        single = runner.generate(prompt, seed=11 + i, **kwargs)
        assert_same_trace(batched, single)
        assert batched.meta["seed"] == 11 + i
        np.testing.assert_allclose(batched.processed_logprobs, single.processed_logprobs, atol=TOL)
    again = runner.generate(prompts, seed=[11, 12, 13], progress=False, **kwargs)
    assert [t.token_ids.tolist() for t in again] == [t.token_ids.tolist() for t in corpus]


def test_memory_kept_per_token_is_o_k(runner):
    corpus = runner.score(TEXTS, top_logprobs=7, progress=False)
    for trace in corpus:
        arrays = [trace.logprobs, trace.ranks, trace.entropy, trace.token_ids, trace.top_logprobs, trace.top_ids]
        assert sum(a.nbytes for a in arrays) == len(trace) * (4 + 4 + 4 + 4 + 7 * (4 + 4))
        assert trace.vocab is runner.engine.vocab, "alternatives' texts are read from the shared vocabulary"


def interrupt_after(seconds):
    timer = threading.Timer(seconds, _thread.interrupt_main)  # what Ctrl-C / Jupyter's "interrupt" does
    timer.start()
    return timer


def test_ctrl_c_while_scoring_keeps_the_finished_items(runner):
    texts = [f"Text number {i} of a long corpus: " + "word " * (i % 9) for i in range(600)]
    timer = interrupt_after(1.5)
    try:
        with pytest.warns(UserWarning, match=r"interrupted: the corpus holds the \d+ of 600 items scored so far"):
            corpus = runner.score(texts, batch_tokens=64, progress=False)
    finally:
        timer.cancel()
    assert 0 < len(corpus) < 600 and corpus.meta["interrupted"]
    for trace, meta in zip(corpus, corpus.metadata, strict=True):
        assert trace.text == texts[meta["index"]], "each kept item is whole, and says which input it is"
        assert np.isfinite(trace.logprobs[1:]).all()


def test_ctrl_c_while_generating_keeps_each_row_as_far_as_it_got(runner):
    timer = interrupt_after(1.5)
    try:
        # 2 x (prompt + 400) tokens fit one batch of the default budget: both rows run together
        with pytest.warns(UserWarning, match=r"interrupted: the corpus holds the 2 of 2 items generated so far \(2"):
            corpus = runner.generate(TEXTS[:2], max_new_tokens=400, top_logprobs=3, progress=False)
    finally:
        timer.cancel()
    assert len(corpus) == 2 and corpus.meta["interrupted"]
    for trace in corpus:
        assert trace.meta["finish_reason"] in ("interrupted", "eos")
        assert 0 < len(trace.completion) < 400 and np.isfinite(trace.logprobs[1:]).all()


def test_stop_ends_a_batched_generation_like_ctrl_c(runner):
    steps = []

    def stop():  # asked once per decode step: stop after the fifth
        steps.append(1)
        return len(steps) >= 5

    prompts = [TEXTS[0], TEXTS[1], TEXTS[3]]  # none of them ends within 5 greedy tokens
    corpus = runner.generate(prompts, max_new_tokens=50, stop=stop, progress=False)
    assert len(corpus) == 3 and corpus.meta["interrupted"]
    for trace in corpus:
        assert trace.meta["finish_reason"] == "interrupted" and len(trace.completion) == 5
    with pytest.raises(TypeError, match="stop must be a threading.Event or a callable"):
        runner.score(TEXTS[:2], stop=3)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda r: r.score([]), ValueError, "give one non-empty list"),
        (lambda r: r.score(["fine", 3]), TypeError, "item 1 of the list: the text must be a str"),
        (lambda r: r.score(["fine", ""]), ValueError, "item 1 of the list: the text is empty"),
        (lambda r: r.score(["a"], batch_tokens=0), ValueError, "batch_tokens must be an int >= 1"),
        (lambda r: r.score(prompt_ids=[[1, 2], [10**7]]), ValueError, "item 1 of the list: prompt_ids must be ints"),
        (lambda r: r.generate(["a", "b"], seed=[1], temperature=1.0), ValueError, "a list of 2 ints"),
        (lambda r: r.generate(["a", "b"], max_new_tokens=-1), ValueError, "max_new_tokens must be an int >= 0"),
        (lambda r: r.score(["a"], messages=[[{"role": "user", "content": "x"}]]), ValueError, "give one"),
    ],
)
def test_bad_lists_are_clear_errors(runner, call, error, message):
    with pytest.raises(error, match=message):
        call(runner)
