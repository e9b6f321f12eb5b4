"""The user's face of every runner (`Runner`): generate / stream / score, and what describes the
runner (``model``, ``tokenizer``, ``name``, ``device``, ``capabilities``), over ``runner.engine``
(`engine.Engine`), which holds the steps those calls drive. Each runner (`local.runner`,
`remote.runner`) adds ``choose`` and the batched lists; `jobs_of` is its job lock (the lock itself
is in `job_lock`), and `check_keywords` names a wrong keyword as the user gave it.
"""

from __future__ import annotations

import difflib
import inspect
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from ..records.trace import Trace
from .engine import Capabilities, Engine, drive, generate_arguments, make_request
from .job_lock import RunnerJobs
from .progress import Progress
from .request import Request, check_input

__all__ = ["Runner", "jobs_of", "check_keywords"]


class Runner:
    """The user's face of every runner (local, server): what a user calls, over ``runner.engine``.

    ``generate``, ``stream`` and ``score`` are here, for every runner; ``choose`` and the batched
    lists are each runner's own; ``lens`` and ``attribute`` need the model in this process (the
    local runner). ``model``, ``tokenizer``, ``name``, ``device`` and ``capabilities`` describe what
    runs; the steps the calls drive (`Engine`) are on ``engine``.
    """

    engine: Engine

    @property
    def name(self) -> str:
        return self.engine.name

    @name.setter
    def name(self, name: str) -> None:  # a trace's meta["model"] says it (lv.load names the second model)
        self.engine.name = name

    @property
    def model(self) -> Any:
        """The model: the transformers object here, the served model's name behind a server."""
        return self.engine.model

    @property
    def tokenizer(self) -> Any:
        """The model's transformers tokenizer (behind a server: ``connect(tokenizer=)``'s, or None)."""
        return self.engine.tokenizer

    @property
    def device(self) -> Any:
        """Where the model runs: a torch.device in this process, None behind a server."""
        return self.engine.device

    @property
    def capabilities(self) -> Capabilities:
        """What this runner can do: how many alternatives per token, ids as a prompt, min_p, in process."""
        return self.engine.capabilities

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token of the model; else a ValueError."""
        return self.engine.token_id(text)

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
        A runner runs one job at a time (`logprob_viz.sources.job_lock`): a call made while another
        thread's job runs on it (an explorer's) waits for that one, with a warning that says so.
        """
        req = make_request(self.engine, prompt=prompt, messages=messages, prompt_ids=prompt_ids,
                           max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p, top_k=top_k,
                           min_p=min_p, do_sample=do_sample, seed=seed, top_logprobs=top_logprobs, progress=progress,
                           stop=stop)
        run = drive(self.engine, req, snapshots=False)
        *_, final = jobs_of(self).held("runner.generate", run, req.stop)  # the final trace only
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
        req = make_request(self.engine, **generate_arguments(bound), stream_every=stream_every)
        run = drive(self.engine, req, snapshots=True)
        return jobs_of(self).held("runner.stream", run, req.stop)  # one job at a time

    def score(self, text: str | None = None, *, messages: list[dict] | None = None, prompt_ids: list[int] | None = None,
              top_logprobs: int = 5, progress: bool = True) -> Trace:
        """Score existing text token by token, teacher-forced: every token is a prompt token.

        ``prompt_len == len(trace)``; the first token has no preceding context, so its logprob
        is NaN and its rank 0. Long texts show a progress bar after about 2 s (``progress=False``
        turns it off).
        """
        check_input(text, messages, prompt_ids)
        engine = self.engine
        k = engine.check_top_logprobs(top_logprobs)
        req = Request(text=text, messages=messages, prompt_ids=prompt_ids, top_logprobs=k, progress=bool(progress),
                      scoring=True)
        engine.prepare(req)
        # a server runner sends text as it is (no ids until the answer): no bar there
        bar = Progress(req.progress and req.prompt_ids is not None, len(req.prompt_ids or ()), desc="scoring")
        started = time.perf_counter()
        try:
            trace = jobs_of(self).call("runner.score", lambda: engine.score_request(req, bar))
        finally:
            bar.close()
        trace.meta.setdefault("seconds", round(time.perf_counter() - started, 4))
        return trace

    def choose(self, prompt=None, options=None, **options_of_choose):
        """The probability of each given option after the prompt: an `lv.Choices` (each runner's own)."""
        raise NotImplementedError

    def lens(self, text_or_trace, **options):
        """Per-layer next-token predictions: they read the model's layers, which only a model in this
        process has."""
        raise ValueError(f"the logit lens reads the model's layers, which {self!r} does not hold; load the model "
                         "here: lv.load(...).lens(text)")

    def attribute(self, trace, **options):
        """Why a token: gradients or occlusion through the model, which only a model in this process allows."""
        raise ValueError(f"attribution runs the model backwards, which {self!r} cannot do; load the model here: "
                         "lv.load(...).attribute(trace, at=...)")


def check_keywords(call: str, given: dict, *takers: Callable, extra=()) -> None:
    """Keyword arguments that none of `takers` (the functions the call goes on to) accepts, named as
    the user gave them to `call` ("score", "generate", "stream"), with what the call does take:
    a TypeError from deep inside would name an internal function instead (``score_batch()``)."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    internal = {"self", "runner", "items", "req"}
    takes = {p.name for f in takers for p in inspect.signature(f).parameters.values() if p.kind in kinds} | set(extra)
    takes -= internal
    unknown = [name for name in given if name not in takes]
    if not unknown:
        return
    name = unknown[0]
    close = difflib.get_close_matches(name, sorted(takes), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise TypeError(f"{call}() got an unexpected keyword argument {name!r}{hint}; {call}() takes "
                    f"{', '.join(sorted(takes))}: leave {name!r} out or use one of those")


_CREATE_JOBS = threading.Lock()


def jobs_of(runner) -> RunnerJobs | None:
    """The runner's job lock (`job_lock.RunnerJobs`, made on first use); None for an object that is no
    runner of ours."""
    if not isinstance(runner, Runner):
        return None
    jobs = runner.__dict__.get("_jobs")
    if jobs is None:
        with _CREATE_JOBS:  # two threads asking at once get the same lock
            jobs = runner.__dict__.setdefault("_jobs", RunnerJobs())
    return jobs
