"""A corpus through a server: ``lv.connect(url).generate([...])`` / ``.score([...])`` → `lv.Corpus`.

The items go out as concurrent requests, at most ``concurrency`` at a time, so a batching server
(vLLM) runs them together on its side; the traces come back in input order. Without
``concurrency=``, the runner chooses the number (`inflight`: the server's own limit, or grown on
vLLM while tokens/s rises) and the corpus's meta says what it chose.

One job, many threads: the calling thread takes the runner's job lock once for the whole corpus
(`jobs_of(runner).call`), and the worker threads run the runner's engine per item (`sources.engine.drive`,
``engine.score_request``), which never takes the lock. Calling the public ``generate`` from a worker
would wait for the lock that the caller holds (it is re-entrant per thread only), so it would deadlock.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import threading
import time
import warnings

from ...records.corpus import Corpus
from ..engine import ServerEngine, drive, generate_arguments, make_request
from ..job_lock import STOP_POLL_S, stop_requested
from ..progress import INTERRUPTS, Interrupted, Progress
from ..request import Request, check_input, check_stop, is_int, item_seeds
from ..runner import Runner
from .inflight import DEFAULT_CONCURRENCY, Gate, InFlight

__all__ = ["CorpusIncomplete", "generate_corpus", "score_corpus", "DEFAULT_CONCURRENCY", "in_flight_plan"]


class CorpusIncomplete(RuntimeError):
    """An item's request failed: ``corpus`` holds the items finished before that, ``item`` which failed."""

    def __init__(self, message: str, corpus: Corpus, item: int):
        super().__init__(message)
        self.corpus, self.item = corpus, item


def generate_corpus(engine: ServerEngine, items: list[dict], *, concurrency: int | None = None, seed=None,
                    progress: bool = True, stop=None, **generate_args) -> Corpus:
    """Each item's `Runner.generate` (its arguments), sent concurrently; with ``seed=s`` item i gets s + i, and
    a list of seeds gives one per item (`request.item_seeds`)."""
    plan = in_flight_plan(engine, concurrency)
    check_stop(stop)
    seeds = item_seeds(seed, len(items))
    halt = threading.Event()  # Ctrl-C, the caller's stop, or a failure: no item starts after it
    reqs = []
    for i, (item, item_seed) in enumerate(zip(items, seeds, strict=True)):
        args = {"prompt": item.get("text"), "messages": item.get("messages"), "prompt_ids": item.get("prompt_ids"),
                **generate_args, "seed": item_seed, "progress": False, "stop": halt.is_set}
        try:
            bound = inspect.signature(Runner.generate).bind(None, **args)  # (self: unused)
            bound.apply_defaults()
            reqs.append(make_request(engine, **generate_arguments(bound)))
        except (TypeError, ValueError) as error:  # checked before anything is sent
            raise type(error)(f"item {i} of the list: {error}") from None

    def one(req: Request):
        req.extra["whole_answer"] = True  # one request per item (generate alone streams: see remote.openai)
        *_, final = drive(engine, req, snapshots=False)
        return final

    return _run_all(reqs, one, plan, progress, stop, halt, mode="generate")


def score_corpus(engine: ServerEngine, items: list[dict], *, concurrency: int | None = None, top_logprobs: int = 5,
                 progress: bool = True, stop=None) -> Corpus:
    """Each item's `Runner.score`, sent concurrently (a server that cannot score says so for item 0)."""
    plan = in_flight_plan(engine, concurrency)
    check_stop(stop)
    k = engine.check_top_logprobs(top_logprobs)
    reqs = []
    for i, item in enumerate(items):
        req = Request(**item, top_logprobs=k, progress=False, scoring=True)
        try:
            check_input(req.text, req.messages, req.prompt_ids)
            engine.prepare(req)
        except (TypeError, ValueError) as error:
            raise type(error)(f"item {i} of the list: {error}") from None
        reqs.append(req)

    def one(req: Request):
        started = time.perf_counter()
        trace = engine.score_request(req, Progress(False, 0))
        trace.meta.setdefault("seconds", round(time.perf_counter() - started, 4))
        return trace

    return _run_all(reqs, one, plan, progress, stop, threading.Event(), mode="score")


def in_flight_plan(engine: ServerEngine, concurrency) -> InFlight:
    """The caller's ``concurrency`` (fixed), or the engine's own plan when it is None."""
    if concurrency is None:
        return engine.in_flight()
    width = check_concurrency(concurrency)
    return InFlight.fixed(width, f"given (concurrency={width})")


def check_concurrency(concurrency) -> int:
    if not is_int(concurrency) or concurrency < 1:
        raise ValueError(f"concurrency must be an int >= 1 (requests in flight at once), got {concurrency!r}")
    return int(concurrency)


