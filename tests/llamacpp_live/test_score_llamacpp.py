"""runner.score and runner.choose on the real llama-server (conftest.py), which has no echo: the
given tokens are generated, each forced (by logit_bias in a one-token request, or by a grammar of
token ids), and their logprobs read from before the samplers (``sources/remote/llamacpp_score.py``).

The independent sides: the float32 model run here with plain transformers, in float64
(``reference_model``); the local runner on the same GGUF; and the server's own one-token request
that forces a token with ``logit_bias`` (a direct HTTP request, read with plain json). Against the
model and the local runner the tolerances are the suite's (`test_llamacpp_live`: median 0.12,
max 2.0 nats, llama.cpp's 4-bit arithmetic); against the server's own numbers 1e-5.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import logprob_viz as lv
from llamacpp_live import llamacpp_recordings as recordings
from llamacpp_live.test_llamacpp_live import TOL_MAX, TOL_MEDIAN
from logprob_viz.sources.remote.llamacpp_score import force

EXACT = 1e-5  # the server's numbers against themselves (float32 in JSON)
TEXTS = [recordings.ROBOT + ", but a human may be injured by a robot.",
         "The capital of France is Paris, and the capital of Italy is Rome.",
         "def fibonacci(n):\n    return n if n < 2 else fibonacci(n - 1) + fibonacci(n - 2)"]


@pytest.fixture(scope="module")
def server(llamacpp_url):
    return lv.connect(llamacpp_url)


def model_logprobs(reference_model, ids: list[int]) -> np.ndarray:
    """log p(token | before) for every row after the first, float64 over the whole vocabulary: (N-1, V)."""
    import torch

    with torch.no_grad():
        logits = reference_model(input_ids=torch.tensor([ids]), use_cache=False).logits[0]
    return torch.log_softmax(logits.double(), dim=-1)[:-1].numpy()


def forced_by_bias(url: str, prefix: list[int], token: int) -> float:
    """The server's own logprob of `token` after `prefix`: one token forced by logit_bias (plain json)."""
    status, text = recordings.request(url, "/completion", dict(
        prompt=prefix, n_predict=1, n_probs=1, logit_bias=[[token, 1e4]], temperature=0, return_tokens=True))
    assert status == 200, text[:300]
    (step,) = json.loads(text)["completion_probabilities"]
    assert step["id"] == token
    return step["logprob"]


def test_score_agrees_with_the_model_and_the_local_runner(server, runner, reference_model, capsys):
    for text in TEXTS:
        t = server.score(text, top_logprobs=5)
        local = runner.score(text, top_logprobs=5)
        ids = t.token_ids.tolist()
        assert ids == local.token_ids.tolist() and b"".join(t.token_bytes) == text.encode()
        assert t.prompt_len == len(t) and np.isnan(t.logprobs[0]) and not np.isnan(t.logprobs[1:]).any()
        lp = model_logprobs(reference_model, ids)
        d_model = np.abs(t.logprobs[1:] - lp[np.arange(len(ids) - 1), ids[1:]])
        d_local = np.abs(t.logprobs[1:] - local.logprobs[1:])
        d_top = np.abs(t.top_logprobs[1:] - np.sort(lp, axis=1)[:, ::-1][:, :5])
        with capsys.disabled():
            print(f"\n  score {text[:24]!r}: {len(ids)} tokens, |d| vs model median {np.median(d_model):.3f} "
                  f"max {d_model.max():.3f}, vs local runner max {d_local.max():.3f}, top-5 max {d_top.max():.3f}")
        for d in (d_model, d_local):
            assert np.median(d) <= TOL_MEDIAN and d.max() <= TOL_MAX
        assert d_top.max() <= TOL_MAX
        # how it was obtained, in the trace itself
        assert t.meta["mode"] == "score" and t.meta["prompt"] == text and t.meta["server"] == "llama.cpp"
        assert "logit_bias" in t.meta["scored_by"] and "post_sampling_probs false" in t.meta["scored_by"]
        assert t.meta["requests"] == len(t) - 1  # a one-token request per given token after the first


def test_the_grammar_route_gives_the_same_numbers_in_one_request(llamacpp_url, server):
    by_grammar = lv.connect(llamacpp_url)
    by_grammar.engine.score_route = "grammar"
    for text in TEXTS[:2]:
        a, b = server.score(text, top_logprobs=4), by_grammar.score(text, top_logprobs=4)
        assert b.token_ids.tolist() == a.token_ids.tolist() and b.top_ids.tolist() == a.top_ids.tolist()
        np.testing.assert_allclose(b.logprobs, a.logprobs, rtol=0, atol=EXACT)
        np.testing.assert_allclose(b.top_logprobs, a.top_logprobs, rtol=0, atol=EXACT)
        assert b.meta["requests"] == 1 and "grammar of token ids" in b.meta["scored_by"]
    # llama.cpp's grammars cannot force an end-of-generation token: the grammar breaks off before it,
    # one request forces it, a grammar goes on after it (three requests)
    eos = by_grammar.token_id("<|im_end|>")
    ids = a.token_ids.tolist()[:5] + [eos] + a.token_ids.tolist()[5:8]
    a, b = server.score(prompt_ids=ids, top_logprobs=2), by_grammar.score(prompt_ids=ids, top_logprobs=2)
    assert b.token_ids.tolist() == ids and b.meta["requests"] == 3
    np.testing.assert_allclose(b.logprobs, a.logprobs, rtol=0, atol=EXACT)


