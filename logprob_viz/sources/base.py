"""What every runner shares: the generate / stream / score signature, argument checks, sampling
settings, progress and interruption. A runner (local, server) implements only what differs:

- ``_prepare(req)``: check the prompt against the model (encode text or messages, check ids);
- ``_run(req, snapshots)``: a generator that yields a `Step` after each chunk of tokens it
  has on the host and returns the final `Trace`; it catches `INTERRUPTS` around its loop and
  returns the partial trace with ``finish_reason="interrupted"``;
- ``_score(req)``: the teacher-forced trace of the prompt.

``generate`` drives ``_run`` to its end; ``stream`` yields a snapshot per step and ends with
the same final trace, so the last item of ``stream(...)`` is what ``generate(...)`` returns.
"""

from __future__ import annotations

import math
import numbers
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..records.trace import Trace
from .jobs import jobs_of
from .jobs import stop_requested as _stop_requested

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


@dataclass(frozen=True)
class Sampling:
    """Validated sampling settings of a sampled (not greedy) generation."""

    temperature: float = 1.0
    top_k: int = 0
    top_p: float = 1.0
    seed: int | None = None
    # keep tokens with p >= min_p * p(top token), after temperature (transformers' MinPLogitsWarper); 0: off
    min_p: float = 0.0

    @property
    def changes_distribution(self) -> bool:
        """Whether the distribution sampled from differs from the model's own."""
        return self.temperature != 1.0 or self.top_k > 0 or self.top_p < 1.0 or self.min_p > 0.0


def is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def parse_sampling(temperature=None, top_p=None, top_k=None, do_sample=None, seed=None,
                   min_p=None) -> Sampling | None:
    """Validate sampling arguments; None means greedy decoding.

    Sampling happens when ``do_sample=True``, or when ``do_sample`` is not given and a
    temperature > 0, ``top_p``, ``top_k`` or ``min_p`` is; temperature 0 is always greedy.
    ``min_p`` keeps the tokens whose probability is at least ``min_p`` times the most likely
    token's, after temperature (as transformers' ``MinPLogitsWarper``); 0 turns it off.
    """
    if temperature is not None and (not _is_number(temperature) or temperature < 0 or not math.isfinite(temperature)):
        raise ValueError(f"temperature must be a number >= 0 (0 means greedy), got {temperature!r}")
    if top_p is not None and (not _is_number(top_p) or not 0 < top_p <= 1):
        raise ValueError(f"top_p must be in (0, 1], got {top_p!r}")
    if top_k is not None and (not is_int(top_k) or top_k < 0):
        raise ValueError(f"top_k must be an int >= 0 (0 means no top-k), got {top_k!r}")
    if min_p is not None and (not _is_number(min_p) or not 0 <= min_p <= 1):
        raise ValueError(f"min_p must be in [0, 1] (a fraction of the top token's probability; 0 means off), "
                         f"got {min_p!r}")
    if seed is not None and not is_int(seed):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
    if do_sample is None:
        do_sample = (temperature is not None and temperature > 0) or top_p is not None or bool(top_k) or bool(min_p)
    if not do_sample or temperature == 0:
        return None
    return Sampling(
        temperature=float(1.0 if temperature is None else temperature),
        top_k=int(top_k or 0),
        top_p=float(1.0 if top_p is None else top_p),
        seed=None if seed is None else int(seed),
        min_p=float(min_p or 0.0),
    )


@dataclass
class Request:
    """One checked generate / stream / score call. ``prompt_ids`` is filled by ``_prepare``."""

    text: str | None = None
    messages: list[dict] | None = None
    prompt_ids: list[int] | None = None
    max_new_tokens: int = 0
    sampling: Sampling | None = None
    seed: int | None = None
    top_logprobs: int = 5
    progress: bool = True
    stop: Any = None
    stream_every: int | None = None
    extra: dict = field(default_factory=dict)  # runner-specific state from _prepare

    def sampling_meta(self) -> dict:
        """The settings as recorded in ``trace.meta``."""
        s = self.sampling
        return {
            "max_new_tokens": self.max_new_tokens,
            "do_sample": s is not None,
            "temperature": None if s is None else s.temperature,
            "top_p": None if s is None else s.top_p,
            "top_k": None if s is None else s.top_k,
            "min_p": None if s is None else s.min_p,
            "seed": self.seed,
        }

    def input_meta(self) -> dict:
        if self.messages is not None:
            return {"messages": self.messages}
        if self.text is not None:
            return {"prompt": self.text}
        return {"prompt_ids": list(self.prompt_ids)}


