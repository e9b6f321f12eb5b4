"""lv.Tree on the real default model: branches exact at the token level, checked against plain
transformers; sampling from one point; exact round trip; clear errors that leave the tree as it was.
"""

import json
import types

import numpy as np
import pytest
import torch

from logprob_viz.records.trace import Trace
from logprob_viz.records.tree import Tree

ROBOT = "A robot may not injure a human being"
TOL = 1e-4


@pytest.fixture(scope="module")
def root(runner):
    return runner.generate(ROBOT, max_new_tokens=10, top_logprobs=5)


def reference_row(model, ids):
    """Logprobs (double) of the next token after `ids`, from a plain forward pass."""
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1].double()
    return torch.log_softmax(logits, dim=-1)


def test_a_branch_from_an_alternative_is_exact(runner, reference_model, root):
    at = root.prompt_len + 2
    alt_text, alt_id, alt_logprob = root.top_tokens[at][1], int(root.top_ids[at, 1]), float(root.top_logprobs[at, 1])
    tree = Tree(root, runner=runner)
    node = tree.branch(at=at, token=alt_text, max_new_tokens=8)

    prefix = root.token_ids[:at].tolist()
    assert node.token_ids[:at].tolist() == prefix and int(node.token_ids[at]) == alt_id
    assert len(node) == at + 1 + 8
    # The prompt is the root's: the forced token and what follows are the branch's completion.
    assert node.prompt_len == root.prompt_len and node.meta["forced"] == [at]
    # The model's own numbers at the fork: the parent's alternative logprob, rank 2, the same distribution.
    assert abs(float(node.logprobs[at]) - alt_logprob) < TOL
    assert node.ranks[at] == 2
    np.testing.assert_allclose(node.entropy[at], root.entropy[at], atol=TOL)
    np.testing.assert_array_equal(node.top_ids[at], root.top_ids[at])
    np.testing.assert_allclose(node.top_logprobs[at], root.top_logprobs[at], atol=TOL)
    logp = reference_row(reference_model, prefix)
    assert abs(float(node.logprobs[at]) - float(logp[alt_id])) < TOL
    assert abs(float(node.entropy[at]) - float(-(logp.exp() * logp).sum())) < TOL

    # The continuation: what plain transformers generates greedily from prefix + forced id.
    ids = torch.tensor([prefix + [alt_id]])
    with torch.no_grad():
        want = reference_model.generate(ids, max_new_tokens=8, do_sample=False, pad_token_id=2)[0, ids.shape[1]:]
    assert node.token_ids[at + 1:].tolist() == want.tolist()

    assert node.meta["branch"] == {"parent": 0, "at": at, "token_id": alt_id, "token": alt_text}
    assert tree.nodes == [root, node] and tree.parent(node) is root and tree.children(root) == [node]


def test_a_branch_prefix_carries_the_sampled_from_numbers_of_its_parent(runner, reference_model):
    # A root sampled at T=0.8: its generated tokens have a sampled-from distribution. A branch
    # (greedy or not) repeats the root's first `at` tokens, and there it must show the root's numbers.
    root = runner.generate(ROBOT, max_new_tokens=8, top_logprobs=5, temperature=0.8, seed=0)
    at = root.prompt_len + 5
    tree = Tree(root, runner=runner)
    node = tree.branch(at=at, token=int(root.top_ids[at, 1]), max_new_tokens=3, temperature=0.8, seed=1)
    assert node.processed_logprobs is not None
    for name in ("token_ids", "logprobs", "ranks", "top_ids", "processed_logprobs"):
        np.testing.assert_array_equal(getattr(node, name)[:at], getattr(root, name)[:at])
    np.testing.assert_array_equal(node.processed_top_logprobs[:at], root.processed_top_logprobs[:at])
    # ... which are the model's at T=0.8, computed here from the logits (not from the code's numbers)
    ids = root.token_ids.tolist()
    with torch.no_grad():
        tempered = torch.log_softmax(reference_model(torch.tensor([ids])).logits[0].double() / 0.8, dim=-1)
    for i in range(root.prompt_len, at):
        assert abs(float(node.processed_logprobs[i]) - float(tempered[i - 1, ids[i]])) < TOL
        top = node.top_ids[i]
        np.testing.assert_allclose(node.processed_top_logprobs[i], tempered[i - 1, top].numpy(), atol=TOL)
    assert node.prompt_len == root.prompt_len and node.meta["forced"] == [at]
    # A branch of the branch: the person's earlier choice stays marked, and its numbers stay too.
    deeper = tree.branch(at=at + 2, token=int(node.top_ids[at + 2, 1]), max_new_tokens=1, parent=node)
    assert deeper.meta["forced"] == [at, at + 2]
    np.testing.assert_array_equal(deeper.processed_logprobs[: at + 2], node.processed_logprobs[: at + 2])


