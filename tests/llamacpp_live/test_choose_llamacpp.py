"""runner.choose on a real llama-server (tests/llamacpp_live/conftest.py): llama.cpp returns no
logprobs for the tokens it is given (no echo, no prompt_logprobs), so choose says so, names the
server, and says what to use instead, before it sends anything."""

from __future__ import annotations

import pytest

import logprob_viz as lv


def test_choose_says_why_it_cannot_and_what_to_use(llamacpp_url):
    server = lv.connect(llamacpp_url)
    assert type(server).__name__ == "LlamaCppRunner"  # the real server, recognised as llama.cpp
    with pytest.raises(ValueError) as err:
        server.choose("Review: dull and slow. Sentiment:", [" positive", " negative"])
    message = str(err.value)
    assert "choose" in message and "llama.cpp" in message and "no logprobs for prompt tokens" in message
    assert "lv.load" in message and "vLLM" in message and server.base_url in message
    # the same refusal for a list of prompts, before any argument is looked at
    with pytest.raises(ValueError, match="no logprobs for prompt tokens"):
        server.choose(["a", "b"], [" x", " y"], gold=[0, 1])
