"""The explorer's jobs: one at a time per explorer, one at a time per runner, each in a background
thread, with a status line that says what runs, what waits, and how a job ended.

- In one explorer, a second job (Generate pressed twice, Branch during Generate) is **refused**:
  the status line says which job runs and what to do, and keeps saying it while that job goes on.
- On one runner (two explorers, or a cell calling ``runner.generate``), jobs **queue**: the
  runner's lock (`logprob_viz.sources.jobs`) lets one run; a waiting explorer says what it
  waits for, and Stop ends the wait.
- A job that fails shows why; a generation a server broke off keeps every token it received
  and says what happened (``meta["error"]``) and what to do.
"""

from __future__ import annotations

import contextvars
import logging
import threading

from ...records.trace import Trace
from ...sources.base import jobs_of
from ...sources.jobs import JobCancelled
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
    """Runs an explorer's jobs: `start(name, job)`; `say` writes the status line (with any refusal)."""

    def __init__(self, controls, runner, stop: threading.Event, on_busy=None) -> None:
        self.controls, self.runner, self.stop = controls, runner, stop
        self.on_busy = on_busy  # on_busy(bool): what else the app disables while a job runs
        self.thread: threading.Thread | None = None
        self.name: str | None = None  # the running job
        self.last_error: str | None = None
        self._busy = threading.Lock()
        self._refusal: str | None = None  # said with every status of the running job

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def say(self, message: str, kind: str = "info") -> None:
        if self._refusal and self._busy.locked():
            message, kind = f"{message} | {self._refusal}", "error"
        self.controls.say(message, kind)

    def fail(self, error: BaseException) -> None:
        self.last_error = f"{type(error).__name__}: {error}"
        self.controls.say(self.last_error, "error")

    def start(self, name: str, job) -> None:
        """Run `job()` in a background thread, unless this explorer already runs one (then refuse)."""
        if not self._busy.acquire(blocking=False):
            self._refusal = (f"{name} was not started: {self.name} is running; press {name} again when it has "
                             f"finished, or press Stop first")
            self.last_error = f"RuntimeError: {self._refusal}"
            return self.controls.say(f"{self.name}… | {self._refusal}", "error")
        self.name, self._refusal, self.last_error = name, None, None
        self.stop.clear()  # a Stop pressed before this job is not for it
        self._set_busy(True)
        self.controls.say(f"{name}…")
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
            self.controls.say(f"{error}. Press {name} again to run it.", "note")
        except Exception as error:  # shown to the person; the tree is left as it was
            log.debug("%s failed", name, exc_info=True)
            self.fail(error)
        finally:
            self._set_busy(False)
            self._refusal = None
            self._busy.release()

    def _waiting(self, name: str, holder: str) -> None:
        self.say(f"{name}: waiting for the runner, {holder} is using it; {name} starts when that ends "
                 "(Stop cancels the wait).", "note")

    def _set_busy(self, busy: bool) -> None:
        self.controls.running(busy)
        if self.on_busy is not None:
            self.on_busy(busy)
