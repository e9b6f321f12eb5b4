"""The explorer's model work: the bodies of Generate, Next token, a chosen token, Branch and Token p.

Each function runs in the explorer's background thread (`worker.py` starts it), calls the runner
(or the tree, which calls it) and returns what it made; it changes nothing the person sees. The
app (`app.py`) checks the input, starts the job and applies its result to its state in one place
(`Explorer.apply`), so a job that raises leaves the tree as it was (the worker shows why).
Every call the explorer makes to a runner is here (besides the warm-up, `warmup.py`, and the pinned
panel's whole distributions, `pinned.py`).
"""

from __future__ import annotations

import math
import threading
import time

import numpy as np

from ...records.trace import Trace
from ..defaults import UPDATE_S
from ..toolkit import percent_of_logprob
from .forks import as_trace
from .pinned import has_full_distribution, rank_in
from .sampling_settings import Settings

__all__ = ["generate", "next_token", "choose", "branch", "typed_token", "rate_words", "append_row"]


def rate_words(trace: Trace, seconds: float) -> str:
    """How many tokens a generation made and how fast ("12 tokens, 30.1 tokens/s")."""
    new = len(trace) - trace.prompt_len
    return f"{new} tokens, {new / max(seconds, 1e-9):.1f} tokens/s"


def generate(runner, settings: Settings, args: dict, stop: threading.Event, show) -> Trace:
    """Stream a generation from `args` (a prompt or messages); `show(snapshot, seconds)` about every
    UPDATE_S s while it grows. Returns the whole trace."""
    started = time.perf_counter()
    stream = runner.stream(**args, max_new_tokens=settings.max_new_tokens, top_logprobs=settings.top_logprobs,
                           stop=stop, **settings.sampling())
    shown_at, snapshot = 0.0, None
    for snapshot in stream:
        now = time.perf_counter()
        if now - shown_at >= UPDATE_S:
            shown_at = now
            show(snapshot, now - started)
    if snapshot is None:
        raise RuntimeError("the runner's stream gave no trace")
    return snapshot


def next_token(runner, settings: Settings, args: dict, base: Trace | None) -> tuple[Trace, Trace]:
    """The distribution of the token after `base` (None: after the prompt `args`): (base, step), where
    `step` is the runner's record of `base` and one token more (its last row: the next position)."""
    if base is None:
        step = runner.generate(progress=False, **args, max_new_tokens=1, top_logprobs=settings.top_logprobs)
        return step[: len(step) - 1], step
    step = runner.generate(progress=False, prompt_ids=base.token_ids.tolist(), max_new_tokens=1,
                           top_logprobs=settings.top_logprobs)
    return base, step


def choose(runner, settings: Settings, base: Trace, token_id: int) -> tuple[Trace, Trace]:
    """Manual decoding: `base` with `token_id` appended (the runner's record of it), and the step after it."""
    ids = base.token_ids.tolist() + [int(token_id)]
    step = runner.generate(progress=False, prompt_ids=ids, max_new_tokens=1, top_logprobs=settings.top_logprobs)
    return append_row(base, step, len(step) - 2), step


def branch(tree, parent: Trace, at: int, token, settings: Settings, stop: threading.Event) -> Trace:
    """A new branch of `tree` from `parent` at position `at` with `token` (id or text); the new node."""
    node = tree.branch(at=int(at), token=token, max_new_tokens=settings.max_new_tokens, parent=parent, stop=stop,
                       progress=False, **settings.sampling())
    return as_trace(node)


def typed_token(runner, base: Trace, step: Trace, text: str, distributions) -> dict:
    """The p of a typed token at the position Next token shows: exact from the whole distribution with
    a local model (`distributions`: the pinned panel's cache), else from the runner's top K (a token
    outside it: at most the K-th's p). {after, text, token, id, p, rank, note | error}."""
    after = len(step) - 1
    answer = {"after": after, "text": text}
    try:
        token_id = runner.token_id(text)
    except ValueError as error:
        token_id, answer["error"] = None, str(error)
    if token_id is not None and has_full_distribution(runner):
        logprobs = distributions.compute(runner, tuple(int(i) for i in base.token_ids))
        answer.update(token=text, id=token_id, p=float(np.exp(logprobs[token_id])), rank=rank_in(logprobs, token_id),
                      note="exact, from the whole distribution")
    elif token_id is not None or not has_full_distribution(runner):
        answer.update(_from_top_k(step, after, text, token_id))
    return answer


def append_row(trace: Trace, scored: Trace, index: int) -> Trace:
    """`trace` with row `index` of `scored` (the runner's record of the next token) appended.

    Used when a person picks the next token by hand: the runner scores the text with the chosen
    token added, and its record of that token (logprob, rank, entropy, alternatives) is appended.
    The appended row is completion, not prompt, chosen by hand (its position joins
    ``meta["forced"]``), and has no processed logprobs (nothing was sampled).
    """
    row = scored[index : index + 1]
    row.prompt_len = 0
    row.processed_logprobs = row.processed_top_logprobs = None
    grown = Trace.concat(trace, row)
    grown.meta = {
        **trace.meta,
        "manual_steps": int(trace.meta.get("manual_steps", 0)) + 1,
        "forced": [*trace.meta.get("forced", ()), len(trace)],
    }
    return grown


def _from_top_k(step: Trace, row: int, text: str, token_id) -> dict:
    """A typed token's p from the runner's record of the next position (its top K only)."""
    for j, (alt, lp) in enumerate(zip(step.top_tokens[row], step.top_logprobs[row], strict=False)):
        listed_id = int(step.top_ids[row][j]) if step.top_ids is not None else -1
        same = (token_id is not None and listed_id == token_id) or alt == text
        if same and math.isfinite(lp):
            return {"token": alt, "p": math.exp(float(lp)), "rank": j + 1, "error": None, "note": "from the top K"}
    last = min((float(lp) for lp in step.top_logprobs[row] if math.isfinite(lp)), default=-math.inf)
    return {"error": f"{text!r} is not among the top {len(step.top_tokens[row])} the runner returned: its p is at most "
                     f"{percent_of_logprob(last)}"}
