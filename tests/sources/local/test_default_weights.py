"""``lv.load()`` and ``lv.generate`` hold the default model's weights once, not a copy each."""

from __future__ import annotations

import logprob_viz as lv
from logprob_viz.sources.local import loading


def test_generate_after_load_uses_the_weights_already_loaded(runner):
    before = loading._default_weights
    assert before is not None, "the session's runner fixture is lv.load(): the weights are read"
    trace = lv.generate("A robot may not injure a human being", max_new_tokens=3, top_logprobs=2)
    default = loading.default_runner()
    assert default.model is runner.model and default.tokenizer is runner.tokenizer
    assert loading._default_weights is before, "no second read of the weights"
    again = lv.load()
    assert again is not runner and again.model is runner.model, "a runner of its own, the same weights"
    assert trace.tokens[-3:] == [",", " but", " a"]  # the same greedy start as the runner's (DESIGN.md)
