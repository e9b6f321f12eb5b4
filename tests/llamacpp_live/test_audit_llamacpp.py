"""`lv.audit` names a real llama-server's numbers, with the server itself as the reference.

Why the server and not the local runner: llama.cpp computes the Q4_1 GGUF with 8-bit activations and
moves logprobs by up to ~1.4 nats against the float32 runner on the same weights
(test_llamacpp_live.py), far beyond the audit's 0.02-nat tolerance; `test_the_float32_runner_cannot_audit_it`
shows it on this very response. The reference is ``lv.connect(url)``: the server's own numbers before
its samplers, each served token forced after the ones before, its top 100 at each position.

The independent side, in this file: each response's raw twin (the same request, the same seed, so
the same tokens; ``post_sampling_probs`` false and ``n_probs`` 100, or the whole vocabulary), read with
plain json; llama.cpp's default chain written out below as a loop (top-k exactly k, top-p by the
running sum >= p over the renormalised survivors, min-p against the most likely, all at T = 1, then
temperature), in float64.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import logprob_viz as lv
from llamacpp_live import llamacpp_recordings as recordings
from logprob_viz.records.audit import TopN, log_z_bounds
from logprob_viz.sources.remote import ServerError

PROMPT = "A robot may not injure a human being"
N_NEW = 16
SETTINGS = {"temperature": 0.7, "top_k": 40, "top_p": 0.9, "min_p": 0.05}
NO_CUTS = {"top_k": 0, "top_p": 1.0, "min_p": 0.0}
TOL = 1e-4  # nats: float32 softmax on the server, float32 values in the JSON
MOVED = 0.3  # nats taken off the chosen token's value at the moved positions


def completion(url: str, settings: dict, post_sampling: bool, n_probs: int, n_predict: int = N_NEW) -> dict:
    body = {"prompt": PROMPT, "n_predict": n_predict, "n_probs": n_probs, "seed": 45, "cache_prompt": False,
            "post_sampling_probs": post_sampling, **settings}
    status, text = recordings.request(url, "/completion", body)
    assert status == 200, text[:500]
    return json.loads(text)


def steps(body: dict) -> list[dict]:
    return body["completion_probabilities"]


def raw_rows(body: dict) -> list[dict[int, float]]:
    """{id: logprob} per position of a raw response, the chosen token included."""
    return [{e["id"]: e["logprob"] for e in s["top_logprobs"]} | {s["id"]: s["logprob"]} for s in steps(body)]


def served_rows(body: dict) -> list[dict[int, float]]:
    """{id: log prob} per position of a post-sampling response, the tokens it kept only."""
    return [{e["id"]: math.log(e["prob"]) for e in s["top_probs"] if e["prob"] > 0} for s in steps(body)]


def llamacpp_chain(raw: dict[int, float], temperature, top_k, top_p, min_p) -> dict[int, float]:
    """llama.cpp's default chain on one position's raw top N (N >= top_k), written out."""
    ranked = sorted(raw.items(), key=lambda item: -item[1])[:top_k]
    top = max(v for _, v in ranked)
    z = top + math.log(sum(math.exp(v - top) for _, v in ranked))  # top-p renormalises over the survivors
    kept, running = [], 0.0
    for token_id, value in ranked:
        kept.append((token_id, value))
        running += math.exp(value - z)
        if running >= top_p:
            break
    kept = [(i, v) for i, v in kept if v >= top + math.log(min_p)]  # min-p: against the most likely, at T = 1
    scaled = [v / temperature for _, v in kept]
    z_t = max(scaled) + math.log(sum(math.exp(s - max(scaled)) for s in scaled))
    return {i: s - z_t for (i, _), s in zip(kept, scaled, strict=True)}


@pytest.fixture(scope="module")
def bodies(llamacpp_url):
    """Each mode's response and its raw twin (n_probs 100), checked to hold the same tokens."""
    modes = {"raw": (SETTINGS, False), "processed": (SETTINGS, True),
             "scaled_0.7": ({"temperature": 0.7, **NO_CUTS}, True),
             "scaled_1.5": ({"temperature": 1.5, **NO_CUTS}, True)}
    out = {}
    for name, (settings, post_sampling) in modes.items():
        body = completion(llamacpp_url, settings, post_sampling, 40)
        twin = completion(llamacpp_url, settings, False, 100)
        same = [s["id"] for s in steps(body)] == [s["id"] for s in steps(twin)]
        assert same, f"{name}: the same seed gave other tokens"
        out[name] = (body, twin, settings)
    return out


