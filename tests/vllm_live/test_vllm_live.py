"""Against a real vLLM server: every format, the runner, errors, and agreement with the local runner.

The server (tests/vllm_live/conftest.py) serves the same SmolLM2-135M-Instruct weights as the
default model, in float32, so the local runner and the server must agree on greedy tokens,
their logprobs, the alternatives and the prompt's logprobs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.sources.remote import ServerError
from vllm_live import recordings

# Local runner (transformers, fp32, CPU) vs vLLM 0.32's CPU build (fp32), measured on a 2-core
# AMD EPYC (AVX-512) with this test: 7 comparisons (4 completions, 1 chat, 2 scores; 213 tokens
# and their top-5) differ by at most 6.9e-5 nats (chosen tokens: 4.9e-5). The two compute the
# same weights with different kernels (vLLM's CPU attention and fused ops sum in another order),
# so fp32 rounding (~1e-7 relative per operation, over 30 layers) leaves ~1e-5..1e-4 in the
# logits. 5e-4 is ~7x the measured worst case: room for another CPU's kernels, and still far
# below what a real fault moves (bf16 weights: up to 0.25 nats; an off-by-one position or a
# different chat template: whole nats, and different tokens).
TOL = 5e-4

PROMPTS = [
    recordings.ROBOT,
    recordings.SPLIT,
    "The capital of France is",
    "def fibonacci(n):\n    ",
]


@pytest.fixture(scope="session")
def server(vllm_url, runner):
    # With the model's tokenizer the runner asks vLLM for ids (return_tokens_as_token_ids) and
    # decodes them here: exact bytes for every token and alternative. Tests that use
    # lv.connect(vllm_url) without it see vLLM's decoded strings.
    return lv.connect(vllm_url, tokenizer=runner.tokenizer)


# -- every format, on fresh responses ----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(recordings.REQUESTS))
def test_each_recorded_format_parses_fresh_from_the_server(vllm_url, name):
    endpoint, request = recordings.REQUESTS[name]
    status, text = recordings.request(vllm_url, endpoint, request)
    if name.startswith("error"):
        assert status in (400, 404)
        with pytest.raises(ServerError, match="max allowed|does not exist"):
            lv.from_openai(text)
        return
    assert status == 200, text[:500]
    traces = lv.from_openai(text)
    assert recordings.check(traces, text, {"model": recordings.MODEL, **request}) >= 1
    if request.get("temperature") == 0 and not request.get("stream"):
        # greedy answers are reproducible: the recorded fixture says the same (within TOL)
        old = lv.from_openai(recordings.load(name)["body"])
        new = traces if isinstance(traces, list) else [traces]
        for a, b in zip(new, old if isinstance(old, list) else [old], strict=True):
            assert a.tokens == b.tokens
            np.testing.assert_allclose(a.logprobs, b.logprobs, atol=TOL)


def test_the_threads_example_with_todays_openai_sdk(vllm_url):
    from openai import OpenAI

    client = OpenAI(base_url=vllm_url, api_key="EMPTY")
    resp = client.completions.create(model=recordings.MODEL, prompt=recordings.ROBOT, max_tokens=16, logprobs=5,
                                     temperature=0)
    t = lv.from_openai(resp)
    assert t.text == resp.choices[0].text and len(t) == 16 and t.k == 5
    assert t.ranks.tolist() == [1] * 16  # greedy
    # streamed through the SDK: the same tokens and numbers
    stream = client.completions.create(model=recordings.MODEL, prompt=recordings.ROBOT, max_tokens=16, logprobs=5,
                                       temperature=0, stream=True)
    s = lv.from_openai(stream)
    assert s.tokens == t.tokens and s.logprobs.tolist() == t.logprobs.tolist()
    assert s.top_logprobs.tolist() == t.top_logprobs.tolist()


def test_chat_through_the_sdk_streamed_and_not(vllm_url):
    from openai import OpenAI

    client = OpenAI(base_url=vllm_url, api_key="EMPTY")
    kw = dict(model=recordings.MODEL, messages=recordings.EMOJI_CHAT, max_tokens=8, logprobs=True, top_logprobs=5,
              temperature=0)
    full = lv.from_openai(client.chat.completions.create(**kw))
    streamed = lv.from_openai(client.chat.completions.create(**kw, stream=True))
    assert streamed.tokens == full.tokens and streamed.logprobs.tolist() == full.logprobs.tolist()
    assert full.text.startswith("🤖") and "no_bytes" in full.flags[0]


# -- the runner -----------------------------------------------------------------------------------


def test_runner_generates_text_with_the_prompt_scored(server):
    t = server.generate(recordings.ROBOT, max_new_tokens=12, top_logprobs=5)
    assert server.server == "vllm" and t.meta["source"] == "vllm"
    assert t.prompt_len == 8 and t.text.startswith(recordings.ROBOT)
    assert t.completion.text.startswith(", but a human may be injured by a robot")  # DESIGN.md's greedy reference
    assert np.isnan(t.logprobs[0]) and t.ranks[0] == 0 and (t.ranks[8:] == 1).all()
    assert not any("no_text" in f or "no_bytes" in f for f in t.flags)


def test_runner_chat_fills_the_first_prompt_token(vllm_url):
    plain = lv.connect(vllm_url)  # no tokenizer: the server is asked to detokenize the first token
    t = plain.generate(messages=[{"role": "user", "content": "Hi"}], max_new_tokens=6, top_logprobs=3)
    assert t.tokens[0] == "<|im_start|>" and t.prompt_len == 31
    assert t.completion.text.startswith("Hello")
    assert (t.completion.ranks == 1).all() and t.k == 3  # asked K+1, kept K: ranks known


def test_runner_sampling_is_reproducible_with_a_seed(server):
    a = server.generate(recordings.ROBOT, max_new_tokens=10, temperature=1.0, seed=7, top_logprobs=2)
    b = server.generate(recordings.ROBOT, max_new_tokens=10, temperature=1.0, seed=7, top_logprobs=2)
    assert a.tokens == b.tokens and a.meta["do_sample"] and a.meta["seed"] == 7


def test_runner_score_text_and_messages(server, vllm_url):
    s = server.score(recordings.SPLIT, top_logprobs=3)
    assert len(s) == s.prompt_len == 22 and s.text == recordings.SPLIT and s.meta["mode"] == "score"
    m = lv.connect(vllm_url).score(messages=[{"role": "user", "content": "Hi"}], top_logprobs=2)
    assert len(m) == m.prompt_len == 31 and m.tokens[0] == "<|im_start|>"


def test_runner_errors_name_the_server_and_the_cause(vllm_url, server):
    with pytest.raises(ValueError, match="does not serve 'no-such-model'.*SmolLM2"):
        lv.connect(vllm_url, model="no-such-model")
    with pytest.raises(ValueError, match="between 0 and 20"):
        server.generate("hi", top_logprobs=21)
    # a real 400 from vLLM: more tokens than the server's context (--max-model-len 2048)
    with pytest.raises(ServerError, match=r"HTTP 400 to POST /completions: .*(2048|context|max)") as err:
        server.generate("hi", max_new_tokens=5000)
    assert vllm_url in str(err.value) and err.value.status == 400


# -- agreement with the local runner --------------------------------------------------------------


def _kept(row, clear) -> list:
    return [a for a, c in zip(row, clear, strict=True) if c]


def _agree(local, remote, what: str) -> dict:
    assert remote.token_ids.tolist() == local.token_ids.tolist(), f"{what}: different tokens"
    assert remote.prompt_len == local.prompt_len
    assert remote.token_bytes == local.token_bytes
    known = ~np.isnan(local.logprobs)
    assert (known == ~np.isnan(remote.logprobs)).all()
    d_lp = np.abs(local.logprobs[known] - remote.logprobs[known])
    k = remote.k
    d_top = np.abs(local.top_logprobs[1:, :k] - remote.top_logprobs[1:, :k])
    assert d_lp.max() <= TOL, f"{what}: chosen logprobs differ by {d_lp.max():.2e}"
    assert d_top.max() <= TOL, f"{what}: top-{k} logprobs differ by {d_top.max():.2e}"
    # the alternatives are the same tokens, except where two are closer than TOL (order can swap)
    for i in range(1, len(local)):
        lv_ = local.top_logprobs[i, :k]
        clear = np.ones(k, bool)
        gaps = np.abs(np.diff(lv_)) > 2 * TOL
        clear[1:] &= gaps
        clear[:-1] &= gaps
        assert _kept(local.top_tokens[i][:k], clear) == _kept(remote.top_tokens[i][:k], clear)
        assert _kept(local.top_ids[i, :k], clear) == _kept(remote.top_ids[i, :k], clear)
    # ranks: equal inside the top K; deep ranks move by ties (many logprobs within TOL)
    inside = (local.ranks > 0) & (local.ranks <= k)
    assert (remote.ranks[inside] == local.ranks[inside]).all()
    deep = (local.ranks > k) & (remote.ranks > 0)
    assert (np.abs(remote.ranks[deep] - local.ranks[deep]) <= np.maximum(1, local.ranks[deep] // 1000)).all()
    return {"what": what, "tokens": len(local), "max_d_logprob": float(d_lp.max()), "max_d_top": float(d_top.max())}


def test_local_runner_and_server_agree(runner, server, capsys):
    rows = []
    for p in PROMPTS:
        rows.append(_agree(runner.generate(p, max_new_tokens=24, top_logprobs=5),
                           server.generate(p, max_new_tokens=24, top_logprobs=5), f"generate {p[:24]!r}"))
    msgs = [{"role": "user", "content": "What is the capital of France?"}]
    rows.append(_agree(runner.generate(messages=msgs, max_new_tokens=16, top_logprobs=5),
                       server.generate(messages=msgs, max_new_tokens=16, top_logprobs=5), "chat"))
    for p in (recordings.SPLIT, "Text to score, token by token."):
        rows.append(_agree(runner.score(p, top_logprobs=5), server.score(p, top_logprobs=5), f"score {p[:24]!r}"))
    with capsys.disabled():
        print("\nlocal runner vs vLLM (fp32, CPU):")
        for r in rows:
            print(f"  {r['what']:<34} {r['tokens']:>3} tokens  max|d logprob| {r['max_d_logprob']:.1e}  "
                  f"max|d top-5| {r['max_d_top']:.1e}")


# -- the notebook -----------------------------------------------------------------------------------


def test_notebook_runs_against_the_server(vllm_url, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    monkeypatch.setenv("LOGPROB_VIZ_VLLM_URL", vllm_url)
    nb = nbformat.read(notebooks / "vllm_openai.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(notebooks)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(widgets) >= 3  # the SDK example, the runner, the seed
    text = json.dumps([o.get("text", "") for o in outputs])
    assert "through inaction" in text


def test_generate_streams_under_the_hood_and_equals_the_servers_whole_answer(vllm_url):
    """generate (the prompt scored, then the completion streamed) against the one whole request generate
    used to send (echo + prompt_logprobs), read here with plain json."""
    t = lv.connect(vllm_url).generate(recordings.ROBOT, max_new_tokens=12, top_logprobs=3)
    status, text = recordings.request(vllm_url, "/completions", dict(
        prompt=recordings.ROBOT, max_tokens=12, logprobs=3, echo=True, prompt_logprobs=3, temperature=0.0,
        return_token_ids=True))
    assert status == 200, text[:500]
    choice = json.loads(text)["choices"][0]
    prompt_ids, n = choice["prompt_token_ids"], len(choice["prompt_token_ids"])
    assert t.prompt_len == n and t.token_ids.tolist() == prompt_ids + choice["token_ids"]
    for pos in range(1, n):  # the prompt's logprobs, each under its own id
        assert abs(float(t.logprobs[pos]) - choice["prompt_logprobs"][pos][str(prompt_ids[pos])]["logprob"]) < TOL
    lp = choice["logprobs"]
    np.testing.assert_allclose(t.logprobs[n:], lp["token_logprobs"][n:], atol=TOL)
    for row, top in zip(t.top_logprobs[n:], lp["top_logprobs"][n:], strict=True):
        np.testing.assert_allclose(row, sorted(top.values(), reverse=True)[:3], atol=TOL)
    assert t.meta["finish_reason"] == choice["finish_reason"] and "error" not in t.meta
