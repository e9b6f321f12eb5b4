"""The local runner on the real default model, checked against independent computations.

The reference is a plain teacher-forced forward pass of a separately loaded copy of the model
over the trace's final token ids, with the full log_softmax: nothing of the runner's own code.
"""

import signal

import numpy as np
import pytest
import torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

ROBOT = "A robot may not injure a human being"
TOL = 1e-4  # fp32 on the CPU: a KV-cache step and a full pass differ by ~1e-6 here


def reference_logprobs(model, ids):
    """(N-1, V) log-probabilities of every position's next token, teacher-forced."""
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, :-1].double()
    return torch.log_softmax(logits, dim=-1)


def check_against_reference(trace, model, k):
    ids = trace.token_ids.tolist()
    logp = reference_logprobs(model, ids)  # row i predicts token i+1
    chosen = torch.tensor(ids[1:])
    want_logprob = logp[torch.arange(len(chosen)), chosen]
    want_rank = (logp > want_logprob[:, None]).sum(-1) + 1
    want_entropy = -(logp.exp() * logp).sum(-1)
    want_top = torch.topk(logp, k, dim=-1)

    assert np.isnan(trace.logprobs[0]) and trace.ranks[0] == 0 and np.isnan(trace.entropy[0])
    np.testing.assert_allclose(trace.logprobs[1:], want_logprob.numpy(), atol=TOL)
    np.testing.assert_array_equal(trace.ranks[1:], want_rank.numpy())
    np.testing.assert_allclose(trace.entropy[1:], want_entropy.numpy(), atol=TOL)
    np.testing.assert_allclose(trace.top_logprobs[1:], want_top.values.numpy(), atol=TOL)
    # Near-ties may swap order within TOL; compare the ids where the reference gap is clear.
    gaps = np.diff(want_top.values.numpy(), axis=1)
    clear = np.ones_like(trace.top_ids[1:], dtype=bool)
    clear[:, 1:] &= np.abs(gaps) > TOL
    clear[:, :-1] &= np.abs(gaps) > TOL
    np.testing.assert_array_equal(trace.top_ids[1:][clear], want_top.indices.numpy()[clear])


def test_greedy_continuation_of_the_robot_prompt(runner):
    trace = runner.generate(ROBOT, max_new_tokens=12, top_logprobs=5)
    assert trace.prompt_len == 8 and trace.text.startswith(ROBOT)
    assert trace.completion.text.startswith(", but a human may be injured by a robot")
    assert trace.meta["source"] == "transformers" and trace.meta["finish_reason"] == "length"
    assert (trace.completion.ranks == 1).all(), "greedy always takes the rank-1 token"


def test_greedy_matches_transformers_generate(runner, reference_model):
    trace = runner.generate(ROBOT, max_new_tokens=20, top_logprobs=0)
    ids = torch.tensor([trace.token_ids[: trace.prompt_len].tolist()])
    with torch.no_grad():
        want = reference_model.generate(ids, max_new_tokens=20, do_sample=False, pad_token_id=2)[0, ids.shape[1] :]
    assert trace.completion.token_ids.tolist() == want.tolist()


@pytest.mark.parametrize("k", [0, 5, 20])
def test_generated_trace_matches_teacher_forced_pass(runner, reference_model, k):
    trace = runner.generate(ROBOT, max_new_tokens=24, top_logprobs=k)
    assert trace.top_logprobs.shape == (len(trace), k)
    check_against_reference(trace, reference_model, k)


def test_sampled_trace_matches_teacher_forced_pass_raw_and_processed(runner, reference_model):
    trace = runner.generate(ROBOT, max_new_tokens=24, top_logprobs=5, temperature=0.8, top_p=0.9, top_k=40, seed=3)
    check_against_reference(trace, reference_model, 5)

    # The processed distribution, rebuilt with transformers' own logits warpers.
    ids = trace.token_ids.tolist()
    with torch.no_grad():
        scores = reference_model(torch.tensor([ids])).logits[0, trace.prompt_len - 1 : -1].float()
    for warper in (TemperatureLogitsWarper(0.8), TopKLogitsWarper(40), TopPLogitsWarper(0.9)):
        scores = warper(None, scores)
    processed = torch.log_softmax(scores, dim=-1)
    chosen = torch.tensor(ids[trace.prompt_len :])
    got = trace.processed_logprobs[trace.prompt_len :]
    np.testing.assert_allclose(got, processed[torch.arange(len(chosen)), chosen].numpy(), atol=TOL)
    top_ids = torch.from_numpy(trace.top_ids[trace.prompt_len :])
    want_top = processed.gather(-1, top_ids).numpy()
    np.testing.assert_allclose(trace.processed_top_logprobs[trace.prompt_len :], want_top, atol=TOL)
    assert np.isfinite(got).all(), "a sampled token always has nonzero probability under the processed distribution"
    assert np.isnan(trace.processed_logprobs[: trace.prompt_len]).all()


