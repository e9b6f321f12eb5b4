"""The readers tag what a server's numbers are (``meta["numbers"]``) where the server documents it,
on real recorded bodies (tests/fixtures/servers, SOURCES.md), and say when a provider returned no logprobs."""

from __future__ import annotations

import copy
import json

import pytest

import paths
from logprob_viz.sources.errors import LogprobFormatError
from logprob_viz.sources.readers.reader import read


def body(name: str):
    return json.loads((paths.FIXTURES / "servers" / f"{name}.json").read_text(encoding="utf-8"))["body"]


@pytest.mark.parametrize(("name", "kind", "why"), [
    ("llamacpp_completion", "raw", "n_probs"),
    ("llamacpp_completion_post_sampling", "processed", "post_sampling_probs"),
    ("ollama_generate", "raw", "Ollama"),
])
def test_documented_servers_are_tagged(name, kind, why):
    meta = read(body(name)).meta
    assert meta["numbers"] == kind
    assert why in meta["numbers_from"]


def vllm_body():
    """A real vLLM Chat body (tests/fixtures/vllm): it names no logprobs_mode, as OpenAI's name none."""
    data = json.loads((paths.FIXTURES / "vllm" / "chat_top_logprobs.json").read_text(encoding="utf-8"))["body"]
    return json.loads(data) if isinstance(data, str) else data


def test_an_untold_body_is_not_tagged_and_a_vllm_logprobs_mode_is():
    data = vllm_body()
    assert "numbers" not in read(data).meta  # nothing in the body says which distribution
    for mode, kind in (("processed_logprobs", "processed"), ("raw_logits", "raw")):
        tagged = {**copy.deepcopy(data), "logprobs_mode": mode}
        meta = read(tagged).meta
        assert (meta["numbers"], meta["numbers_from"]) == (kind, f"vLLM logprobs_mode={mode}")


def test_a_body_with_logprobs_null_says_the_provider_returned_none():
    data = copy.deepcopy(vllm_body())
    data["choices"][0]["logprobs"] = None  # what a reasoning model answers
    data.pop("prompt_logprobs", None)  # (this recorded body also has its prompt's)
    data["choices"][0].pop("prompt_logprobs", None)
    with pytest.raises(LogprobFormatError, match="the provider returned no logprobs"):
        read(data)
    ollama = {k: v for k, v in body("ollama_generate").items() if k != "logprobs"}
    with pytest.raises(LogprobFormatError, match="the provider returned no logprobs"):
        read(ollama)