@dataclass
class Step:
    """What a runner's loop reports after each chunk: tokens generated so far, and a snapshot."""

    n_new: int
    snapshot: Callable[[], Trace]


def check_input(text, messages, prompt_ids) -> None:
    """Exactly one of a text, chat messages or token ids, each well formed."""
    given = sum(x is not None for x in (text, messages, prompt_ids))
    if given != 1:
        raise ValueError(
            "give either a text (the first argument) or messages=[{'role': ..., 'content': ...}] "
            "(or prompt_ids=[...]), not both" + ("" if given else " and not none")
        )
    if messages is not None:
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and "role" in m and "content" in m for m in messages
        ):
            raise ValueError(
                "messages must be a list of dicts with 'role' and 'content', e.g. [{'role': 'user', 'content': 'Hi'}]"
            )
    elif text is not None:
        if not isinstance(text, str):
            raise TypeError(f"the text must be a str, got {type(text).__name__}")
        if not text:
            raise ValueError("the text is empty: give at least one character to start from")


def batch_items(text, messages, prompt_ids) -> list[dict] | None:
    """A list of inputs (texts, conversations, id lists) as one checked dict each; None for one input."""
    nested = [isinstance(x, (list, tuple)) and bool(x) and all(isinstance(e, (list, tuple)) for e in x)
              for x in (messages, prompt_ids)]  # a list of lists: many conversations / many id lists
    if isinstance(text, (list, tuple)):
        items = [{"text": x} for x in text]
    elif nested[0] or nested[1] or getattr(prompt_ids, "ndim", 1) == 2:
        items = [{"messages": list(m)} for m in messages] if nested[0] else [{"prompt_ids": p} for p in prompt_ids]
    else:
        return None
    if sum(x is not None for x in (text, messages, prompt_ids)) != 1 or not items:
        raise ValueError("give one non-empty list: of texts (the first argument), of messages=[...] or of prompt_ids")
    for i, item in enumerate(items):
        try:
            check_input(item.get("text"), item.get("messages"), item.get("prompt_ids"))
        except (TypeError, ValueError) as error:
            raise type(error)(f"item {i} of the list: {error}") from None
    return items


def check_prompt_ids(prompt_ids, vocab_size: int | None = None) -> list[int]:
    """Token ids as a prompt: a non-empty list of ints in the vocabulary."""
    if isinstance(prompt_ids, (str, bytes)) or not hasattr(prompt_ids, "__iter__"):
        raise TypeError(f"prompt_ids must be a list of token ids (ints), got {type(prompt_ids).__name__}")
    ids = list(prompt_ids.tolist() if hasattr(prompt_ids, "tolist") else prompt_ids)
    if not ids:
        raise ValueError("prompt_ids is empty: give at least one token id to start from")
    bad = [i for i in ids if not is_int(i) or i < 0 or (vocab_size is not None and i >= vocab_size)]
    if bad:
        where = "" if vocab_size is None else f" below the vocabulary size {vocab_size}"
        raise ValueError(f"prompt_ids must be ints >= 0{where}; got {bad[:5]!r}")
    return [int(i) for i in ids]


def check_top_logprobs(top_logprobs, maximum: int, where: str = "for this runner") -> int:
    """The one rule for ``top_logprobs``: 0 to the runner's `max_top_logprobs`; `where` names whose limit."""
    if not is_int(top_logprobs) or not 0 <= top_logprobs <= maximum:
        raise ValueError(f"top_logprobs must be an int between 0 and {maximum} {where}, got {top_logprobs!r}")
    return int(top_logprobs)