@pytest.fixture(scope="module")
def reference(llamacpp_url):
    return lv.connect(llamacpp_url)


def audit(body: dict, reference, settings: dict | None = None, **options):
    return lv.audit(lv.read(body), reference, prompt=PROMPT, settings=settings, **options)


def test_raw_numbers_are_named_raw(bodies, reference):
    body, twin, settings = bodies["raw"]
    result = audit(body, reference, settings)
    assert result.kind == "raw", result.explanation
    assert result.checked == N_NEW and result.positions == [] and result.limits == []
    assert result.verdict()["label"] == "raw"


def test_a_connected_trace_needs_no_prompt(reference):
    """A trace from lv.connect on llama.cpp: its prompt's ids place the tokens; its numbers are n_probs's, raw,
    even when sampled at T 1.5 (the runner asks for the model's numbers, not the sampled-from ones)."""
    trace = reference.generate(PROMPT, max_new_tokens=8, top_logprobs=5, temperature=1.5, seed=3)
    result = lv.audit(trace, reference)
    assert result.kind == "raw", result.explanation
    assert result.checked == 8 and trace.meta["audit"]["label"] == "raw"


def test_the_float32_runner_cannot_audit_it(bodies, runner):
    """The same raw response against the float32 runner: llama.cpp's roundings are far beyond 0.02 nats."""
    body, _, _ = bodies["raw"]
    result = lv.audit(lv.read(body), runner, prompt=PROMPT)
    assert result.kind == "mismatch", result.explanation
    worst = max(abs(p["served"][i] - p["reference"][i]) for p in result.positions for i in p["served"])
    assert worst > 0.1, worst


def test_processed_numbers_name_the_temperature_the_kept_sets_and_llamacpp(bodies, reference):
    body, twin, settings = bodies["processed"]
    expected = [llamacpp_chain(raw, **settings) for raw in raw_rows(twin)]
    for served, want in zip(served_rows(body), expected, strict=True):  # the server ran that very chain
        assert set(served) <= set(want) and len(served) == min(len(want), 40)
        assert max(abs(served[i] - want[i]) for i in served) < TOL
    result = audit(body, reference, settings)
    assert result.kind == "processed", result.explanation
    assert result.settings["temperature"] == pytest.approx(0.7, abs=1e-3)
    assert "llama.cpp" in result.settings["engines_with_requested"], result.settings
    kept = [k if isinstance(k, tuple) else (k, k) for k in result.settings["kept"]]
    sizes = [len(want) for want in expected]
    assert all(lo <= n <= hi for n, (lo, hi) in zip(sizes, kept, strict=True)), (sizes, kept)
    # and the range is exactly the sizes the numbers cannot tell apart. Fewer than n: no, the server listed n
    # kept tokens. More: keeping m tokens instead of n moves every kept value by log Z_m - log Z_n (Z_m: the m
    # most likely tokens' sum of exp(logprob / T)); m is in the range where that is within the tolerance, out of
    # it where not (1e-3 margin: the served values' rounding)
    for raw, n, (lo, hi) in zip(raw_rows(twin), sizes, kept, strict=True):
        assert lo == n
        scaled = np.sort(list(raw.values()))[::-1][:100] / settings["temperature"]
        moved_by = (np.logaddexp.accumulate(scaled) - np.logaddexp.reduce(scaled[:n]))[n - 1:]  # m = n..100
        inside = np.arange(n, 101) <= hi
        assert (moved_by[inside] <= result.tolerance + 1e-3).all(), (n, lo, hi)
        assert (moved_by[~inside] > result.tolerance - 1e-3).all(), (n, lo, hi)
    assert sum(lo == hi for lo, hi in kept) >= 2, kept
    assert result.verdict()["label"] == "processed (T 0.7, top-k 40, top-p 0.9, min-p 0.05)"


def whole_vocabulary(url: str, settings: dict, n: int) -> list[np.ndarray]:
    """The raw distribution over the whole vocabulary at the first n positions (the same seed: the same tokens)."""
    rows = []
    for row in raw_rows(completion(url, settings, False, 49152, n_predict=n)):
        values = np.full(49152, -np.inf)
        values[list(row)] = list(row.values())
        rows.append(values)
    return rows


