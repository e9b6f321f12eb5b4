"""The explorer on a llama.cpp runner follows llama.cpp's sampler order (issue 45).

`lv.explore(runner=lv.connect(url))` on llama-server starts with ``state.engine == "llama.cpp"``
(Generate there samples in llama.cpp's order), and the pinned token's ranges (a server lists only
its top K) are llama.cpp's: top-p judged at T = 1, the temperature last. The independent numbers: the
server's own distribution at the pinned position (its top 1000 before the samplers, ``n_probs``),
cut here by the plain-Python reference of llama.cpp's source (tests/records/test_samplers.reference);
each listed token's exact p must lie in the panel's range. At these settings transformers' order
keeps other tokens, so a panel following it would not hold them.
"""

from __future__ import annotations

import json
import math

import numpy as np

import logprob_viz as lv
from llamacpp_live import llamacpp_recordings as recordings
from tests.records.test_samplers import reference

PROMPT = "The largest planet in the solar system is"
SETTINGS = {"temperature": 1.6, "top_p": 0.6}
TOLERANCE = 1e-4  # the server's float32 softmax, float32 values in its JSON
JOB_TIMEOUT = 300  # s


def server_row(url: str, ids: list[int], vocab: int) -> np.ndarray:
    """The server's log-probabilities after `ids` (its top 1000, the rest -inf), before any sampler."""
    body = {"prompt": ids, "n_predict": 1, "n_probs": 1000, "temperature": 0, "cache_prompt": False,
            "post_sampling_probs": False}
    status, text = recordings.request(url, "/completion", body)
    assert status == 200, text[:500]
    row = np.full(vocab, -np.inf)
    for entry in json.loads(text)["completion_probabilities"][0]["top_logprobs"]:
        row[entry["id"]] = entry["logprob"]
    return row


def test_the_explorer_of_a_llamacpp_runner_follows_llamacpps_order(llamacpp_url, runner):
    server = lv.connect(llamacpp_url)
    app = lv.explore(PROMPT, runner=server, max_new_tokens=6, top_logprobs=10, seed=3, **SETTINGS)
    assert app.state.engine == "llama.cpp" and app.readout.engine.value == "llama.cpp"
    app.generate()
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, app.controls.status.value
    trace = app.view.trace
    status, text = recordings.request(llamacpp_url, "/tokenize", {"content": PROMPT})
    prompt_ids = json.loads(text)["tokens"]
    vocab = runner.engine.vocab_size
    checked = outside_transformers = 0
    for at in range(max(1, trace.prompt_len), len(trace)):
        app.view.selected = at
        numbers = app.readout.numbers
        assert numbers is not None and numbers["engine"] == "llama.cpp", app.readout.html.value
        assert "as in llama.cpp" in app.view.readout["label"]
        ids = prompt_ids + [int(i) for i in trace.token_ids[trace.prompt_len:at]]
        row = server_row(llamacpp_url, ids, vocab)
        kept = reference(row, "llama.cpp", t=SETTINGS["temperature"], top_p=SETTINGS["top_p"])
        theirs = reference(row, "vllm", t=SETTINGS["temperature"], top_p=SETTINGS["top_p"])  # T first, as transformers
        top_ids = [int(i) for i in trace.top_ids[at] if i >= 0]
        for token_id, shown in zip(top_ids, numbers["rows"], strict=False):
            exact = math.exp(kept[token_id]) if token_id in kept else 0.0
            assert shown["low"] - TOLERANCE <= exact <= shown["high"] + TOLERANCE, (at, shown, exact)
            other = math.exp(theirs[token_id]) if token_id in theirs else 0.0
            outside_transformers += not shown["low"] - TOLERANCE <= other <= shown["high"] + TOLERANCE
            checked += 1
    assert checked >= 10
    assert outside_transformers > 0  # the order matters here: T first would give numbers outside these ranges
