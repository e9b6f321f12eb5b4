"""The explorer's engine choice (state.engine, the "engine" action): the pinned token's numbers, the
kept count, the line naming a different kept set and the bands follow the chosen engine's order.

The independent computation: the default model loaded a second time with plain transformers
(`reference_model`), its float64 logits cut here by each engine's documented order written out
from first principles (llama.cpp: min-p at T = 1, the temperature last; vLLM: min-p on the whole
distribution, then top-p on the renormalised survivors), and transformers' own warpers for
transformers' numbers. None of it is the package's code.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from warpers import warped

PROMPT = "The largest planet in the solar system is"
JOB_TIMEOUT = 600  # s: 2 shared cores


def reference_logits(model, ids: list[int]) -> np.ndarray:
    import torch

    with torch.inference_mode():
        return model(torch.tensor([ids])).logits[0, -1].double().numpy()


def llamacpp_min_p(logits: np.ndarray, temperature: float, min_p: float) -> np.ndarray:
    """llama.cpp's order with only min-p set: min-p on the T = 1 logits, then softmax(logits / T) of the kept."""
    kept = logits >= logits.max() + np.log(min_p)
    scaled = np.where(kept, logits / temperature, -np.inf)
    p = np.exp(scaled - scaled.max())
    return p / p.sum()


def vllm_min_p_top_p(logits: np.ndarray, min_p: float, top_p: float) -> np.ndarray:
    """vLLM's order at T = 1: min-p on the whole distribution, then top-p on the renormalised survivors."""
    p = np.exp(logits - logits.max())
    p /= p.sum()
    p = np.where(p >= min_p * p.max(), p, 0.0)
    p /= p.sum()
    order = np.argsort(p, kind="stable")  # least likely first
    mass_with_less_likely = np.cumsum(p[order])
    drop = order[mass_with_less_likely <= 1 - top_p]
    drop = drop[drop != np.argmax(p)]  # the most likely token always stays
    p[drop] = 0.0
    return p / p.sum()


def wait_exact(app) -> dict:
    started = time.monotonic()
    while app.view.readout.get("state") != "exact" and time.monotonic() - started < JOB_TIMEOUT:
        time.sleep(0.05)  # (the forward pass runs in the panel's thread)
    assert app.readout.numbers is not None, app.readout.html.value
    return app.readout.numbers


def test_the_engine_action_sets_the_state_and_refuses_an_unknown_engine(runner):
    from logprob_viz.views.explorer import explore
    from logprob_viz.views.explorer.actions import from_view

    app = explore("hi", runner=runner)
    assert app.state.engine == "transformers" and app.readout.engine.value == "transformers"
    assert from_view({"event": "engine", "engine": "vllm"}) == ("engine", ("vllm",))
    app.actions["engine"]("sglang")
    assert app.state.engine == "sglang" and app.readout.engine.value == "sglang"  # the dropdown follows
    app.actions["engine"]("tgi")
    kind, message = app.state.status
    assert kind == "error" and "engine must be one of" in message and "'tgi'" in message
    assert app.state.engine == "sglang"  # unchanged
    app.readout.engine.value = "ollama"  # the dropdown sets the state
    assert app.state.engine == "ollama"


def test_explore_takes_the_engine_by_name_and_refuses_an_unknown_one(runner, reference_model):
    """``lv.explore(engine=...)``: a typo says the valid engines (before anything loads); a valid one is
    the state's from the start, and the pinned numbers follow it (llama.cpp: min-p at T = 1)."""
    import logprob_viz as lv

    with pytest.raises(ValueError) as refused:
        lv.explore(engine="llamacpp")
    for name in ("'transformers'", "'vllm'", "'llama.cpp'", "'sglang'", "'ollama'", "'llamacpp'"):
        assert name in str(refused.value), refused.value
    assert lv.explore(runner=runner).state.engine == "transformers"  # the local runner samples in its order
    app = lv.explore(PROMPT, runner=runner, engine="llama.cpp", max_new_tokens=1, top_logprobs=5, temperature=1.5,
                     min_p=0.1)
    assert app.state.engine == "llama.cpp" and app.readout.engine.value == "llama.cpp"
    app.generate()
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, app.controls.status.value
    at = app.view.trace.prompt_len
    expected = llamacpp_min_p(reference_logits(reference_model, app.view.trace.token_ids[:at].tolist()), 1.5, 0.1)
    app.view.selected = at
    numbers = wait_exact(app)
    assert numbers["engine"] == "llama.cpp" and numbers["kept"] == np.count_nonzero(expected)
    assert all(abs(r["new"] - expected[r["id"]]) < 2e-6 for r in numbers["rows"])


