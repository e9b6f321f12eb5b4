"""What every runner shares: the generate / stream / score signature, progress and interruption
(what a call asks for, and its checks, are in `request.py`). A runner (local, server) implements only what differs:

- ``_prepare(req)``: check the prompt against the model (encode text or messages, check ids);
- ``_run(req, snapshots)``: a generator that yields a `Step` after each chunk of tokens it
  has on the host and returns the final `Trace`; it catches `INTERRUPTS` around its loop and
  returns the partial trace with ``finish_reason="interrupted"``;
- ``_score(req)``: the teacher-forced trace of the prompt.

``generate`` drives ``_run`` to its end; ``stream`` yields a snapshot per step and ends with
the same final trace, so the last item of ``stream(...)`` is what ``generate(...)`` returns.
"""

from __future__ import annotations

import inspect
import time
import warnings
from collections.abc import Iterator
from typing import Any

from ..records.fields import check_top_logprobs
from ..records.trace import Trace
from .jobs import jobs_of
from .jobs import stop_requested as _stop_requested
from .request import (
    Request,
    Sampling,
    Step,
    check_input,
    check_keywords,
    check_max_new_tokens,
    check_stop,
    check_stream_every,
    parse_sampling,
)

__all__ = ["Runner", "Request", "Sampling", "Step", "Interrupted", "INTERRUPTS", "parse_sampling", "check_top_logprobs"]

# generate / score show a progress bar only once they have run this long (tqdm's `delay`).
PROGRESS_AFTER_S = 2.0


class Interrupted(Exception):
    """Thrown into a runner's loop when the caller's ``stop`` says so (a Stop button, an Event)."""


# What ends a generation early but keeps what was generated.
INTERRUPTS = (KeyboardInterrupt, Interrupted)


def note_interrupt(error: BaseException) -> None:
    """Called by a runner that caught one of `INTERRUPTS`: Ctrl-C is worth a warning, a stop is not."""
    if isinstance(error, KeyboardInterrupt):
        warnings.warn("generation interrupted: the trace holds the tokens generated so far", stacklevel=3)


class _Progress:
    """A tqdm.auto bar (a notebook widget in Jupyter) that appears only after PROGRESS_AFTER_S."""

    def __init__(self, enabled: bool, total: int, unit: str = "tok", desc: str = "generating", tqdm_class=None):
        self.bar = None
        if enabled and total > 0:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm comes with the model extra; without it, no bar
                return
            tqdm = tqdm_class or tqdm  # (tqdm.auto: the notebook's bar in Jupyter, the terminal's elsewhere)
            self.bar = tqdm(total=total, unit=unit, desc=desc, delay=PROGRESS_AFTER_S, leave=False, dynamic_ncols=True)

    def update_to(self, n: int) -> None:
        if self.bar is not None and n > self.bar.n:
            self.bar.update(n - self.bar.n)  # tqdm shows tokens so far and tokens/s

    def finish(self) -> None:
        """The work ended as it should, before the total (a generation's end of sequence, a stop
        string): the total becomes the count, so the bar closes as done. Otherwise tqdm's notebook
        bar, closed short of its total, stays on screen in red as if it had failed."""
        if self.bar is not None:
            self.bar.total = self.bar.n

    def close(self) -> None:
        if self.bar is not None:
            if time.time() - self.bar.start_t >= self.bar.delay:  # tqdm times with time.time
                self.bar.refresh()  # the last count, which tqdm's rate limit may have held back
            container = getattr(self.bar, "container", None)  # tqdm.notebook's widget, once shown
            if container is not None and getattr(self.bar, "displayed", False):
                # Hidden, not closed: a page that draws the output later (Voila renders a cell's
                # outputs after it ran) would find its model gone and show "model not found".
                self.bar.leave = True
                self.bar.close()
                container.layout.display = "none"
                return
            self.bar.close()


