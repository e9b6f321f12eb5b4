"""What every runner shares: the generate / stream / score signature, progress and interruption
(what a call asks for, and its checks, are in `request.py`), its job lock (`jobs_of`; the lock
itself is in `jobs.py`), and the declared interface that the modules around a runner use
(`Runner`: its public methods, and the few more that `ModelRunner` and `ServerRunner` add).
A runner (local, server) implements only what differs:

- ``prepare(req)``: check the prompt against the model (encode text or messages, check ids);
- ``steps(req, snapshots)``: a generator that yields a `Step` after each chunk of tokens it
  has on the host and returns the final `Trace`; it catches `INTERRUPTS` around its loop and
  returns the partial trace with ``finish_reason="interrupted"``;
- ``score_request(req, bar)``: the teacher-forced trace of the prompt.

``generate`` drives ``steps`` to its end (`Runner.drive`); ``stream`` yields a snapshot per step and
ends with the same final trace, so the last item of ``stream(...)`` is what ``generate(...)`` returns.
"""

from __future__ import annotations

import inspect
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any, Protocol

from ..records.fields import check_top_logprobs
from ..records.trace import Trace
from .jobs import RunnerJobs, stop_requested
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

__all__ = ["Runner", "jobs_of", "ModelRunner", "ServerRunner", "Request", "Sampling", "Step", "Interrupted",
           "INTERRUPTS", "Progress", "parse_sampling", "check_top_logprobs"]

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


class Progress:
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

    def describe(self, desc: str) -> None:
        """A new label for the bar (a corpus on a server: how many requests are in flight)."""
        if self.bar is not None:
            self.bar.set_description(desc, refresh=False)

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
    """The shared public API of the local and the server runners, and the interface that the modules
    around a runner use.

    A tree and the explorer ask of any runner: `max_top_logprobs`, `vocab_size`,
    `can_continue_from_ids`, `in_process`, `token_id`, `generate`, `stream`, `score`. A batch or a
    server corpus (`local.batch`, `remote.corpus`, the ``choose`` modules) runs the items itself
    through the per-item path, which takes no job lock (the caller holds it for the whole corpus):
    `check_top_logprobs`, `make_request`, `prepare`, `drive`, `score_request`. What the local
    runner adds for its batches is `ModelRunner`; what a server runner adds, `ServerRunner`.
    """

    name: str = "?"
    can_continue_from_ids: bool = True  # prompt_ids= works (a branch needs it); a plain OpenAI API cannot
    vocab_size: int | None = None  # token ids are below it; None where the runner cannot know it
    top_logprobs_limit: str = "for this runner"  # whose limit check_top_logprobs's message names
    # The model runs in this process (the local runner): its whole next-token distribution is at
    # hand (the explorer's pinned panel), and its first run pays one-time costs here (the warm-up).
    in_process: bool = False
    # Whether this runner applies min_p (the local one does); a server runner that does not send
    # it yet refuses it rather than ignoring it silently.
    applies_min_p: bool = False

    @property
    def max_top_logprobs(self) -> int:
        """The most alternatives per token this runner records (top_logprobs from 0 to this)."""
        raise NotImplementedError

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token of the model; else a ValueError."""
        raise ValueError(f"{self!r} cannot tell which token {text!r} is; give its id")

    # -- what a runner implements ------------------------------------------------------

    def check_top_logprobs(self, top_logprobs) -> int:
        """`top_logprobs` checked against this runner's limit, as an int (else a ValueError)."""
        return check_top_logprobs(top_logprobs, self.max_top_logprobs, self.top_logprobs_limit)

    def prepare(self, req: Request) -> None:
        """Check `req`'s prompt against the model and fill ``req.prompt_ids`` where it can
        (a TypeError or ValueError that says what is wrong)."""
        raise NotImplementedError

    def steps(self, req: Request, snapshots: bool):
        """The generation loop of a prepared request: yields a `Step` per chunk, returns the Trace."""
        raise NotImplementedError

    def score_request(self, req: Request, bar: Progress) -> Trace:
        """The teacher-forced trace of a prepared request's prompt (`bar` follows its progress)."""
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
        req = self.make_request(prompt=prompt, messages=messages, prompt_ids=prompt_ids, max_new_tokens=max_new_tokens,
                                temperature=temperature, top_p=top_p, top_k=top_k, min_p=min_p, do_sample=do_sample,
                                seed=seed, top_logprobs=top_logprobs, progress=progress, stop=stop)
        *_, final = jobs_of(self).held("runner.generate", self.drive(req, snapshots=False), req.stop)  # final only
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
        req = self.make_request(**generate_arguments(bound), stream_every=stream_every)
        return jobs_of(self).held("runner.stream", self.drive(req, snapshots=True), req.stop)  # one job at a time

    def score(self, text: str | None = None, *, messages: list[dict] | None = None, prompt_ids: list[int] | None = None,
              top_logprobs: int = 5, progress: bool = True) -> Trace:
        """Score existing text token by token, teacher-forced: every token is a prompt token.

        ``prompt_len == len(trace)``; the first token has no preceding context, so its logprob
        is NaN and its rank 0. Long texts show a progress bar after about 2 s (``progress=False``
        turns it off).
        """
        check_input(text, messages, prompt_ids)
        k = self.check_top_logprobs(top_logprobs)
        req = Request(text=text, messages=messages, prompt_ids=prompt_ids, top_logprobs=k, progress=bool(progress),
                      scoring=True)
        self.prepare(req)
        # a server runner sends text as it is (no ids until the answer): no bar there
        bar = Progress(req.progress and req.prompt_ids is not None, len(req.prompt_ids or ()), desc="scoring")
        started = time.perf_counter()
        try:
            trace = jobs_of(self).call("runner.score", lambda: self.score_request(req, bar))
        finally:
            bar.close()
        trace.meta.setdefault("seconds", round(time.perf_counter() - started, 4))
        return trace

    # -- shared machinery ----------------------------------------------------------------

    def make_request(self, *, prompt: str | None, messages: list[dict] | None, prompt_ids: list[int] | None,
                     max_new_tokens: int, temperature: float | None, top_p: float | None, top_k: int | None,
                     min_p: float | None, do_sample: bool | None, seed: int | None, top_logprobs: int,
                     progress: bool, stop: Any, stream_every: int | None = None) -> Request:
        """The checked, prepared `Request` of `generate`'s arguments (all given: their defaults are
        `generate`'s, see `generate_arguments`), and ``stream_every`` for a stream."""
        check_input(prompt, messages, prompt_ids)
        k = self.check_top_logprobs(top_logprobs)
        n = check_max_new_tokens(max_new_tokens)
        sampling = parse_sampling(temperature, top_p, top_k, do_sample, seed, min_p)
        if sampling is not None and sampling.min_p > 0 and not self.applies_min_p:
            raise ValueError(f"min_p is applied by the local runner (lv.load()); {type(self).__name__} does not send "
                             "it to its server yet, so it would be ignored: leave min_p out here")
        check_stop(stop)
        req = Request(text=prompt, messages=messages, prompt_ids=prompt_ids, max_new_tokens=n, sampling=sampling,
                      seed=None if seed is None else int(seed), top_logprobs=k, progress=bool(progress), stop=stop,
                      stream_every=check_stream_every(stream_every))
        self.prepare(req)
        return req

    def drive(self, req: Request, snapshots: bool) -> Iterator[Trace]:
        """Run `steps` on a prepared request: progress, stop checks, and (when streaming) a snapshot
        per step. Takes no job lock (`generate` and `stream` hold it around this; a corpus, for all
        of its items).

        Yields the snapshots (when ``snapshots``), then the final trace.
        """
        started = time.perf_counter()
        loop = self.steps(req, snapshots)
        bar = Progress(req.progress, req.max_new_tokens)
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
                    if stop_requested(req.stop):
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



