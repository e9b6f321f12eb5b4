"""The engine under a runner's face, and the loop that drives it.

An engine (``runner.engine``: `local.engine.TransformersEngine`, a server's `remote.engine.RemoteEngine`)
implements `Engine`: ``prepare`` a request, run its ``steps``, ``score_request`` a prompt; the local
one adds what its batches call (`ModelEngine`), a server's what a corpus and ``choose`` call
(`ServerEngine`). `Capabilities` says what it can do. `make_request` turns `generate`'s arguments
into a checked, prepared `Request`, and `drive` runs an engine's steps with progress and stop checks:
``generate`` drives ``steps`` to its end; ``stream`` yields a snapshot per step and ends with the
same final trace, so the last item of ``stream(...)`` is what ``generate(...)`` returns. Neither takes
the runner's job lock (`runner.jobs_of`): the face holds it around a call, a corpus for all of its items.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from ..records.trace import Trace
from ..records.trace_fields import is_int
from .job_lock import stop_requested
from .progress import Interrupted, Progress
from .request import (
    Request,
    check_input,
    check_max_new_tokens,
    check_stop,
    parse_sampling,
)

__all__ = ["Capabilities", "Engine", "ModelEngine", "ServerEngine", "make_request", "drive", "generate_arguments"]


@dataclass(frozen=True)
class Capabilities:
    """What a runner can do, for the code around it (a tree, the explorer) and for a user who asks
    (``runner.capabilities``)."""

    max_top_logprobs: int  # the most alternatives per token it records (top_logprobs from 0 to this)
    top_logprobs_limit: str  # whose limit that is, in the words of check_top_logprobs's message
    vocab_size: int | None  # token ids are below it; None where the runner cannot know it
    can_continue_from_ids: bool  # prompt_ids= works (a branch needs it); a plain OpenAI API cannot
    # The model runs in this process (the local runner): its whole next-token distribution is at
    # hand (the explorer's pinned panel), and its first run pays one-time costs here (the warm-up).
    in_process: bool
    # Whether min_p is applied (the local runner); a server runner that does not send it yet
    # refuses it rather than ignoring it silently.
    applies_min_p: bool


class Engine(Protocol):
    """The steps under a runner's face (``runner.engine``), which `make_request` and `drive` run:

    - ``prepare(req)``: check the prompt against the model (encode text or messages, check ids);
    - ``steps(req, snapshots)``: a generator that yields a `Step` after each chunk of tokens it
      has on the host and returns the final `Trace`; it catches `INTERRUPTS` around its loop and
      returns the partial trace with ``finish_reason="interrupted"``;
    - ``score_request(req, bar)``: the teacher-forced trace of the prompt.

    None of them takes the runner's job lock: the face holds it around a call, a corpus for all its items.
    """

    name: str
    model: Any  # the transformers model here; the served model's name behind a server
    tokenizer: Any

    @property
    def device(self) -> Any: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def check_top_logprobs(self, top_logprobs) -> int:
        """`top_logprobs` checked against this engine's limit, as an int (else a ValueError)."""

    def token_id(self, text: str) -> int:
        """The id of `text` when it is exactly one token of the model; else a ValueError."""

    def prepare(self, req: Request) -> None:
        """Check `req`'s prompt against the model and fill ``req.prompt_ids`` where it can
        (a TypeError or ValueError that says what is wrong)."""

    def steps(self, req: Request, snapshots: bool) -> Any:
        """The generation loop of a prepared request: yields a `Step` per chunk, returns the Trace."""

    def score_request(self, req: Request, bar: Progress) -> Trace:
        """The teacher-forced trace of a prepared request's prompt (`bar` follows its progress)."""


