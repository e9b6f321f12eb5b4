"""The explorer's pinned-token numbers and band, on the real default model.

The independent computation: the model loaded a second time with plain transformers
(`reference_model`), its logits filtered by transformers' own logits warpers (temperature, top-k,
top-p, min-p: the order `generate` applies them), then a softmax — none of it the package's code.
The numbers' own math (records/sampling.py) is tested in tests/records/test_sampling.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from warpers import warped

PROMPT = "The largest planet in the solar system is"
JOB_TIMEOUT = 600  # s: 2 shared cores


@pytest.fixture(scope="module")
def prompt_ids():
    from transformers import AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())(PROMPT)["input_ids"]


@pytest.fixture(scope="module")
def logprobs(runner, prompt_ids):
    from logprob_viz.views.explorer.pinned import Distributions

    return Distributions().compute(runner, tuple(prompt_ids))


def test_the_panel_shows_the_pinned_token_exactly_and_follows_the_sliders(runner, reference_model):
    from logprob_viz.views.explorer import explore

    app = explore(PROMPT, runner=runner, max_new_tokens=4, top_logprobs=5)
    app.controls.generate.click()
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, app.controls.status.value
    trace = app.view.trace
    at = trace.prompt_len + 1
    app.controls.temperature.value = 1.5
    app.controls.top_p.value = 0.9
    app.view.selected = at
    deadline = JOB_TIMEOUT
    import time

    started = time.monotonic()
    while (app.readout.numbers is None or app.view.readout.get("state") != "exact") and \
            time.monotonic() - started < deadline:
        time.sleep(0.05)  # (the forward pass runs in the panel's thread)
    numbers = app.readout.numbers
    assert numbers is not None, app.readout.html.value
    ids = trace.token_ids[:at].tolist()
    expected = warped(reference_model, ids, 1.5, 0, 0.9)
    model = warped(reference_model, ids, 1.0)
    shown = {row["id"]: row for row in numbers["rows"]}
    assert set(shown) >= {int(i) for i in trace.top_ids[at]}
    for token_id, row in shown.items():
        assert abs(row["new"] - expected[token_id]) < 2e-6
        assert abs(row["model"] - model[token_id]) < 2e-6
        assert f"{row['new']:.1%}" in app.readout.html.value or row["new"] == 0
    assert numbers["kept"] == int(np.count_nonzero(expected > 0))
    # the view's column gets the same numbers for every row of the chart (issue 49: one p per token)
    column = {token_id: (low, high) for token_id, _text, low, high in app.view.readout["column"]}
    assert set(column) == set(shown)
    assert all(low == high and abs(low - expected[i]) < 2e-6 for i, (low, high) in column.items())
    # a slider moved afterwards: numpy only, at once, still exact
    app.controls.min_p.value = 0.1
    expected = warped(reference_model, ids, 1.5, 0, 0.9, 0.1)
    assert all(abs(r["new"] - expected[r["id"]]) < 2e-6 for r in app.readout.numbers["rows"])
    # nothing pinned: no panel
    app.view.selected = -1
    assert app.readout.box.layout.display == "none"


def test_a_server_runner_gets_no_min_p_and_no_pretend_numbers(runner):
    from logprob_viz.sources.remote.vllm import VLLMRunner
    from logprob_viz.views.explorer.controls import Controls
    from logprob_viz.views.explorer.pinned import has_full_distribution
    from logprob_viz.views.explorer.sampling_settings import Settings

    # a real runner class, told the server's model list up front (no request is made here)
    server = VLLMRunner("http://127.0.0.1:9/v1", listed=[{"id": "smollm2"}])
    controls = Controls("hi", Settings(), server)
    assert controls.min_p.disabled and "does not send min_p" in controls.min_p.tooltip
    with pytest.raises(ValueError, match="does not send min_p"):
        Controls("hi", Settings(min_p=0.1), server)
    local = Controls("hi", Settings(temperature=1.0, min_p=0.1), runner)
    assert not local.min_p.disabled and local.settings().sampling()["min_p"] == 0.1
    assert has_full_distribution(runner) and not has_full_distribution(server)
    with pytest.raises(ValueError, match="min_p must be in"):
        Settings(min_p=1.5).check()


def test_at_t0_the_band_says_greedy_and_the_table_puts_all_mass_on_the_top_token(logprobs, prompt_ids):
    from logprob_viz.records.trace import Trace
    from logprob_viz.views.explorer.pinned import numbers_at
    from logprob_viz.views.explorer.pinned_html import band_words, panel_html
    from logprob_viz.views.explorer.sampling_settings import Settings

    order = np.argsort(-logprobs)
    top3 = [int(i) for i in order[:3]]
    # a trace whose token 1 is the model's third choice, with the top 3 as its alternatives
    inf = float("-inf")
    trace = Trace(tokens=["<a>", "b & c"], token_ids=[prompt_ids[-1], top3[2]],
                  top_tokens=[["", "", ""], ["x", "y", "<z>"]], top_logprobs=[[inf] * 3, logprobs[top3].tolist()],
                  top_ids=[[-1, -1, -1], top3])
    numbers = numbers_at(trace, 1, logprobs, Settings())
    assert [r["new"] for r in numbers["rows"]] == [1.0, 0.0, 0.0] and numbers["kept"] == 1 and numbers["rank"] == 3
    words = [band_words(b) for b in numbers["bands"].values()]
    assert words[0] == "sampleable at every T above 0 (T = 0 is greedy: the most likely token only)"
    assert words[1].startswith("cut off at every top-p") and words[2].startswith("cut off at every min-p")
    page = panel_html(trace, 1, numbers)
    assert "T = 0 is greedy" in page and "Rank 3 at every setting" in page
    assert "<z>" not in page and "&lt;z&gt;" in page and "&amp;" in page and "b & c" not in page  # data, not markup