def check_max_new_tokens(max_new_tokens) -> int:
    if not is_int(max_new_tokens) or max_new_tokens < 0:
        raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
    return int(max_new_tokens)


def check_stream_every(stream_every) -> int | None:
    if stream_every is not None and (not is_int(stream_every) or stream_every < 1):
        raise ValueError(f"stream_every must be an int >= 1 (tokens per snapshot), got {stream_every!r}")
    return None if stream_every is None else int(stream_every)


def check_stop(stop) -> None:
    if stop is not None and not callable(stop) and not callable(getattr(stop, "is_set", None)):
        raise TypeError(
            f"stop must be a threading.Event or a callable returning True to stop, got {type(stop).__name__}"
        )


class _Progress:
    """A tqdm.auto bar (a notebook widget in Jupyter) that appears only after PROGRESS_AFTER_S."""

    def __init__(self, enabled: bool, total: int, unit: str = "tok", desc: str = "generating"):
        self.bar = None
        if enabled and total > 0:
            try:
                from tqdm.auto import tqdm
            except ImportError:  # tqdm comes with the model extra; without it, no bar
                return
            self.bar = tqdm(total=total, unit=unit, desc=desc, delay=PROGRESS_AFTER_S, leave=False, dynamic_ncols=True)

    def update_to(self, n: int) -> None:
        if self.bar is not None and n > self.bar.n:
            self.bar.update(n - self.bar.n)  # tqdm shows tokens so far and tokens/s

    def close(self) -> None:
        if self.bar is not None:
            if time.time() - self.bar.start_t >= self.bar.delay:  # tqdm times with time.time
                self.bar.refresh()  # the last count, which tqdm's rate limit may have held back
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
        req = self._make_request(prompt, messages, prompt_ids, max_new_tokens, temperature, top_p, top_k, do_sample,
                            seed, top_logprobs, progress, stop, None, min_p)
        *_, final = jobs_of(self).held("runner.generate", self._drive(req, snapshots=False), req.stop)  # final only
        return final

    def stream(
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
        progress: bool = False,
        stop: Any = None,
        stream_every: int | None = None,
    ) -> Iterator[Trace]:
        """Like `generate`, as an iterator of growing `Trace` snapshots (prompt + generated so far).

        The last item is the finished trace, equal to what `generate` returns with the same
        arguments (and seed). ``stream_every`` is the number of tokens per snapshot (default: 1
        on the CPU, a few on a GPU, where each snapshot waits for the device; on a server: a snapshot
        per that many stream chunks, or at most every 0.1 s). Snapshots are for reading: they
        share arrays with each other, and only the last item owns its own. Ctrl-C or ``stop``
        ends the stream with the partial trace. Arguments are checked when this is called.
        """
        req = self._make_request(prompt, messages, prompt_ids, max_new_tokens, temperature, top_p, top_k, do_sample,
                            seed, top_logprobs, progress, stop, stream_every, min_p)
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
        req = Request(text=text, messages=messages, prompt_ids=prompt_ids, top_logprobs=k, progress=bool(progress))
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

    def _make_request(self, text, messages, prompt_ids, max_new_tokens, temperature, top_p, top_k, do_sample, seed,
                 top_logprobs, progress, stop, stream_every, min_p=None) -> Request:
        check_input(text, messages, prompt_ids)
        k = self._check_top_logprobs(top_logprobs)
        n = check_max_new_tokens(max_new_tokens)
        sampling = parse_sampling(temperature, top_p, top_k, do_sample, seed, min_p)
        if sampling is not None and sampling.min_p > 0 and not self.applies_min_p:
            raise ValueError(f"min_p is applied by the local runner (lv.load()); {type(self).__name__} does not send "
                             "it to its server yet, so it would be ignored: leave min_p out here")
        check_stop(stop)
        req = Request(text=text, messages=messages, prompt_ids=prompt_ids, max_new_tokens=n, sampling=sampling,
                      seed=None if seed is None else int(seed), top_logprobs=k, progress=bool(progress), stop=stop,
                      stream_every=check_stream_every(stream_every))
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
