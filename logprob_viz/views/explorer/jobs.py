"""The explorer's model work: the bodies of Generate, Next token, a chosen token and Branch.

Each function here runs in the explorer's background thread (`worker.py` starts it) and talks
to the app only through what a person sees: the view's trace, the tree panel, the next-token
panel and the status line. `app.py` checks the input and starts the job; a job that raises
leaves the tree as it was (the worker shows why).
"""

from __future__ import annotations

import time

from ...records.trace import Trace
from ..settings import UPDATE_S
from ..toolkit import percent_of_logprob
from .branching import append_row, as_trace
from .worker import ending_of

__all__ = ["generate_job", "next_token_job", "choose_job", "branch_job", "typed_token_job"]



def generate_job(app, settings, args: dict) -> None:
    """Stream a generation from the prompt into the view; the whole trace becomes a new tree's root."""
    started = time.perf_counter()
    app.branches.say_tree(app.history.at, len(app.history.trees), generating=True)  # the others stay
    shown = [None]  # the last snapshot on show: kept if the stream fails after it
    stream = app.runner.stream(
        **args,
        max_new_tokens=settings.max_new_tokens,
        top_logprobs=settings.top_logprobs,
        stop=app.state.stop,
        **settings.sampling(),
    )
    try:
        snapshot = stream_into_view(app, stream, started, shown)
    except Exception:
        if shown[0] is not None:  # what the view shows stays, as the tree's root
            app.new_tree(shown[0], args)
        else:
            app.refresh()
        raise
    app.new_tree(snapshot, args)
    new = len(snapshot) - snapshot.prompt_len
    seconds = time.perf_counter() - started
    ending, kind = ending_of(snapshot, app.state.stop.is_set())
    if kind == "error":
        app.worker.last_error = f"ServerError: {snapshot.meta.get('error')}"
    app.say(
        f"Generated {new} tokens in {seconds:.1f} s ({new / max(seconds, 1e-9):.1f} tokens/s){ending}. "
        "Pin a token to branch from it.",
        kind,
    )


def stream_into_view(app, stream, started: float, shown: list) -> Trace:
    """Show the stream's snapshots (about every UPDATE_S s); returns the last, the whole trace."""
    shown_at, snapshot = 0.0, None
    for snapshot in stream:
        now = time.perf_counter()
        if now - shown_at >= UPDATE_S:
            shown_at = now
            app.show(snapshot, forks=[])
            shown[0] = snapshot
            new = len(snapshot) - snapshot.prompt_len
            app.say(f"Generating… {new} tokens, {new / max(now - started, 1e-9):.1f} tokens/s")
    if snapshot is None:
        raise RuntimeError("the runner's stream gave no trace")
    return snapshot


def next_token_job(app, settings, args: dict) -> None:
    """Show the distribution of the token after the text on show (or after the prompt, if it changed)."""
    base = app.current if app.current is not None and app.state.tree_input == args else None
    if base is None:
        step = app.runner.generate(progress=False, **args, max_new_tokens=1, top_logprobs=settings.top_logprobs)
        base = step[: len(step) - 1]
        app.new_tree(base, args)
    else:
        step = app.runner.generate(
            progress=False,
            prompt_ids=base.token_ids.tolist(),
            max_new_tokens=1,
            top_logprobs=settings.top_logprobs,
        )
    app.state.base, app.state.step = base, step
    app.next_panel.show(step)
    app.say("Next token: its choices are beside the text, in the chart's place; click one to append it.")


def choose_job(app, settings, token_id: int) -> None:
    """Manual decoding: append `token_id` to the text on show, then show the following distribution."""
    ids = app.state.base.token_ids.tolist() + [int(token_id)]
    step = app.runner.generate(progress=False, prompt_ids=ids, max_new_tokens=1, top_logprobs=settings.top_logprobs)
    grown = append_row(app.state.base, step, len(step) - 2)
    app.replace_current(grown)
    app.state.base, app.state.step = grown, step
    app.next_panel.show(step)
    app.say(
        f"Appended {grown.tokens[-1]!r}, chosen by hand, as token {len(grown)}: {len(grown)} tokens "
        f"({grown.prompt_len} prompt, {len(grown) - grown.prompt_len} completion)."
    )


def branch_job(app, settings, parent: Trace, at: int, token) -> None:
    """A new branch of the tree from `parent` at `at` with `token`; shown when it is made."""
    started = time.perf_counter()
    app.history.remember()
    try:
        node = app.tree.branch(
            at=int(at),
            token=token,
            max_new_tokens=settings.max_new_tokens,
            parent=parent,
            stop=app.state.stop,
            progress=False,
            **settings.sampling(),
        )
    except Exception:
        app.history.forget()  # the tree is as it was: nothing to undo
        raise
    app.current = as_trace(node)
    app.refresh()
    app.show(app.current, pin=int(at))  # the fork stays pinned: its chart stays where the click was
    ending, kind = ending_of(app.current, app.state.stop.is_set())
    if kind == "error":
        app.worker.last_error = f"ServerError: {app.current.meta.get('error')}"
    app.say(
        f"Branch #{len(app.tree.nodes) - 1} from token {at + 1} with {app.current.tokens[at]!r}: "
        f"{len(app.current) - at} tokens in {time.perf_counter() - started:.1f} s{ending}.",
        kind,
    )


def typed_token_job(app, base: Trace, step: Trace, text: str) -> None:
    """The p of a typed token at the position Next token shows: exact from the whole distribution with
    a local model, else from the runner's top K (a token outside it: at most the K-th's p)."""
    import numpy as np

    from .pinned import has_full_distribution, rank_in

    after = len(step) - 1
    answer = {"after": after, "text": text}
    try:
        token_id = app.runner.token_id(text)
    except ValueError as error:
        token_id, answer["error"] = None, str(error)
    if token_id is not None and has_full_distribution(app.runner):
        logprobs = app.readout.distributions.compute(app.runner, tuple(int(i) for i in base.token_ids))
        rank = rank_in(logprobs, token_id)
        answer.update(token=text, id=token_id, p=float(np.exp(logprobs[token_id])), rank=rank,
                      note="exact, from the whole distribution")
    elif token_id is not None or not has_full_distribution(app.runner):
        answer.update(_from_top_k(step, after, text, token_id))
    app.view.next_typed = answer
    if answer.get("error"):
        app.say(answer["error"], "note")
    else:
        app.say(f"{text!r} after token {after}: p {answer['p']:.4%} (rank {answer.get('rank', '?')}).")


def _from_top_k(step: Trace, row: int, text: str, token_id) -> dict:
    """A typed token's p from the runner's record of the next position (its top K only)."""
    import math

    for j, (alt, lp) in enumerate(zip(step.top_tokens[row], step.top_logprobs[row], strict=False)):
        listed_id = int(step.top_ids[row][j]) if step.top_ids is not None else -1
        same = (token_id is not None and listed_id == token_id) or alt == text
        if same and math.isfinite(lp):
            return {"token": alt, "p": math.exp(float(lp)), "rank": j + 1, "error": None, "note": "from the top K"}
    last = min((float(lp) for lp in step.top_logprobs[row] if math.isfinite(lp)), default=-math.inf)
    return {"error": f"{text!r} is not among the top {len(step.top_tokens[row])} the runner returned: its p is at most "
                     f"{percent_of_logprob(last)}"}
