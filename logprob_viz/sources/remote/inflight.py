"""How many requests a corpus keeps in flight on a server, when the caller does not say.

A batching server (vLLM) runs the requests it holds together, so too few in flight leave its
batches short (8 in flight gave 0.79x of vLLM's own offline speed on the project's CPU server),
and too many only queue there while the client and the server's API process compete for the
same CPU. The best number depends on the server, its hardware and the texts, so the runner
finds it (`plan_of` asks the runner; `Gate` applies the plan):

- a server that says its limit uses it, fixed: llama.cpp's ``/props`` ``total_slots`` (its
  ``--parallel``: more requests only wait for a slot); vLLM's ``/server_info`` (served only in
  its development mode) gives ``max_num_seqs``, which caps the search below;
- on vLLM the number is grown while the tokens/s it gives rises: it starts at `START`, and after
  each window (at least `WINDOW_ROUNDS` x the number in flight finished, and `WINDOW_S` seconds)
  it doubles if the window's tokens/s beat the previous one's by `RISE`, else it settles on the
  best number measured, for the rest of the corpus;
- any other server (the OpenAI API: rate limits are per account) keeps `DEFAULT_CONCURRENCY`.

What was chosen and why is in the corpus's ``meta["concurrency"]`` (the number that finished
the corpus), ``meta["concurrency_how"]`` and, when grown, ``meta["concurrency_tried"]``
(tokens/s for each number tried); the progress bar names it too.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from ..job_lock import STOP_POLL_S

__all__ = ["InFlight", "Gate", "DEFAULT_CONCURRENCY", "START", "RISE"]

# A server we know nothing about: enough for a batching server to fill a batch, few enough not
# to queue a whole corpus on one server (or trip an API's rate limit).
DEFAULT_CONCURRENCY = 8
START = 16  # where a search starts: twice the old fixed default, so the first doubling is cheap to test
SEARCH_CAP = 256  # vLLM's default max_num_seqs on a GPU (128 for its CPU server): more only queues
RISE = 1.05  # a doubling must give 5 % more tokens/s to be kept (less is within the noise)
WINDOW_ROUNDS = 2  # a window holds this many rounds of the number in flight (continuous batching blurs one)
WINDOW_S = 2.0  # and lasts at least this long, so a burst of completions is not a rate


@dataclass
class InFlight:
    """A runner's plan: ``start`` in flight, grown up to ``cap`` when ``adaptive``; ``how`` says why."""

    start: int
    cap: int
    adaptive: bool
    how: str

    @classmethod
    def fixed(cls, width: int, how: str) -> InFlight:
        return cls(width, width, False, how)


@dataclass
class _Window:
    width: int
    started: float
    done: int = 0
    tokens: int = 0


@dataclass
class Gate:
    """At most ``width`` requests run at once; with an adaptive plan, `tick` moves ``width``.

    Worker threads call `enter` before a request (it waits for a free place, False once ``halt``
    is set) and `leave` after it with the tokens it brought; the caller's thread calls `tick`
    as it polls. ``tried`` holds tokens/s per number in flight measured so far.
    """

    plan: InFlight
    halt: threading.Event
    width: int = 0
    settled: bool = False
    tried: dict = field(default_factory=dict)

    def __post_init__(self):
        self.width = self.plan.start
        self.settled = not self.plan.adaptive or self.plan.start >= self.plan.cap
        self._cond = threading.Condition()
        self._running = self.entered = 0
        self._window = _Window(self.width, time.perf_counter())
        self._previous: float | None = None  # tokens/s of the window before this one

    def enter(self) -> bool:
        with self._cond:
            while self._running >= self.width and not self.halt.is_set():
                self._cond.wait(STOP_POLL_S)  # (halt is an Event, not this condition: look again soon)
            if self.halt.is_set():
                return False
            self._running += 1
            self.entered += 1
            return True

    def leave(self, tokens: int) -> None:
        with self._cond:
            self._running -= 1
            self._window.done += 1
            self._window.tokens += tokens
            self._cond.notify_all()

    def tick(self, total: int) -> bool:
        """Close the window when it is due and move the width; True when it changed.

        ``total``: the corpus's requests. With fewer than a window's worth not started yet, the
        search ends where it is (what is left would not tell the numbers apart).
        """
        if self.settled:
            return False
        with self._cond:
            w, now = self._window, time.perf_counter()
            if w.done < WINDOW_ROUNDS * w.width or now - w.started < WINDOW_S:
                return False
            rate = w.tokens / (now - w.started)
            self.tried[w.width] = round(rate, 1)
            rose = self._previous is None or rate >= self._previous * RISE
            wider = min(2 * w.width, self.plan.cap)
            if rose and wider > w.width and total - self.entered >= WINDOW_ROUNDS * wider:
                self.width, self._previous = wider, rate
            else:
                self.width = max(self.tried, key=self.tried.get)
                self.settled = True
            self._window = _Window(self.width, now)
            self._cond.notify_all()
            return self.width != w.width

    def meta(self) -> dict:
        """What the corpus's meta says of it."""
        out = {"concurrency": self.width, "concurrency_how": self.plan.how}
        if self.plan.adaptive:
            out["concurrency_tried"] = {str(k): v for k, v in self.tried.items()}
        return out