_CREATE_JOBS = threading.Lock()


def jobs_of(runner) -> RunnerJobs | None:
    """The runner's job lock (`jobs.RunnerJobs`, made on first use); None for an object that is no
    runner of ours."""
    if not isinstance(runner, Runner):
        return None
    jobs = runner.__dict__.get("_jobs")
    if jobs is None:
        with _CREATE_JOBS:  # two threads asking at once get the same lock
            jobs = runner.__dict__.setdefault("_jobs", RunnerJobs())
    return jobs


class ModelRunner(Protocol):
    """What the local runner (`local.runner.TransformersRunner`) adds to `Runner` for the modules that
    run its model themselves: its batches (`local.batch`, `local.choose`), the recorder of a trace
    (`local.recording`) and attribution (`local.attribution`)."""

    model: Any  # the transformers model, and its tokenizer
    tokenizer: Any
    name: str
    sync_every: int | None  # decode steps between reads on the host; None: the device's default

    @property
    def device(self) -> Any: ...

    @property
    def vocab_size(self) -> int: ...

    def trace_meta(self, k: int) -> dict:
        """What every trace of this runner records in ``meta`` (source, model, device, dtype, K)."""

    def eos_ids(self) -> list[int]:
        """The token ids that end a generation."""

    def forward(self, input_ids, cache=None, **inputs) -> tuple:
        """One forward pass with the KV cache (``inputs``: attention_mask, position_ids): (logits, cache)."""

    def text_of(self, token_id: int) -> str:
        """A token's display text (one shared str per vocabulary id)."""

    def bytes_of(self, token_id: int) -> bytes:
        """A token's exact bytes."""


class ServerRunner(Protocol):
    """What a server's runner (`remote.base.RemoteRunner`) adds to `Runner` for a corpus sent through
    it (`remote.corpus`) and for ``choose`` (`remote.choose`)."""

    server: str  # which server: "openai", "vllm", "llama.cpp"
    model: str
    base_url: str

    def in_flight(self) -> Any:
        """How many requests a corpus keeps in flight when the caller does not say (an `InFlight`)."""

    def check_choose(self) -> None:
        """Raise when this server cannot score given text (it returns no logprobs for the prompt)."""

    def choice_encoder(self, item: dict, where: str) -> tuple:
        """(the prompt's text, a function text -> token ids) with the server's own tokenizer."""

    def score_ids(self, rows: list[list[int]], k: int) -> list:
        """One request that scores each row of token ids teacher-forced: a Trace per row."""

    def unexpected(self, what: str) -> Exception:
        """The error for an answer this server should not have given (naming the server)."""


def generate_arguments(bound: inspect.BoundArguments) -> dict:
    """`generate`'s arguments by name, from a binding of `Runner.generate` (its defaults applied)."""
    return {name: value for name, value in bound.arguments.items() if name != "self"}