def _run_all(reqs: list[Request], one, plan: InFlight, progress: bool, stop, halt, mode: str) -> Corpus:
    """`one(req)` for every request, at most `plan`'s number at once (a `Gate`); the Corpus of what
    finished, in input order, its meta saying how many were in flight.

    ``halt`` is set by Ctrl-C (the caller's thread waits in short polls, so it sees it at once),
    by the caller's ``stop``, or by a failed request (in the worker, at once): no request starts
    after it, the running ones are waited for (a generate's also see it as their stop), and the
    corpus keeps every finished trace, with a warning that says how many; a failure raises
    `CorpusIncomplete` naming the item.
    """
    traces: list = [None] * len(reqs)
    started = time.perf_counter()
    gate = Gate(plan, halt)
    doing = "scoring" if mode == "score" else "generating"
    bar = Progress(bool(progress), len(reqs), unit="text", desc=_described(doing, gate))

    def guarded(req: Request):
        if (stop is not None and stop_requested(stop)) or not gate.enter():
            return None  # not run: the corpus is ending
        tokens = 0
        try:
            trace = one(req)
            tokens = len(trace)
            return trace
        except BaseException:
            halt.set()  # the server failed: send nothing more
            raise
        finally:
            gate.leave(tokens)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(plan.cap, len(reqs))),
                                                 thread_name_prefix="lv-corpus")
    futures = {pool.submit(guarded, req): i for i, req in enumerate(reqs)}
    failed: tuple[int, BaseException] | None = None
    interrupted: BaseException | None = None
    try:
        pending = set(futures)
        while pending and failed is None:
            if stop is not None and stop_requested(stop):
                raise Interrupted("stopped by the caller")
            done, pending = concurrent.futures.wait(pending, STOP_POLL_S, concurrent.futures.FIRST_EXCEPTION)
            failed = _collect(done, futures, traces, failed)
            bar.update_to(sum(t is not None for t in traces))
            if gate.tick(len(reqs)):
                bar.describe(_described(doing, gate))
    except INTERRUPTS as error:
        interrupted = error
    finally:
        halt.set()  # nothing more starts; a generate still running sees it as its stop
        pool.shutdown(wait=True, cancel_futures=True)  # the running requests end (or time out) within the job
        bar.close()
    failed = _collect([f for f in futures if f.done() and not f.cancelled()], futures, traces, failed)
    corpus = _corpus(traces, started, mode)
    corpus.meta.update(gate.meta())
    return _ended(corpus, len(reqs), failed, interrupted, stop)


def _ended(corpus: Corpus, asked: int, failed, interrupted, stop) -> Corpus:
    """The corpus of what finished, once every request has ended: a failed item raises (a refusal as
    itself, anything else as `CorpusIncomplete` holding the corpus); a stop or Ctrl-C warns how many
    of the `asked` items it holds."""
    kept = len(corpus)
    if failed is not None:
        i, error = failed
        if kept == 0 and isinstance(error, (TypeError, ValueError)):  # a refusal (this server cannot score)
            raise type(error)(f"item {i} of the list: {error}") from error
        raise CorpusIncomplete(f"item {i} of the list failed: {error} — error.corpus holds the {kept} of {asked} "
                               "items finished (the others were not run or were cut short); send the rest again "
                               "once the cause is fixed", corpus, i) from error
    if interrupted is None and stop is not None and kept < asked:
        interrupted = Interrupted("stopped by the caller")  # a worker saw the stop first
    if interrupted is not None:
        how = "interrupted" if isinstance(interrupted, KeyboardInterrupt) else "stopped"
        warnings.warn(f"{how}: the corpus holds the {kept} of {asked} items finished so far; the others were "
                      "not run", stacklevel=5)
    return corpus


def _collect(done, futures: dict, traces: list, failed):
    """Fill ``traces`` from finished futures; the first failure (lowest item) if there is one."""
    for future in done:
        i = futures[future]
        error = future.exception()
        if error is None:
            traces[i] = future.result()
        elif failed is None or i < failed[0]:
            failed = (i, error)
    return failed


def _described(doing: str, gate: Gate) -> str:
    return f"{doing}, {gate.width} in flight" + ("" if gate.settled else " (finding how many)")


def _corpus(traces: list, started: float, mode: str) -> Corpus:
    kept = [i for i, t in enumerate(traces) if t is not None]
    meta = {"mode": mode, "items_asked": len(traces), "seconds": round(time.perf_counter() - started, 4),
            "interrupted": len(kept) < len(traces)
            or any(traces[i].meta.get("finish_reason") == "interrupted" for i in kept)}
    return Corpus([traces[i] for i in kept], metadata=[{"index": i} for i in kept], meta=meta)