def test_branch_by_id_outside_the_top_k_and_from_a_branch(runner, reference_model, root):
    tree = Tree(root, runner=runner)
    at = root.prompt_len + 1
    first = tree.branch(at=at, token=" robot", max_new_tokens=3)  # any one-token text
    assert first.tokens[at] == " robot"
    logp = reference_row(reference_model, root.token_ids[:at].tolist())
    rid = int(first.token_ids[at])
    assert first.ranks[at] == int((logp > logp[rid]).sum()) + 1
    second = tree.branch(at=at + 2, token=123, max_new_tokens=2, parent=first)
    assert second.token_ids[: at + 2].tolist() == first.token_ids[: at + 2].tolist() and second.token_ids[at + 2] == 123
    assert tree.parent(second) is first and tree.children(first) == [second] and tree.children(1) == [second]
    assert second.meta["branch"]["parent"] == 1
    # At the end of the parent: the token is appended (what manual decoding does), nothing generated.
    end = tree.branch(at=len(second), token=13, max_new_tokens=0, parent=second)
    assert len(end) == len(second) + 1 and end.token_ids[:-1].tolist() == second.token_ids.tolist()


def test_sample_counts_first_tokens(runner, root):
    tree = Tree(root, runner=runner)
    at = root.prompt_len
    nodes, counts = tree.sample(6, at=at, seed=5, max_new_tokens=2, temperature=1.5)
    assert len(nodes) == 6 and len(tree.nodes) == 7 and all(tree.parent(n) is root for n in nodes)
    firsts = [n.tokens[at] for n in nodes]
    assert counts == {t: firsts.count(t) for t in set(firsts)} and sum(counts.values()) == 6
    assert [n.meta["branch"]["seed"] for n in nodes] == [5, 6, 7, 8, 9, 10]
    assert all(n.token_ids[:at].tolist() == root.token_ids[:at].tolist() and n.prompt_len == at for n in nodes)
    again, _ = Tree(root, runner=runner).sample(6, at=at, seed=5, max_new_tokens=2, temperature=1.5)
    assert [n.token_ids.tolist() for n in again] == [n.token_ids.tolist() for n in nodes]


def test_round_trip_is_exact(runner, root):
    tree = Tree(root, runner=runner)
    a = tree.branch(at=root.prompt_len + 1, token=int(root.top_ids[root.prompt_len + 1, 2]), max_new_tokens=3)
    tree.branch(at=len(a) - 1, token=int(a.top_ids[-1, 1]), max_new_tokens=2, parent=a, temperature=0.7, seed=1)
    d = tree.to_dict()
    text = json.dumps(d)  # JSON-safe
    back = Tree.from_dict(json.loads(text))
    assert back.to_dict() == d
    assert [back.index(back.parent(n)) if back.parent(n) is not None else None for n in back.nodes] == [None, 0, 1]
    for x, y in zip(tree.nodes, back.nodes, strict=True):
        assert x.tokens == y.tokens and x.token_bytes == y.token_bytes and x.prompt_len == y.prompt_len
        for name in ("token_ids", "logprobs", "ranks", "entropy", "top_logprobs", "top_ids"):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name))
        assert list(x.top_tokens) == list(y.top_tokens) and x.meta == y.meta
    assert back.nodes[2].processed_logprobs is not None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(at=0, token=5), "outside the trace"),
        (dict(at=10**6, token=5), "outside the trace"),
        (dict(at=-1, token=5), "outside the trace"),
        (dict(at=9, token="this is many tokens"), "neither an alternative at position 9 nor one token"),
        (dict(at=9, token=""), "token must be a token id"),
        (dict(at=9, token=10**8), "outside the vocabulary"),
        (dict(at=9, token=5, parent=99), "outside this tree"),
        (dict(at=9, token=5, parent=Trace(tokens=["x"])), "not a node of this tree"),
        (dict(at=9, token=5, temperature=-1), "temperature must be a number >= 0"),
    ],
)
def test_bad_input_is_a_clear_error_and_the_tree_is_unchanged(runner, root, kwargs, message):
    tree = Tree(root, runner=runner)
    before = tree.to_dict()
    with pytest.raises(ValueError, match=message):
        tree.branch(max_new_tokens=2, **kwargs)
    assert tree.to_dict() == before and len(tree.nodes) == 1


def test_a_tree_without_a_runner_or_with_unknown_ids_says_why(runner, root):
    with pytest.raises(ValueError, match="no runner to generate branches"):
        Tree(root).branch(at=3, token=5)
    no_ids = Trace(tokens=["a", "b", "c"], top_tokens=[[], ["x"], ["y"]], top_logprobs=[[-np.inf], [-1.0], [-1.0]])
    tree = Tree(no_ids, runner=runner)
    with pytest.raises(ValueError, match=r"no token ids at positions \[0, 1\]"):
        tree.branch(at=2, token=5)
    assert len(tree.nodes) == 1

    class CannotContinue:
        capabilities = types.SimpleNamespace(can_continue_from_ids=False)

    with pytest.raises(ValueError, match="cannot continue from token ids"):
        Tree(no_ids, runner=CannotContinue()).branch(at=1, token=1)
    with pytest.raises(ValueError, match="not a tree written by Tree.to_dict"):
        Tree.from_dict({"nodes": []})