def test_score_gives_the_same_prompt_logprobs(runner, reference_model):
    generated = runner.generate(ROBOT, max_new_tokens=8, top_logprobs=5)
    scored = runner.score(ROBOT, top_logprobs=5)
    assert len(scored) == scored.prompt_len == generated.prompt_len
    p = generated.prompt_len
    np.testing.assert_allclose(scored.logprobs, generated.logprobs[:p], atol=TOL)
    np.testing.assert_array_equal(scored.ranks, generated.ranks[:p])
    np.testing.assert_allclose(scored.top_logprobs, generated.top_logprobs[:p], atol=TOL)
    check_against_reference(scored, reference_model, 5)


def test_score_of_the_whole_generation_matches(runner):
    generated = runner.generate(ROBOT, max_new_tokens=16, top_logprobs=5)
    scored = runner.score(generated.text, top_logprobs=5)
    assert scored.token_ids.tolist() == generated.token_ids.tolist()
    np.testing.assert_allclose(scored.logprobs, generated.logprobs, atol=TOL)


def test_same_seed_same_trace(runner):
    kwargs = dict(max_new_tokens=16, temperature=1.2, top_p=0.95, seed=7, top_logprobs=5)
    a, b = runner.generate(ROBOT, **kwargs), runner.generate(ROBOT, **kwargs)
    assert a.token_ids.tolist() == b.token_ids.tolist()
    np.testing.assert_array_equal(a.logprobs, b.logprobs)
    c = runner.generate(ROBOT, **{**kwargs, "seed": 8})
    assert c.token_ids.tolist() != a.token_ids.tolist(), "a different seed should sample differently at T=1.2"


def test_chat_messages_use_the_chat_template_and_stop_at_eos(runner):
    trace = runner.generate(messages=[{"role": "user", "content": "Say hi."}], max_new_tokens=64, top_logprobs=3)
    prompt_chars = sum(len(b) for b in trace.token_bytes[: trace.prompt_len])
    assert "<|im_start|>user\nSay hi.<|im_end|>" in trace.text[:prompt_chars]
    assert trace.meta["finish_reason"] == "eos" and trace.tokens[-1] == "<|im_end|>"
    assert len(trace.completion) < 64


def test_split_characters_keep_their_bytes(runner):
    # This tokenizer splits each emoji's 4 UTF-8 bytes over 3 tokens (' \\xf0\\x9f', '\\xa4', '\\x96').
    text = "Robots 🤖🦾 and curly quotes ’ ‘ “ ”"
    trace = runner.score(text, top_logprobs=2)
    assert b"".join(trace.token_bytes).decode("utf-8") == text
    assert trace.text == text
    assert all("\ufffd" not in t for t in trace.tokens), "a split character is shown by its bytes, never U+FFFD"
    assert " \\xf0\\x9f" in trace.tokens and "\\xa4" in trace.tokens, trace.tokens


