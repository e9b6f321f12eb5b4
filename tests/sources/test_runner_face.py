"""A runner is a user face over an engine: at most 15 public names on every runner (local and each
server's), the same face on all of them, and the steps no user calls on ``runner.engine``."""

from __future__ import annotations

import pytest

from logprob_viz.sources.remote import LlamaCppRunner, OpenAIRunner, VLLMRunner

MOST_PUBLIC_NAMES = 15
# What every runner shows, local or behind a server (the list).
FACE = {"generate", "stream", "score", "choose", "lens", "attribute", "token_id", "model", "tokenizer", "name",
        "device", "capabilities", "engine"}
# The engine's steps, which no user calls: never on the face.
ENGINE_STEPS = {"prepare", "steps", "score_request", "make_request", "drive", "check_top_logprobs", "trace_meta",
                "forward", "eos_ids", "bytes_of", "text_of"}


def public_names(obj) -> set[str]:
    """The names a user sees on `obj` (an instance, with what its class gives), less what every object has."""
    return {n for n in dir(obj) if not n.startswith("_")} - set(dir(object()))


def server_runners() -> list:
    # listed= is the server's /models answer, so nothing is asked of a server here
    return [kind("http://127.0.0.1:9/v1", listed=[{"id": "smollm2"}])
            for kind in (OpenAIRunner, VLLMRunner, LlamaCppRunner)]


def test_the_local_runner_shows_at_most_15_public_names(runner):
    names = public_names(runner)
    assert len(names) <= MOST_PUBLIC_NAMES, sorted(names)
    assert FACE <= names and not names & ENGINE_STEPS, sorted(names)
    assert {"forward", "eos_ids", "trace_meta", "text_of", "bytes_of", "vocab", "sync_every"} <= set(dir(runner.engine))


@pytest.mark.parametrize("remote", server_runners(), ids=lambda r: type(r).__name__)
def test_each_server_runner_shows_the_same_face_in_at_most_15_names(remote):
    names = public_names(remote)
    assert len(names) <= MOST_PUBLIC_NAMES, sorted(names)
    assert FACE <= names and not names & ENGINE_STEPS, sorted(names)
    assert names - FACE == {"base_url", "server"}, "a server runner adds where and what the server is"
    assert remote.device is None and remote.model == remote.name == "smollm2"
    assert not remote.capabilities.in_process
    with pytest.raises(ValueError, match="lv.load"):
        remote.lens("Hello")
    with pytest.raises(ValueError, match="lv.load"):
        remote.attribute(None, at=1)


def test_the_face_describes_what_its_engine_runs(runner):
    caps = runner.capabilities
    assert caps.in_process and caps.applies_min_p and caps.can_continue_from_ids
    assert caps.max_top_logprobs == caps.vocab_size == runner.engine.vocab_size == 49152
    assert runner.model is runner.engine.model and runner.tokenizer is runner.engine.tokenizer
    assert runner.device == runner.engine.device and runner.name == runner.engine.name