def test_the_pinned_numbers_follow_the_chosen_engine(runner, reference_model):
    from logprob_viz.views.explorer import explore

    app = explore(PROMPT, runner=runner, max_new_tokens=2, top_logprobs=5)
    app.generate()
    assert app.wait(JOB_TIMEOUT) and app.last_error is None, app.controls.status.value
    trace = app.view.trace
    at = trace.prompt_len  # the first generated token: the model's distribution right after the prompt
    ids = trace.token_ids[:at].tolist()
    logits = reference_logits(reference_model, ids)
    app.controls.temperature.value = 1.5
    app.controls.min_p.value = 0.1
    app.view.selected = at
    numbers = wait_exact(app)
    transformers = warped(reference_model, ids, 1.5, 0, 1.0, 0.1)
    assert numbers["kept"] == np.count_nonzero(transformers) and numbers["differs"] == ""
    assert all(abs(r["new"] - transformers[r["id"]]) < 2e-6 for r in numbers["rows"])

    app.actions["engine"]("llama.cpp")
    numbers = app.readout.numbers
    expected = llamacpp_min_p(logits, 1.5, 0.1)
    kept, theirs = int(np.count_nonzero(expected)), int(np.count_nonzero(transformers))
    assert kept != theirs, "the settings must show the disagreement at this position"
    assert numbers["kept"] == kept
    assert numbers["differs"] == f"llama.cpp keeps {kept} tokens here, transformers {theirs}"
    assert f"{numbers['differs']}." in app.readout.html.value  # the panel's line
    assert numbers["differs"] in app.view.readout["note"] and "as in llama.cpp" in app.view.readout["label"]
    for row in numbers["rows"]:  # the table's numbers and its kept / cut marks
        assert abs(row["new"] - expected[row["id"]]) < 2e-6
        assert (row["new"] == 0) == (expected[row["id"]] == 0)
    column = {token_id: low for token_id, _text, low, _high in app.view.readout["column"]}
    assert all(abs(column[r["id"]] - expected[r["id"]]) < 2e-6 for r in numbers["rows"])
    # the bands: llama.cpp cuts at T = 1, so the temperature no longer moves where the token is sampleable
    band = numbers["bands"]["temperature"]
    chosen = numbers["chosen"]
    assert (band.sampleable_from is None) == (expected[chosen] == 0)
    for value, p in list(zip(band.values, band.probs, strict=True))[1::20]:
        if value > 0:
            assert abs(p - llamacpp_min_p(logits, value, 0.1)[chosen]) < 2e-6

    app.controls.temperature.value = 1.0  # vLLM: min-p before top-p
    app.controls.min_p.value = 0.1
    app.controls.top_p.value = 0.8
    app.actions["engine"]("vllm")
    numbers = app.readout.numbers
    expected = vllm_min_p_top_p(logits, 0.1, 0.8)
    theirs = int(np.count_nonzero(warped(reference_model, ids, 1.0, 0, 0.8, 0.1)))
    assert numbers["kept"] == np.count_nonzero(expected) != theirs
    assert numbers["differs"] == f"vLLM keeps {numbers['kept']} tokens here, transformers {theirs}"
    assert all(abs(r["new"] - expected[r["id"]]) < 2e-6 for r in numbers["rows"])


@pytest.mark.parametrize("engine", ["transformers", "vllm", "llama.cpp", "sglang", "ollama"])
def test_the_bands_with_an_engine_s_cut_match_its_sampled_from(engine):
    """The bands' hook against lv.sampled_from on a random distribution (no model): at every grid point
    of each setting, the token's probability is the engine's own."""
    import logprob_viz as lv
    from logprob_viz.views.explorer.engine_choice import bands_under
    from logprob_viz.views.explorer.sampling_settings import Settings

    rng = np.random.default_rng(7)
    logprobs = rng.normal(0, 2.0, 300)
    token = int(np.argsort(-logprobs)[4])
    settings = Settings(temperature=0.8, top_k=40, top_p=0.9, min_p=0.05)
    bands = bands_under(logprobs, token, settings, engine)
    for name, band in bands.items():
        for value, p in zip(band.values[::10], band.probs[::10], strict=True):
            args = {"temperature": 0.8, "top_k": 40, "top_p": 0.9, "min_p": 0.05, name: float(value)}
            expected = float(np.exp(lv.sampled_from(logprobs, engine=engine, **args)[token]))
            assert abs(p - expected) < 1e-9, (name, value)
