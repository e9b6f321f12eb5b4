"""One fork of a trace: its first `at` token ids, a chosen token, and what a runner generates from there.

`lv.Tree` grows its nodes with it, and `Fields.what_else` (json/alternatives.py) continues a JSON
value's alternatives with it. It works on the traces it is given (their own class's `concat`)
and imports no record class, so the modules that fork a trace do not need the tree's.
"""

from __future__ import annotations

__all__ = ["fork", "prefix_ids", "with_prefix_of", "checked_runner"]


def checked_runner(runner):
    """`runner`, if it can continue from token ids (a branch is generated from them); else ValueError."""
    if runner is None:
        raise ValueError("there is no runner to generate branches with: give runner=lv.load() (the local model) "
                         "or runner=lv.connect(url), e.g. lv.Tree(trace, runner=lv.load())")
    if not runner.capabilities.can_continue_from_ids:
        raise ValueError(f"{runner!r} cannot continue from token ids, which a branch needs "
                         "(the local runner, a vLLM or a llama.cpp server can)")
    return runner


def prefix_ids(node, at: int) -> list[int]:
    """`node`'s first `at` token ids; ValueError where one is unknown (a server that gave no ids)."""
    ids = node.token_ids[:at].tolist()
    unknown = [i for i, t in enumerate(ids) if t < 0]
    if unknown:
        raise ValueError(f"the trace has no token ids at positions {unknown[:8]}; a branch continues from ids "
                         "(on a server: vLLM with return_token_ids, or llama.cpp, gives them)")
    return ids


def fork(node, at: int, token_id: int, runner, *, max_new_tokens: int, top_logprobs: int, **sampling):
    """`node`'s first `at` tokens, then `token_id`, then what `runner` generates (a trace): `at` and
    the runner already checked (`checked_runner`)."""
    out = runner.generate(prompt_ids=prefix_ids(node, at) + [int(token_id)], max_new_tokens=max_new_tokens,
                          top_logprobs=top_logprobs, **sampling)
    return with_prefix_of(node, out, at)


def with_prefix_of(parent, out, at: int):
    """`out` (the runner's record of parent's first `at` ids and what followed) with those first `at`
    rows replaced by the parent's own: the runner scored them as a prompt, so they lack what the
    parent recorded when it made them (the sampled-from distribution, ``processed_*``), and a
    branch's prefix must read as its parent's. The prompt stays the parent's prompt: the forced
    token and what follows are the branch's completion (``meta["forced"]`` lists the forced ones)."""
    head, tail = parent[:at], out[at:]
    tail.prompt_len = 0
    joined = type(parent).concat(head, tail)
    joined.meta = dict(out.meta)
    return joined
