"""The explorer's warm-up: a local model's one-time costs, paid in the background when the app opens.

The first generation of a freshly loaded transformers runner pays for things no later one does:
the byte table of the whole vocabulary (every token's display text, built once per runner: about
half a second for 49,152 tokens on a laptop-class CPU core) and the first forward pass's set-up
in torch (its kernels' first calls). Measured in JupyterLab (``python -m benchmarks.frontend_click``),
that made the first Generate's first token about a second later than the next one's. The app
starts a thread that runs the runner's own path once (two tokens from a short prompt, and one from a
chat message when the model has a chat template), so a person's first click finds it done.

It holds the runner's job lock (`logprob_viz.sources.job_lock`) while it runs, as every job does: a
Generate pressed meanwhile waits for it and its status line says so, Stop ends that wait, and a
cell that calls the runner meanwhile waits with a warning. It runs once per runner, never on a
runner that is busy (whatever runs there pays the costs itself), and only for a local runner: a
server runner's first request costs the server, not this kernel. ``LOGPROB_VIZ_WARM_UP=0`` in the
environment turns it off (the benchmark's "without" runs).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref

from ...sources.job_lock import JobCancelled
from ...sources.runner import Runner, jobs_of
from .sampling_settings import has_chat_template

__all__ = ["start_warm_up", "WARM_UP", "THREAD_NAME"]

log = logging.getLogger(__name__)

WARM_UP = "the model's warm-up (its first run, started when the explorer opened)"  # the lock's holder, in words
THREAD_NAME = "lv-explore-warm-up"
_warmed: weakref.WeakSet = weakref.WeakSet()  # runners warmed (or being warmed) in this process
_lock = threading.Lock()


def _is_local(runner) -> bool:
    # (a server runner's first request costs the server)
    return isinstance(runner, Runner) and runner.capabilities.in_process


def start_warm_up(runner) -> threading.Thread | None:
    """Start warming `runner` up in a daemon thread; None when there is nothing to do (see the module).

    Returns once the thread holds the runner's lock (or found it taken, and gave up), so a click
    made after the app shows always finds the warm-up holding the runner, never racing it for it.
    """
    if os.environ.get("LOGPROB_VIZ_WARM_UP", "1") == "0" or not _is_local(runner):
        return None
    jobs = jobs_of(runner)
    with _lock:
        if runner in _warmed or jobs is None or jobs.busy:
            return None
        _warmed.add(runner)
    holding = threading.Event()
    thread = threading.Thread(target=_warm_up, args=(runner, holding), name=THREAD_NAME, daemon=True)
    thread.start()
    holding.wait()
    return thread


def _warm_up(runner, holding: threading.Event) -> None:
    jobs = jobs_of(runner)
    try:
        jobs.acquire(WARM_UP, stop=lambda: True)  # only if free: a job that got there first pays the costs itself
    except JobCancelled:
        return
    finally:
        holding.set()
    try:
        runner.generate("Hello", max_new_tokens=2, top_logprobs=5, progress=False)  # prefill and a decode step
        if has_chat_template(runner):  # the chat template's first rendering
            runner.generate(messages=[{"role": "user", "content": "Hello"}], max_new_tokens=1, top_logprobs=5,
                            progress=False)
    except Exception:  # noqa: BLE001 - a warm-up that fails changes nothing; the first real job shows any error
        log.debug("the warm-up failed", exc_info=True)
    finally:
        jobs.release()