class Runner:
    """The shared public API of the local and the server runners, with what a tree and the explorer
    ask of any runner: `max_top_logprobs`, `vocab_size`, `can_continue_from_ids`, `token_id`."""

    name: str = "?"
    can_continue_from_ids: bool = True  # prompt_ids= works (a branch needs it); a plain OpenAI API cannot
    vocab_size: int | None = None  # token ids are below it; None where the runner cannot know it
    top_logprobs_limit: str = "for this runner"  # whose limit check_top_logprobs's message names

    @property
    def max_top_logprobs(self) -> int:
        """The most alternatives per token this runner records (top_logprobs from 0 to this)."""
        raise NotImplementedError

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token of the model; else a ValueError."""
        raise ValueError(f"{self!r} cannot tell which token {text!r} is; give its id")
    # Whether this runner applies min_p (the local one does); a server runner that does not send
    # it yet refuses it rather than ignoring it silently.
    applies_min_p: bool = False

    # -- what a runner implements ------------------------------------------------------

    def _check_top_logprobs(self, top_logprobs) -> int:
        return check_top_logprobs(top_logprobs, self.max_top_logprobs, self.top_logprobs_limit)

    def _prepare(self, req: Request) -> None:
        raise NotImplementedError

    def _run(self, req: Request, snapshots: bool):
        raise NotImplementedError

    def _score(self, req: Request, bar: _Progress) -> Trace:
        raise NotImplementedError

    # -- public API --------------------------------------------------------------------

    def generate(
        self,
        prompt: str | None = None,
        *,
        messages: list[dict] | None = None,
        prompt_ids: list[int] | None = None,
        max_new_tokens: int = 32,
        temperature: float | None = None,
        top_p: float | None = None,
        top_k: int | None = None,
        min_p: float | None = None,
        do_sample: bool | None = None,
        seed: int | None = None,
        top_logprobs: int = 5,
        progress: bool = True,
        stop: Any = None,
    ) -> Trace:
        """Generate a continuation and record every token's logprob, rank, entropy and top-K.

        Give the prompt as a text, as chat ``messages`` (the model's chat template is applied)
        or as token ids (``prompt_ids=[...]``: exact at the token level, as a branch needs).
        The prompt's own tokens are scored too, so the trace holds prompt + completion
        (``prompt_len`` marks the prompt). Sampling happens when ``do_sample=True``, or when
        ``do_sample`` is not given and a temperature > 0, ``top_p``, ``top_k`` or ``min_p`` is;
        otherwise (and with temperature 0) decoding is greedy. ``min_p`` keeps the tokens whose
        probability is at least ``min_p`` times the top token's, after temperature (transformers'
        meaning; the local runner). ``seed`` makes sampling reproducible.

        A call that runs longer than about 2 s shows a progress bar (tokens so far, tokens/s);
        ``progress=False`` turns it off. Ctrl-C (KeyboardInterrupt), or ``stop`` (a
        threading.Event that gets set, or a callable that returns True) ends generation early
        and returns the tokens generated so far, with ``meta["finish_reason"] == "interrupted"``.
        A runner runs one job at a time (`logprob_viz.sources.jobs`): a call made while another
        thread's job runs on it (an explorer's) waits for that one, with a warning that says so.
        """
        req = self._make_request(locals())  # at this point locals() holds exactly generate's arguments
        *_, final = jobs_of(self).held("runner.generate", self._drive(req, snapshots=False), req.stop)  # final only
        return final

    def stream(self, prompt: str | None = None, *, progress: bool = False, stream_every: int | None = None,
               **generate_args: Any) -> Iterator[Trace]:
        """Like `generate`, as an iterator of growing `Trace` snapshots (prompt + generated so far).

        It takes `generate`'s arguments (with ``progress`` off by default) and ``stream_every``.
        The last item is the finished trace, equal to what `generate` returns with the same
        arguments (and seed). ``stream_every`` is the number of tokens per snapshot (default: 1
        on the CPU, a few on a GPU, where each snapshot waits for the device; on a server: a snapshot
        per that many stream chunks, or at most every 0.1 s). Snapshots are for reading: they
        share arrays with each other, and only the last item owns its own. Ctrl-C or ``stop``
        ends the stream with the partial trace. Arguments are checked when this is called.
        """
        check_keywords("stream", generate_args, Runner.generate, extra=("stream_every",))
        try:  # generate's signature is the one list of these arguments and their defaults
            bound = inspect.signature(Runner.generate).bind(self, prompt, progress=progress, **generate_args)
        except TypeError as error:  # (e.g. the prompt given twice)
            raise TypeError(f"stream() takes generate()'s arguments and stream_every: {error}") from None
        bound.apply_defaults()
        req = self._make_request(bound.arguments, stream_every)
        return jobs_of(self).held("runner.stream", self._drive(req, snapshots=True), req.stop)  # one job at a time

    def score(self, text: str | None = None, *, messages: list[dict] | None = None, prompt_ids: list[int] | None = None,
              top_logprobs: int = 5, progress: bool = True) -> Trace:
        """Score existing text token by token, teacher-forced: every token is a prompt token.

        ``prompt_len == len(trace)``; the first token has no preceding context, so its logprob
        is NaN and its rank 0. Long texts show a progress bar after about 2 s (``progress=False``
        turns it off).
        """
        check_input(text, messages, prompt_ids)
        k = self._check_top_logprobs(top_logprobs)
        req = Request(text=text, messages=messages, prompt_ids=prompt_ids, top_logprobs=k, progress=bool(progress),
                      scoring=True)
        self._prepare(req)
        # a server runner sends text as it is (no ids until the answer): no bar there
        bar = _Progress(req.progress and req.prompt_ids is not None, len(req.prompt_ids or ()), desc="scoring")
        started = time.perf_counter()
        try:
            trace = jobs_of(self).call("runner.score", lambda: self._score(req, bar))
        finally:
            bar.close()
        trace.meta.setdefault("seconds", round(time.perf_counter() - started, 4))
        return trace

    # -- shared machinery ----------------------------------------------------------------

    def _make_request(self, args: dict, stream_every: int | None = None) -> Request:
        """The checked request of a generate / stream call; `args` holds generate's arguments by name."""
        check_input(args["prompt"], args["messages"], args["prompt_ids"])
        k = self._check_top_logprobs(args["top_logprobs"])
        n = check_max_new_tokens(args["max_new_tokens"])
        seed = args["seed"]
        sampling = parse_sampling(args["temperature"], args["top_p"], args["top_k"], args["do_sample"], seed,
                                  args["min_p"])
        if sampling is not None and sampling.min_p > 0 and not self.applies_min_p:
            raise ValueError(f"min_p is applied by the local runner (lv.load()); {type(self).__name__} does not send "
                             "it to its server yet, so it would be ignored: leave min_p out here")
        check_stop(args["stop"])
        req = Request(text=args["prompt"], messages=args["messages"], prompt_ids=args["prompt_ids"], max_new_tokens=n,
                      sampling=sampling, seed=None if seed is None else int(seed), top_logprobs=k,
                      progress=bool(args["progress"]), stop=args["stop"], stream_every=check_stream_every(stream_every))
        self._prepare(req)
        return req

    def _drive(self, req: Request, snapshots: bool) -> Iterator[Trace]:
        """Run the runner's loop: progress, stop checks, and (when streaming) a snapshot per step.

        Yields the snapshots (when ``snapshots``), then the final trace.
        """
        started = time.perf_counter()
        loop = self._run(req, snapshots)
        bar = _Progress(req.progress, req.max_new_tokens)
        pending: BaseException | None = None  # an interrupt to hand to the runner's loop
        try:
            while True:
                try:
                    step = loop.throw(pending) if pending is not None else next(loop)
                except StopIteration as done:
                    final = done.value
                    bar.update_to(len(final) - final.prompt_len)  # the last chunk is not a step
                    if final.meta.get("finish_reason") not in ("interrupted", "error"):
                        bar.finish()  # (an end of sequence before max_new_tokens is a normal end)
                    break
                pending = None
                try:
                    bar.update_to(step.n_new)
                    if _stop_requested(req.stop):
                        pending = Interrupted("stopped by the caller")
                        continue
                    snapshot = step.snapshot() if snapshots else None
                except KeyboardInterrupt as error:  # Ctrl-C between two steps: the loop ends it
                    pending = error
                    continue
                if snapshot is not None:
                    yield snapshot
        finally:
            bar.close()
            loop.close()
        final.meta.setdefault("seconds", round(time.perf_counter() - started, 4))
        yield final
