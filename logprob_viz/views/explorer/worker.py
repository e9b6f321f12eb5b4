"""The explorer's jobs: one at a time per explorer, one at a time per runner, each in a background
thread, with a status line that says what runs, what waits, and how a job ended.

- In one explorer, a second job (Generate pressed twice, Branch during Generate) is **refused**:
  the status line says which job runs and what to do, and keeps saying it while that job goes on.
- On one runner (two explorers, or a cell calling ``runner.generate``), jobs **queue**: the
  runner's lock (`logprob_viz.sources.job_lock`) lets one run; a waiting explorer says what it
  waits for, and Stop ends the wait.
- A job that fails shows why; a generation a server broke off keeps every token it received
  and says what happened (``meta["error"]``) and what to do.

What it runs and how that went is the app's state (`state.py`): ``running``, ``status``, ``last_error``.
"""

from __future__ import annotations

import contextvars
import logging
import threading

from ...records.trace import Trace
from ...sources.job_lock import JobCancelled
from ...sources.runner import jobs_of
from .warmup import start_warm_up  # (started by the app with its worker)

__all__ = ["Worker", "ending_of", "start_warm_up"]

log = logging.getLogger(__name__)


def ending_of(trace: Trace, stopped: bool = False) -> tuple[str, str]:
    """How a generation ended, for the status line: (words to append, status kind)."""
    why = trace.meta.get("finish_reason") or ""
    if why == "error":
        return f" — cut short, the tokens received are kept: {trace.meta.get('error', 'the server failed')}", "error"
    if stopped or why == "interrupted":
        return " (stopped: the tokens so far are kept)", "info"
    return (f", {why}" if why else ""), "info"


class Worker:
    """Runs an explorer's jobs: `start(name, job)`; `say` writes the status line (with any refusal).

    It writes `state` (an `ExplorerState`): the job running, the status line, the last error.
    """

    def __init__(self, state, runner) -> None:
        self.state, self.runner, self.stop = state, runner, state.stop
        self.thread: threading.Thread | None = None
        self._busy = threading.Lock()
        self._refusal: str | None = None  # said with every status of the running job

    def say(self, message: str, kind: str = "info") -> None:
        if self._refusal and self._busy.locked():
            message, kind = f"{message} | {self._refusal}", "error"
        self.state.say(message, kind)

    def fail(self, error: BaseException) -> None:
        self.state.last_error = f"{type(error).__name__}: {error}"
        self.state.say(self.state.last_error, "error")

    def start(self, name: str, job) -> None:
        """Run `job()` in a background thread, unless this explorer already runs one (then refuse)."""
        if not self._busy.acquire(blocking=False):
            running = self.state.running or "a job"  # (None: the job is ending, its lock not yet released)
            self._refusal = (f"{name} was not started: {running} is running; press {name} again when it has "
                             f"finished, or press Stop first")
            self.state.last_error = f"RuntimeError: {self._refusal}"
            return self.state.say(f"{running}… | {self._refusal}", "error")
        self._refusal, self.state.last_error = None, None
        self.stop.clear()  # a Stop pressed before this job is not for it
        self.state.running = name
        self.state.say(f"{name}…")
        # The job runs in the caller's context (contextvars): a host that registers new widgets by
        # the context they are made in (Panel's current document) then sees the rows the job makes.
        context = contextvars.copy_context()
        self.thread = threading.Thread(target=context.run, args=(self._wrapped, name, job),
                                       name=f"lv-explore-{name}", daemon=True)
        self.thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        thread = self.thread
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    def _wrapped(self, name: str, job) -> None:
        jobs = jobs_of(self.runner)
        try:
            if jobs is None:  # a runner of another kind: nothing to queue on
                job()
            else:
                with jobs.hold(f"an explorer's {name}", self.stop, lambda holder: self._waiting(name, holder)):
                    job()
        except JobCancelled as error:
            self.state.say(f"{error}. Press {name} again to run it.", "note")
        except Exception as error:  # shown to the person; the tree is left as it was
            log.debug("%s failed", name, exc_info=True)
            self.fail(error)
        finally:
            self.state.running = None
            self._refusal = None
            self._busy.release()

    def _waiting(self, name: str, holder: str) -> None:
        self.say(f"{name}: waiting for the runner, {holder} is using it; {name} starts when that ends "
                 "(Stop cancels the wait).", "note")
