"""One job at a time per runner: the lock a runner owns, so that two explorers, a cell and an
explorer, or a stream and a branch never run on the same runner at once.

A job is one generate, stream or score (an explorer holds it for the whole of a button's job).
Whoever finds the runner busy waits its turn: the explorer says so in its status line at once, a
cell with a warning once it has waited a second (a blink of a wait, such as an explorer's
pinned-token numbers, is not worth a red box in a lesson), pointing at the user's own line, never
at the package's. A ``stop`` (Stop, an Event) ends the wait. The lock is
re-entrant for the thread that holds it, so code inside a stream loop may call the runner
again without a deadlock, and it may be released from another thread (a stream generator
closed by the garbage collector).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator

__all__ = ["RunnerJobs", "JobCancelled", "stop_requested", "STOP_POLL_S"]

# How often a wait looks at its stop (or halt): a job waiting for the lock, a corpus waiting for its requests.
STOP_POLL_S = 0.1
CELL_NOTICE_AFTER_S = 1.0  # a cell's call says it waits only once it has waited this long
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class RunnerJobs:
    """The runner's job lock: who holds it (``holder``, in words), waiting with a stop and a notice."""

    def __init__(self) -> None:
        self._free = threading.Condition()
        self._owner: int | None = None  # the thread holding it
        self._depth = 0
        self.holder: str | None = None  # what holds it, e.g. "an explorer's Generate"

    @property
    def busy(self) -> bool:
        return self._owner is not None

    def acquire(self, what: str, stop: Callable[[], bool] | None = None,
                waiting: Callable[[str], None] | None = None, notice_after_s: float = 0.0) -> None:
        """Take the runner for `what`; wait while another thread holds it.

        ``waiting(holder)`` is told once when this has waited `notice_after_s`; ``stop()``
        returning True ends the wait with `JobCancelled` (nothing has run).
        """
        me, told, since = threading.get_ident(), False, time.monotonic()
        while True:
            with self._free:
                if self._owner == me:
                    self._depth += 1
                    return
                if self._owner is None:
                    self._owner, self._depth, self.holder = me, 1, what
                    return
                if stop is not None and stop():
                    raise JobCancelled(f"{what} was not started: stopped while waiting for {self.holder}")
                holder = self.holder or "another job"
                if told or waiting is None or time.monotonic() - since < notice_after_s:
                    self._free.wait(STOP_POLL_S)
                    continue
            told = True
            waiting(holder)  # outside the lock: a status line or a warning may take its time

    def release(self) -> None:
        with self._free:
            if self._owner is None:
                return
            self._depth -= 1
            if self._depth <= 0:
                self._owner, self._depth, self.holder = None, 0, None
                self._free.notify_all()

    @contextlib.contextmanager
    def hold(self, what: str, stop=None, waiting: Callable[[str], None] | None = None, notice_after_s: float = 0.0):
        """The runner for the ``with`` block; `stop`: an Event or a callable that ends a wait."""
        self.acquire(what, lambda: stop_requested(stop), waiting, notice_after_s)
        try:
            yield
        finally:
            self.release()

    def held(self, what: str, items: Iterator, stop=None) -> Iterator:
        """`items` (a runner's loop) under the lock: taken at the first item, given back when it ends or is closed."""
        with self.hold(f"a call to {what}", stop, warn_waiting(what), CELL_NOTICE_AFTER_S):
            yield from items

    def call(self, what: str, job: Callable):
        """``job()`` under the lock."""
        with self.hold(f"a call to {what}", None, warn_waiting(what), CELL_NOTICE_AFTER_S):
            return job()


class JobCancelled(Exception):
    """A job stopped while it waited for the runner: nothing ran."""


def warn_waiting(what: str) -> Callable[[str], None]:
    """The notice a call from a cell gives when the runner is busy: it waits, and says for what."""

    def say(holder: str) -> None:
        warnings.warn(f"{what} waits for the runner, which is busy with {holder} (it goes on when that "
                      "ends; an explorer's Stop ends its job)", RuntimeWarning, stacklevel=user_stacklevel())

    return say


def user_stacklevel() -> int:
    """The stack level of the first caller outside the package (and contextlib's frames): a warning
    names the user's line, not a file of the package. (Python 3.12's skip_file_prefixes, for 3.10 too.)"""
    frame, level = sys._getframe(1), 1  # (the caller of this function is warnings.warn's caller)
    while frame is not None and (frame.f_code.co_filename.startswith(PACKAGE_DIR)
                                 or frame.f_code.co_filename == contextlib.__file__):
        frame, level = frame.f_back, level + 1
    return level


def stop_requested(stop) -> bool:
    """Whether `stop` (None, a threading.Event / asyncio.Event, or a callable) says stop."""
    if stop is None:
        return False
    is_set = getattr(stop, "is_set", None)  # threading.Event, asyncio.Event
    return bool(is_set() if callable(is_set) else stop())