class ModelEngine(Engine, Protocol):
    """What the local engine (`local.engine.TransformersEngine`) adds for the modules that run its model
    themselves: its batches (`local.batch`, `local.choose`), the recorder of a trace (`local.recording`),
    the lens and attribution (`local.lens`, `local.attribution`)."""

    sync_every: int | None  # decode steps between reads on the host; None: the device's default

    @property
    def vocab_size(self) -> int: ...

    @property
    def vocab(self) -> Any:
        """The display text of every token id (a `VocabTexts`), shared by every trace."""

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


class ServerEngine(Engine, Protocol):
    """What a server's engine (`remote.engine.RemoteEngine`) adds for a corpus sent through it
    (`remote.corpus`) and for ``choose`` (`remote.choose`)."""

    server: str  # which server: "openai", "vllm", "llama.cpp"
    base_url: str

    def in_flight(self) -> Any:
        """How many requests a corpus keeps in flight when the caller does not say (an `InFlight`)."""

    def check_choose(self) -> None:
        """Raise when this server cannot score given text (it returns no logprobs for the prompt)."""

    def choice_encoder(self, item: dict, where: str) -> tuple:
        """(the prompt's text, a function text -> token ids) with the server's own tokenizer."""

    def score_ids(self, rows: list[list[int]], k: int, scored_from: list[int] | None = None) -> list:
        """Each row of token ids scored teacher-forced: a Trace per row. ``scored_from[i]``: the
        tokens of row i before it (a choose's prompt) may stay unscored (llama.cpp pays per scored token)."""

    def unexpected(self, what: str) -> Exception:
        """The error for an answer this server should not have given (naming the server)."""


def make_request(engine: Engine, *, prompt: str | None, messages: list[dict] | None, prompt_ids: list[int] | None,
                 max_new_tokens: int, temperature: float | None, top_p: float | None, top_k: int | None,
                 min_p: float | None, do_sample: bool | None, seed: int | None, top_logprobs: int,
                 progress: bool, stop: Any, stream_every: int | None = None) -> Request:
    """The checked `Request` of `generate`'s arguments, prepared by `engine` (all given: their defaults are
    `generate`'s, see `generate_arguments`), and ``stream_every`` for a stream."""
    check_input(prompt, messages, prompt_ids)
    k = engine.check_top_logprobs(top_logprobs)
    n = check_max_new_tokens(max_new_tokens)
    sampling = parse_sampling(temperature, top_p, top_k, do_sample, seed, min_p)
    if sampling is not None and sampling.min_p > 0 and not engine.capabilities.applies_min_p:
        raise ValueError(f"min_p is applied by the local runner (lv.load()); this runner ({engine.name}) does not "
                         "send it to its server yet, so it would be ignored: leave min_p out here")
    check_stop(stop)
    req = Request(text=prompt, messages=messages, prompt_ids=prompt_ids, max_new_tokens=n, sampling=sampling,
                  seed=None if seed is None else int(seed), top_logprobs=k, progress=bool(progress), stop=stop,
                  stream_every=check_stream_every(stream_every))
    engine.prepare(req)
    return req


def check_stream_every(stream_every) -> int | None:
    if stream_every is not None and (not is_int(stream_every) or stream_every < 1):
        raise ValueError(f"stream_every must be an int >= 1 (tokens per snapshot), got {stream_every!r}")
    return None if stream_every is None else int(stream_every)


def drive(engine: Engine, req: Request, snapshots: bool) -> Iterator[Trace]:
    """Run the engine's `steps` on a prepared request: progress, stop checks, and (when streaming) a snapshot
    per step. Takes no job lock (`generate` and `stream` hold it around this; a corpus, for all
    of its items).

    Yields the snapshots (when ``snapshots``), then the final trace.
    """
    started = time.perf_counter()
    loop = engine.steps(req, snapshots)
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


def generate_arguments(bound: inspect.BoundArguments) -> dict:
    """`generate`'s arguments by name, from a binding of `Runner.generate` (its defaults applied)."""
    return {name: value for name, value in bound.arguments.items() if name != "self"}
