"""A real vLLM server's ``--logprobs-mode processed_logprobs`` numbers are `lv.sampled_from(...,
engine="vllm")` of the model's own distribution, and `lv.audit` names both modes.

A second server from the suite's install runs with ``--logprobs-mode processed_logprobs``; the suite's
server (raw_logprobs, vLLM's default) answers the same request. The reference is the default model
in plain transformers, teacher-forced on the served tokens in float64 (vLLM CPU and the runner agree
to `TOL`, as the suite measures). With top-k 20 and 20 logprobs asked, the server lists every kept
token: the kept set must be the package's vLLM order's, and each value within TOL.
"""

from __future__ import annotations

import json
import urllib.request

import numpy as np
import pytest

import logprob_viz as lv

PROMPT = "A robot may not injure a human being"
SETTINGS = {"temperature": 0.7, "top_k": 20, "top_p": 0.9, "min_p": 0.05}
TOL = 1e-3  # nats: the suite's 5e-4 between vLLM CPU and the runner, twice (a value and its normaliser)


@pytest.fixture(scope="module")
def processed_url(vllm_url, tmp_path_factory):  # (vllm_url: the suite's install is there first)
    from logprob_viz.servers import process
    from logprob_viz.servers import vllm as vllm_server

    state = tmp_path_factory.mktemp("processed-vllm")
    url = vllm_server.start(port=process.free_port(), state=state, install_if_needed=False, timeout=600,
                            serve_args=("--logprobs-mode", "processed_logprobs"),
                            env={"VLLM_CPU_KVCACHE_SPACE": "1"})
    try:
        yield url
    finally:
        vllm_server.stop(state=state)


def completion(url: str) -> dict:
    body = {"model": _model(url), "prompt": PROMPT, "max_tokens": 12, "logprobs": 20, "seed": 45,
            "return_tokens_as_token_ids": True, **SETTINGS}
    req = urllib.request.Request(url + "/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=300) as r:
        return json.load(r)


def _model(url: str) -> str:
    with urllib.request.urlopen(url + "/models", timeout=30) as r:
        return json.load(r)["data"][0]["id"]


@pytest.fixture(scope="module")
def bodies(processed_url, vllm_url):
    return {"processed": completion(processed_url), "raw": completion(vllm_url)}


def reference_rows(reference_model, tokenizer, generated: list[int]) -> np.ndarray:
    """log_softmax float64 (N, V) of the model at each generated token, teacher-forced."""
    import torch

    ids = list(tokenizer(PROMPT)["input_ids"]) + generated
    with torch.inference_mode():
        logits = reference_model(torch.tensor([ids])).logits[0].double()
    rows = logits[len(ids) - len(generated) - 1:-1]
    return torch.log_softmax(rows, dim=-1).numpy()


def served(trace, i) -> dict[int, float]:
    out = {int(trace.top_ids[i, j]): float(trace.top_logprobs[i, j]) for j in range(len(trace.top_tokens[i]))}
    out[int(trace.token_ids[i])] = float(trace.logprobs[i])
    return out


def test_processed_logprobs_are_the_vllm_order(bodies, reference_model, runner):
    trace = lv.read(bodies["processed"])
    rows = reference_rows(reference_model, runner.tokenizer, trace.token_ids.tolist())
    differs_from_transformers = 0
    for i, row in enumerate(rows):
        want = lv.sampled_from(row, engine="vllm", **SETTINGS)
        kept = set(np.nonzero(np.isfinite(want))[0].tolist())
        given = served(trace, i)
        assert {t for t, v in given.items() if np.isfinite(v)} == kept, (i, trace.tokens[i])
        for token_id in kept:
            assert given[token_id] == pytest.approx(want[token_id], abs=TOL)
        other = lv.sampled_from(row, engine="transformers", **SETTINGS)
        differs_from_transformers += set(np.nonzero(np.isfinite(other))[0].tolist()) != kept
    print(f"transformers' order keeps another set at {differs_from_transformers} of {len(rows)} positions")


def test_raw_logprobs_are_the_model_distribution(bodies, reference_model, runner):
    trace = lv.read(bodies["raw"])
    rows = reference_rows(reference_model, runner.tokenizer, trace.token_ids.tolist())
    for i, row in enumerate(rows):
        for token_id, value in served(trace, i).items():
            assert value == pytest.approx(row[token_id], abs=TOL)


def test_audit_names_both_modes(bodies, runner):
    raw = lv.audit(lv.read(bodies["raw"]), runner, prompt=PROMPT)
    assert raw.kind == "raw", raw.explanation
    processed = lv.audit(lv.read(bodies["processed"]), runner, prompt=PROMPT, settings=SETTINGS)
    assert processed.kind == "processed", processed.explanation
    assert processed.settings["temperature"] == pytest.approx(0.7, abs=0.01)
    # with the request's settings only vLLM's order keeps these sets (transformers' differs at 3 of 12)
    assert processed.settings["engines_with_requested"] == ["vllm"], processed.settings
