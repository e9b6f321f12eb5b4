"""The explorer on a vLLM runner follows vLLM's sampler order by default (issue 45): Generate there
samples in vLLM's order (min-p on the whole distribution before top-k and top-p), so the pinned token's
numbers do too; ``engine=`` still chooses another, and a wrong name is refused with the five."""

from __future__ import annotations

import pytest

import logprob_viz as lv


def test_the_explorer_of_a_vllm_runner_starts_on_vllms_order(vllm_url):
    server = lv.connect(vllm_url)
    app = lv.explore("The capital of France is", runner=server, max_new_tokens=4, top_logprobs=5, temperature=1.2,
                     top_p=0.7)
    assert app.state.engine == "vllm" and app.readout.engine.value == "vllm"
    app.generate()
    assert app.wait(300) and app.last_error is None, app.controls.status.value
    trace = app.view.trace
    app.view.selected = len(trace) - 1  # a generated token: the server listed its alternatives
    numbers = app.readout.numbers
    assert numbers["engine"] == "vllm" and numbers["chosen_listed"], app.readout.html.value
    assert app.view.readout["state"] == "ranges" and "as in vLLM" in app.view.readout["label"]
    assert lv.explore(runner=server, engine="transformers").state.engine == "transformers"
    with pytest.raises(ValueError, match="'sglang'"):
        lv.explore(runner=server, engine="vLLM")