def test_memory_kept_per_token_is_o_k(runner):
    trace = runner.generate(ROBOT, max_new_tokens=8, top_logprobs=7)
    arrays = [trace.logprobs, trace.ranks, trace.entropy, trace.token_ids, trace.top_logprobs, trace.top_ids]
    assert sum(a.nbytes for a in arrays) == len(trace) * (4 + 4 + 4 + 4 + 7 * (4 + 4))
    # The alternatives' texts are shared str objects (one per vocabulary id), not copies per token.
    assert len({id(s) for row in trace.top_tokens for s in row}) <= len(set(trace.top_ids.ravel().tolist()))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(top_logprobs=-1), "top_logprobs must be an int between 0 and the vocabulary size"),
        (dict(top_logprobs=10**6), "top_logprobs must be an int between 0 and the vocabulary size"),
        (dict(max_new_tokens=-2), "max_new_tokens must be an int >= 0"),
        (dict(temperature=-0.1), "temperature must be a number >= 0"),
        (dict(top_p=0.0), r"top_p must be in \(0, 1\]"),
        (dict(top_k=-3), "top_k must be an int >= 0"),
        (dict(max_new_tokens=10**6), "exceed SmolLM2-135M-Instruct's context"),
    ],
)
def test_bad_arguments_are_clear_errors(runner, kwargs, message):
    with pytest.raises(ValueError, match=message):
        runner.generate(ROBOT, **kwargs)


def test_text_or_messages_not_both(runner):
    with pytest.raises(ValueError, match="either a text"):
        runner.generate(ROBOT, messages=[{"role": "user", "content": "x"}])
    with pytest.raises(ValueError, match="the text is empty"):
        runner.score("")


def test_zero_new_tokens_is_the_scored_prompt(runner):
    trace = runner.generate(ROBOT, max_new_tokens=0)
    assert len(trace) == trace.prompt_len == 8


def test_loads_a_model_and_tokenizer_pair(reference_model):
    from transformers import AutoTokenizer

    import logprob_viz as lv
    from logprob_viz.sources.local.default_model import default_model_path

    runner = lv.load((reference_model, AutoTokenizer.from_pretrained(default_model_path())))
    assert runner.model is reference_model
    assert runner.generate(ROBOT, max_new_tokens=3).completion.text.startswith(", but")


def test_missing_local_model_names_the_model():
    import logprob_viz as lv

    with pytest.raises(OSError, match="could not load the model '/nonexistent/model'"):
        lv.load("/nonexistent/model")


def test_ctrl_c_keeps_what_was_generated(runner):
    import _thread
    import threading

    # interrupt_main does nothing while SIGINT is ignored (a background launch): fail now, not after 2000 tokens
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "SIGINT is not handled by Python here"
    timer = threading.Timer(1.0, _thread.interrupt_main)  # what Ctrl-C / Jupyter's "interrupt" does
    timer.start()
    try:
        with pytest.warns(UserWarning, match="generation interrupted"):
            trace = runner.generate(ROBOT, max_new_tokens=2000, top_logprobs=5)
    finally:
        timer.cancel()
    assert trace.meta["finish_reason"] == "interrupted"
    assert 0 < len(trace.completion) < 2000
    assert trace.top_logprobs.shape == (len(trace), 5) and np.isfinite(trace.logprobs[trace.prompt_len :]).all()


def test_decode_loop_reads_the_host_once_per_chunk_not_per_step(runner):
    """GPU readiness, checked on the CPU: count every call that would wait for a GPU."""
    from torch.overrides import TorchFunctionMode

    host_reads = {torch.Tensor.item, torch.Tensor.cpu, torch.Tensor.tolist, torch.Tensor.numpy,
                  torch.Tensor.__bool__, torch.Tensor.__int__, torch.Tensor.__float__, torch.Tensor.__index__}

    class CountHostReads(TorchFunctionMode):
        count = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.count += func in host_reads
            return func(*args, **(kwargs or {}))

    from logprob_viz.sources.local.runner import GPU_SYNC_EVERY

    try:
        runner.engine.sync_every = GPU_SYNC_EVERY  # what a CUDA device gets
        with CountHostReads() as counter:
            trace = runner.generate(ROBOT, max_new_tokens=4 * GPU_SYNC_EVERY, top_logprobs=5)
    finally:
        runner.engine.sync_every = None
    assert len(trace.completion) == 4 * GPU_SYNC_EVERY
    # Per copy: .cpu() then .numpy(), for 6 fields (ids, logprobs, ranks, entropy, top values, top ids);
    # copies: the prompt, 4 chunks, and the (empty) remainder. Any read per step would add >= 64.
    copies = 1 + 4 + 1
    assert counter.count <= 2 * 6 * copies, f"{counter.count} host reads for 4 chunks: something reads per step"
