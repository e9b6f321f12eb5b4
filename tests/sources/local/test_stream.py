"""runner.stream on the real default model: growing snapshots whose last is what generate returns,
interrupts that keep the partial trace, and token ids as the prompt.

Equality is checked field by field against an independent `generate` call with the same
arguments; the greedy tokens are also checked against plain transformers `model.generate`.
"""

import signal
import threading

import numpy as np
import pytest
import torch

ROBOT = "A robot may not injure a human being"


def assert_same_trace(a, b):
    """Every per-token field equal (NaN equal to NaN), and the same prompt length and settings."""
    assert a.tokens == b.tokens and a.token_bytes == b.token_bytes and a.prompt_len == b.prompt_len
    for name in ("token_ids", "logprobs", "ranks", "entropy", "top_logprobs", "top_ids"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert list(a.top_tokens) == list(b.top_tokens)
    assert (a.processed_logprobs is None) == (b.processed_logprobs is None)
    if a.processed_logprobs is not None:
        np.testing.assert_array_equal(a.processed_logprobs, b.processed_logprobs)
        np.testing.assert_array_equal(a.processed_top_logprobs, b.processed_top_logprobs)
    strip = lambda m: {k: v for k, v in m.items() if k != "seconds"}  # noqa: E731
    assert strip(a.meta) == strip(b.meta)


def check_growing(snapshots, final):
    lengths = [len(s) for s in snapshots]
    assert lengths == sorted(lengths) and len(set(lengths)) == len(lengths), f"not growing: {lengths}"
    for s in snapshots[:-1]:  # each snapshot is a prefix of the final trace
        n = len(s)
        assert s.token_ids.tolist() == final.token_ids[:n].tolist()
        np.testing.assert_array_equal(s.logprobs, final.logprobs[:n])
        np.testing.assert_array_equal(s.top_ids, final.top_ids[:n])
        assert s.prompt_len == final.prompt_len


def test_greedy_stream_grows_and_ends_with_generate(runner, reference_model):
    snapshots = list(runner.stream(ROBOT, max_new_tokens=12, top_logprobs=5))
    final = runner.generate(ROBOT, max_new_tokens=12, top_logprobs=5)
    assert len(snapshots) == 13, "the scored prompt, then one snapshot per token on the CPU"
    assert len(snapshots[0]) == final.prompt_len
    check_growing(snapshots, final)
    assert_same_trace(snapshots[-1], final)
    ids = torch.tensor([final.token_ids[: final.prompt_len].tolist()])
    with torch.no_grad():
        want = reference_model.generate(ids, max_new_tokens=12, do_sample=False, pad_token_id=2)[0, ids.shape[1]:]
    assert final.completion.token_ids.tolist() == want.tolist()


def test_seeded_sampling_stream_ends_with_generate(runner):
    kwargs = dict(max_new_tokens=16, temperature=0.8, top_p=0.9, top_k=40, seed=11, top_logprobs=4)
    snapshots = list(runner.stream(ROBOT, stream_every=3, **kwargs))
    final = runner.generate(ROBOT, **kwargs)
    assert final.processed_logprobs is not None and final.meta["do_sample"] is True
    check_growing(snapshots, final)
    assert [len(s) - final.prompt_len for s in snapshots[:-1]] == [0, 3, 6, 9, 12, 15]
    assert_same_trace(snapshots[-1], final)


def test_chat_stream_stops_at_eos_like_generate(runner):
    messages = [{"role": "user", "content": "Say hi."}]
    snapshots = list(runner.stream(messages=messages, max_new_tokens=64, top_logprobs=3))
    final = runner.generate(messages=messages, max_new_tokens=64, top_logprobs=3)
    assert final.meta["finish_reason"] == "eos"
    check_growing(snapshots, final)
    assert_same_trace(snapshots[-1], final)


def test_a_stop_event_keeps_the_partial_trace(runner):
    stop = threading.Event()
    seen = []
    for snapshot in runner.stream(ROBOT, max_new_tokens=500, top_logprobs=5, stop=stop):
        seen.append(snapshot)
        if len(seen) == 4:
            stop.set()
    final = seen[-1]
    assert final.meta["finish_reason"] == "interrupted"
    n_new = len(final) - final.prompt_len
    assert 3 <= n_new <= 5, n_new
    check_growing(seen, final)
    # What was kept is what an uninterrupted greedy run gives for the same tokens.
    full = runner.generate(ROBOT, max_new_tokens=n_new, top_logprobs=5)
    assert full.token_ids.tolist() == final.token_ids.tolist()
    np.testing.assert_array_equal(full.logprobs, final.logprobs)


def test_generate_with_a_stop_callable(runner):
    calls = []
    trace = runner.generate(ROBOT, max_new_tokens=500, stop=lambda: len(calls.append(1) or calls) >= 3)
    assert trace.meta["finish_reason"] == "interrupted" and len(trace.completion) == 3


def test_ctrl_c_during_a_stream_ends_it_with_the_partial_trace(runner):
    import _thread

    # interrupt_main does nothing while SIGINT is ignored (a background launch): fail now, not after 2000 tokens
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "SIGINT is not handled by Python here"
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.warns(UserWarning, match="generation interrupted"):
            snapshots = list(runner.stream(ROBOT, max_new_tokens=2000, top_logprobs=5))
    finally:
        timer.cancel()
    final = snapshots[-1]
    assert final.meta["finish_reason"] == "interrupted" and 0 < len(final.completion) < 2000
    assert np.isfinite(final.logprobs[final.prompt_len:]).all()


def test_prompt_ids_are_the_prompt_exactly(runner):
    text = runner.generate(ROBOT, max_new_tokens=6, top_logprobs=5)
    ids = text.token_ids[: text.prompt_len].tolist()
    by_ids = runner.generate(prompt_ids=ids, max_new_tokens=6, top_logprobs=5)
    assert by_ids.token_ids.tolist() == text.token_ids.tolist() and by_ids.meta["prompt_ids"] == ids
    np.testing.assert_array_equal(by_ids.logprobs, text.logprobs)
    # Ids a text would never encode to (" robot" split as " rob" + "ot") are kept as given.
    encode = lambda s: runner.tokenizer(s, add_special_tokens=False)["input_ids"]  # noqa: E731
    split = encode(" rob") + encode("ot")
    odd = runner.generate(prompt_ids=ids[:2] + split, max_new_tokens=2)
    assert odd.token_ids[:4].tolist() == ids[:2] + split


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(prompt_ids=[]), ValueError, "prompt_ids is empty"),
        (dict(prompt_ids=[1, -5]), ValueError, "prompt_ids must be ints >= 0 below the vocabulary size"),
        (dict(prompt_ids=[10**7]), ValueError, "below the vocabulary size"),
        (dict(prompt_ids="abc"), TypeError, "prompt_ids must be a list of token ids"),
        (dict(stream_every=0), ValueError, "stream_every must be an int >= 1"),
        (dict(stop=5), TypeError, "stop must be a threading.Event or a callable"),
        (dict(seed=1.5, temperature=1.0), TypeError, "seed must be an int"),
        (dict(top_p=1.5), ValueError, r"top_p must be in \(0, 1\]"),
    ],
)
def test_stream_checks_its_arguments_when_called(runner, kwargs, error, message):
    args = () if "prompt_ids" in kwargs else (ROBOT,)
    with pytest.raises(error, match=message):
        runner.stream(*args, **kwargs)  # raises at the call, before the first snapshot