def test_a_given_token_outside_the_top_k_gets_its_own_logprob(llamacpp_url, server):
    t = server.score("Zebra xylophone quantum marmalade", top_logprobs=2)
    outside = [i for i in range(1, len(t)) if int(t.ranks[i]) == 0]
    assert outside, "the text has given tokens outside the top 2"
    ids = t.token_ids.tolist()
    for i in outside:
        assert float(t.logprobs[i]) < float(t.top_logprobs[i][-1])
        assert abs(float(t.logprobs[i]) - forced_by_bias(llamacpp_url, ids[:i], ids[i])) < EXACT


def test_prompt_ids_and_a_list_give_the_same_numbers(server):
    one = server.score(TEXTS[1], top_logprobs=3)
    by_ids = server.score(prompt_ids=one.token_ids.tolist(), top_logprobs=3)
    corpus = server.score(TEXTS[:2], top_logprobs=3)
    assert isinstance(corpus, lv.Corpus) and len(corpus) == 2
    for other in (by_ids, corpus[1]):
        assert other.token_ids.tolist() == one.token_ids.tolist()
        np.testing.assert_allclose(other.logprobs, one.logprobs, rtol=0, atol=EXACT)
        np.testing.assert_allclose(other.top_logprobs, one.top_logprobs, rtol=0, atol=EXACT)
    assert by_ids.meta["prompt_ids"] == one.token_ids.tolist()


def test_a_long_text_shows_a_progress_bar(server, capsys):
    import logprob_viz.sources.progress as base

    text = " ".join(TEXTS) * 2
    old, base.PROGRESS_AFTER_S = base.PROGRESS_AFTER_S, 0.0
    try:
        t = server.score(text, top_logprobs=1)
        shown = capsys.readouterr().err
        server.score(TEXTS[0], top_logprobs=1, progress=False)
        hidden = capsys.readouterr().err
    finally:
        base.PROGRESS_AFTER_S = old
    assert f"{len(t)}/{len(t)}" in shown and "scoring" in shown, shown
    assert "scoring" not in hidden


CHOICES = [("The capital of France is", [" Paris", " banana", " Berlin"]),
           ("Review: dull, slow and far too long. Sentiment:", [" positive", " negative"]),
           ("2 + 2 =", [" 4", " 17"])]


def test_choose_agrees_with_the_local_runner_and_picks_alike(server, runner):
    for prompt, options in CHOICES:
        remote = server.choose(prompt, options, top_logprobs=3, progress=False)
        local = runner.choose(prompt, options, top_logprobs=3, progress=False)
        for (option, got), want in zip(remote.logprobs.items(), local.logprobs.values(), strict=True):
            assert abs(got - want) <= TOL_MAX, (prompt, option, got, want)
        for r_trace, l_trace in zip(remote.trace_rows[0], local.trace_rows[0], strict=True):
            assert r_trace.token_ids.tolist() == l_trace.token_ids.tolist()
            assert r_trace.prompt_len == l_trace.prompt_len
            assert np.isnan(r_trace.logprobs[: r_trace.prompt_len]).all()  # the prompt is only cached, not scored
            assert "logit_bias" in r_trace.meta["scored_by"]
        lp = np.array(list(local.logprobs.values()))
        margin = np.sort(lp)[-1] - np.sort(lp)[-2]
        if margin > 2 * TOL_MAX:  # no error within the tolerance can swap the pick
            assert max(remote.probs, key=remote.probs.get) == max(local.probs, key=local.probs.get), prompt
    assert any(np.ptp(list(runner.choose(p, o, progress=False).logprobs.values())) > 2 * TOL_MAX
               for p, o in CHOICES), "at least one prompt has a pick beyond the tolerance"


def test_a_list_of_prompts_chooses_a_row_each(server, runner):
    prompts = [p for p, _ in CHOICES[:2]]
    remote = server.choose(prompts, [" Paris", " negative"], progress=False)
    local = runner.choose(prompts, [" Paris", " negative"], progress=False)
    assert remote.to_pandas().shape == local.to_pandas().shape


def test_choose_with_messages_uses_the_servers_chat_template(server, runner):
    messages = [{"role": "user", "content": "Is the sky blue on a clear day? Answer yes or no."}]
    remote = server.choose(messages=messages, options=["yes", "no", "banana"], progress=False)
    local = runner.choose(messages=messages, options=["yes", "no", "banana"], progress=False)
    assert remote.prompts == local.prompts  # the server's template gives the local runner's text
    for r_trace, l_trace in zip(remote.trace_rows[0], local.trace_rows[0], strict=True):
        assert r_trace.token_ids.tolist() == l_trace.token_ids.tolist()
    for got, want in zip(remote.logprobs.values(), local.logprobs.values(), strict=True):
        assert abs(got - want) <= TOL_MAX


def test_score_messages_through_the_servers_chat_template(server, runner):
    messages = [{"role": "user", "content": "What is the capital of France?"}]
    t, local = server.score(messages=messages, top_logprobs=3), runner.score(messages=messages, top_logprobs=3)
    assert t.token_ids.tolist() == local.token_ids.tolist() and t.meta["messages"] == messages
    d = np.abs(t.logprobs[1:] - local.logprobs[1:])
    assert np.median(d) <= TOL_MEDIAN and d.max() <= TOL_MAX


def test_refusals_say_what_and_why(server):
    with pytest.raises(ValueError, match=r"more than the context of the server .* \(2048 tokens"):
        server.score("word " * 2100)
    with pytest.raises(ValueError, match="end with the assistant's answer is not supported on llama.cpp"):
        server.score(messages=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}])
    # the server's own refusal (a prompt longer than its context), with its words and what was asked
    with pytest.raises(lv.ServerError) as err:
        force(server.engine, [28] * 2100, [28], 1)
    message = str(err.value)
    assert "refused to score 1 given tokens after 2100" in message and "exceeds the available context" in message