@pytest.mark.parametrize("temperature", [0.7, 1.5])
def test_scaled_numbers_and_what_a_top_n_reference_cannot_tell(bodies, reference, llamacpp_url, temperature):
    body, twin, settings = bodies[f"scaled_{temperature}"]
    result = audit(body, reference, settings)
    assert result.kind == "scaled", result.explanation
    assert result.settings["temperature"] == pytest.approx(temperature, abs=1e-3)
    # the truth from the whole vocabulary (first 4 positions): the served numbers are scaled, nothing cut, and
    # the whole normaliser lies within the bounds the reference's top 100 give
    beyond = []
    wholes = whole_vocabulary(llamacpp_url, settings, 4)
    for whole, served, raw in zip(wholes, served_rows(body)[:4], raw_rows(twin)[:4], strict=True):
        scaled = whole / temperature
        log_z = np.logaddexp.reduce(scaled)
        assert max(abs(v - (scaled[i] - log_z)) for i, v in served.items()) < TOL
        top = TopN(np.full(49152, np.nan), 100)
        top.logprobs[list(raw)] = list(raw.values())
        lo, hi = log_z_bounds(top, temperature)
        assert lo - TOL <= log_z <= hi + TOL, (lo, log_z, hi)
        known = np.sort(whole)[::-1][:100] / temperature
        beyond.append(log_z - np.logaddexp.reduce(known))  # what the tokens beyond the top 100 add
    if temperature < 1:  # the tail beyond 100 tokens adds next to nothing at T < 1: decided
        assert result.limits == [] and max(beyond) < result.tolerance
    else:  # at T = 1.5 it adds more than the tolerance: a cut beyond 100 tokens would look the same, and it says so
        assert max(beyond) > 2 * result.tolerance, beyond
        assert result.limits and "cannot tell" in result.explanation, result.explanation


def test_moved_numbers_are_a_mismatch_at_exactly_those_tokens(bodies, reference):
    body, twin, settings = bodies["processed"]
    moved = json.loads(json.dumps(body))
    several = [i for i, s in enumerate(steps(moved)) if sum(e["prob"] > 0 for e in s["top_probs"]) >= 2]
    at = several[1:3]  # two positions that kept several tokens: one kept token moved breaks their shared normaliser
    for i in at:
        step = steps(moved)[i]
        step["prob"] *= math.exp(-MOVED)
        next(e for e in step["top_probs"] if e["id"] == step["id"])["prob"] = step["prob"]
    result = audit(moved, reference, settings)
    assert result.kind == "mismatch", result.explanation
    assert [p["index"] for p in result.positions] == at
    assert result.verdict()["positions"] == at and result.verdict()["label"] == "2 tokens disagree"
    raws = raw_rows(twin)
    for p, i in zip(result.positions, at, strict=True):
        chosen = steps(body)[i]["id"]
        assert p["served"][chosen] == pytest.approx(math.log(steps(body)[i]["prob"]) - MOVED, abs=1e-5)
        assert p["reference"][chosen] == pytest.approx(raws[i][chosen], abs=1e-5)  # the model's own, before sampling


def test_another_model_is_refused_with_the_reason(bodies, reference):
    body, _, settings = bodies["raw"]
    other = json.loads(json.dumps(body))
    steps(other)[3].update(token=" zebra", bytes=list(b" zebra"))  # the same id, another tokenizer's text
    with pytest.raises(ValueError, match=r"b' zebra' at position 3 is .*another model"):
        audit(other, reference, settings)
    other = json.loads(json.dumps(body))
    steps(other)[2]["top_logprobs"][5]["id"] = 60000
    with pytest.raises(ValueError, match=r"60000.*beyond the vocabulary .*49152 tokens.*another model"):
        audit(other, reference, settings)


def test_a_reference_that_cannot_serve_says_why(bodies, reference, tmp_path):
    body, _, settings = bodies["raw"]
    with pytest.raises(ValueError, match="more than the context of the server"):
        lv.audit(lv.read(body), reference, prompt="word " * 2100)
    with pytest.raises(ValueError, match="top_n must be a positive number"):
        audit(body, reference, settings, top_n=0)
    with pytest.raises(TypeError, match=r"lv.load\(\.\.\.\).*lv.connect\(url\)"):
        audit(body, "http://127.0.0.1:1")
    from logprob_viz.servers import llamacpp

    url = llamacpp.start(state=tmp_path, build_if_needed=False, timeout=120)
    try:
        gone = lv.connect(url)
    finally:
        llamacpp.stop(state=tmp_path)
    with pytest.raises(ServerError, match=url.replace(".", r"\.")):
        audit(body, gone, settings)