def test_text_and_prompt_ids_together_are_refused(runner):
    with pytest.raises(ValueError, match="not both"):
        runner.generate(ROBOT, prompt_ids=[1, 2])


def test_progress_bar_shows_tokens_and_rate(runner, capsys):
    import logprob_viz.sources.progress as base

    old, base.PROGRESS_AFTER_S = base.PROGRESS_AFTER_S, 0.0
    try:
        runner.generate(ROBOT, max_new_tokens=5)
        shown = capsys.readouterr().err
        runner.generate(ROBOT, max_new_tokens=5, progress=False)
        hidden = capsys.readouterr().err
    finally:
        base.PROGRESS_AFTER_S = old
    assert "5/5" in shown and "tok/s" in shown, shown
    assert "tok/s" not in hidden


def test_score_shows_progress_through_the_forward_pass(runner, capsys):
    import logprob_viz.sources.progress as base

    old, base.PROGRESS_AFTER_S = base.PROGRESS_AFTER_S, 0.0
    try:
        trace = runner.score(ROBOT)
        shown = capsys.readouterr().err
        runner.score(ROBOT, progress=False)
        hidden = capsys.readouterr().err
    finally:
        base.PROGRESS_AFTER_S = old
    assert f"{len(trace)}/{len(trace)}" in shown and "scoring" in shown, shown
    assert "scoring" not in hidden
