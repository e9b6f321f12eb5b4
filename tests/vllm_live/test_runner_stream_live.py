"""runner.stream and lv.Tree through lv.connect on the real vLLM server (the suite's `vllm_url`).

The server runs the default model in float32, so greedy continuations are compared with plain
transformers' `model.generate` on a separately loaded copy (`reference_model`).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import logprob_viz as lv
from logprob_viz.records.tree import Tree

ROBOT = "A robot may not injure a human being"
TOL = 5e-4  # the server's CPU kernels vs a separate float32 pass (as in test_vllm_live.py)


@pytest.fixture(scope="module")
def remote(vllm_url, runner):
    # with the tokenizer every token comes back as an id: exact bytes, and ids to branch from
    return lv.connect(vllm_url, tokenizer=runner.tokenizer)


@pytest.mark.parametrize("sampling", [{}, {"temperature": 0.9, "seed": 4}], ids=["greedy", "seeded"])
def test_stream_grows_and_ends_with_generate(remote, sampling):
    snapshots = list(remote.stream(ROBOT, max_new_tokens=12, top_logprobs=5, stream_every=1, **sampling))
    final = remote.generate(ROBOT, max_new_tokens=12, top_logprobs=5, **sampling)
    lengths = [len(s) for s in snapshots]
    assert lengths == sorted(lengths) and len(lengths) >= 3, lengths
    last = snapshots[-1]
    assert last.token_ids.tolist() == final.token_ids.tolist() and last.prompt_len == final.prompt_len
    assert last.tokens == final.tokens
    np.testing.assert_allclose(last.logprobs, final.logprobs, atol=TOL)
    np.testing.assert_array_equal(last.top_ids[final.prompt_len:], final.top_ids[final.prompt_len:])
    np.testing.assert_array_equal(last.ranks, final.ranks)
    for s in snapshots[:-1]:
        assert s.token_ids.tolist() == final.token_ids[: len(s)].tolist()


def test_a_stop_event_ends_the_server_stream_with_the_partial_trace(remote):
    stop, seen = threading.Event(), []
    for snapshot in remote.stream(ROBOT, max_new_tokens=200, top_logprobs=3, stream_every=1, stop=stop):
        seen.append(snapshot)
        if len(seen) == 3:
            stop.set()
    final = seen[-1]
    assert final.meta["finish_reason"] == "interrupted" and len(final) - final.prompt_len < 200


def test_a_branch_through_connect_is_exact_at_the_token_level(remote, reference_model):
    root = remote.generate(ROBOT, max_new_tokens=8, top_logprobs=5)
    tree = Tree(root, runner=remote)
    at = root.prompt_len + 2
    alt_id, alt_logprob = int(root.top_ids[at, 1]), float(root.top_logprobs[at, 1])
    node = tree.branch(at=at, token=alt_id, max_new_tokens=6)
    prefix = root.token_ids[:at].tolist()
    assert node.token_ids[:at].tolist() == prefix and int(node.token_ids[at]) == alt_id
    assert abs(float(node.logprobs[at]) - alt_logprob) < 1e-4
    assert node.ranks[at] == 2 and node.prompt_len == root.prompt_len  # the forced token is completion
    ids = torch.tensor([prefix + [alt_id]])
    with torch.no_grad():
        want = reference_model.generate(ids, max_new_tokens=6, do_sample=False, pad_token_id=2)[0, ids.shape[1]:]
    assert node.token_ids[at + 1:].tolist() == want.tolist()
    by_text = tree.branch(at=at, token=root.top_tokens[at][1], max_new_tokens=6)
    assert by_text.token_ids.tolist() == node.token_ids.tolist()
