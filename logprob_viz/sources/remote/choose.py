"""``engine.choose`` on a server: each option scored after its prompt by the server's own prompt logprobs.

The prompt and each option are split into tokens as lm-eval does (`sources.choose`), with the
server's own tokenizer (its ``/tokenize``, or ``connect(tokenizer=)``); then one request per
prompt scores all its options: a ``/completions`` request whose ``prompt`` is the list of
prompt + option token ids, with ``echo``, ``max_tokens`` 0 and ``prompt_logprobs`` (vLLM). The
server batches the options of a request together, and prompts go out concurrently (at most
``concurrency`` requests at once). llama.cpp has no prompt logprobs: its engine forces each option
after the prompt instead (`llamacpp_score`: the prompt's tokens stay unscored, its KV cache is
reused by every option). A server that returns no logprobs for given tokens at all (the OpenAI API,
Ollama, ...) cannot score a given answer: its runner refuses with what to use instead.
"""

from __future__ import annotations

import concurrent.futures
import time

from ...records.choices import Choices, check_length
from ..choose import ChoiceInput, choice_inputs, choices_of, fill_pairs, input_meta, mark_straddle
from ..engine import ServerEngine
from ..progress import Progress
from .corpus import DEFAULT_CONCURRENCY, check_concurrency

__all__ = ["choose"]


def choose(engine: ServerEngine, prompt=None, options=None, *, messages=None, top_logprobs: int = 5,
           length: str = "sum", gold=None, concurrency: int | None = None, progress: bool = True,
           strict: bool = False) -> Choices:
    """See `RemoteRunner.choose`."""
    engine.check_choose()  # a server without prompt logprobs says so before anything else
    k = engine.check_top_logprobs(top_logprobs)
    length = check_length(length)
    width = check_concurrency(DEFAULT_CONCURRENCY if concurrency is None else concurrency)
    inputs, options, single = choice_inputs(prompt, messages, options)
    started = time.perf_counter()

    def one(i: int) -> list:
        where = "" if single else f"prompt {i} of the list: "
        item = inputs[i]
        item.text, encode = engine.choice_encoder(item.item, where)
        fill_pairs(item, encode, where)
        return _score_options(engine, item, k)

    traces: list = [None] * len(inputs)
    bar = Progress(bool(progress), len(inputs), unit="prompt", desc="choosing")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=min(width, len(inputs))) as pool:
            futures = {pool.submit(one, i): i for i in range(len(inputs))}
            try:
                for done in concurrent.futures.as_completed(futures):
                    traces[futures[done]] = done.result()
                    bar.update_to(sum(t is not None for t in traces))
            except BaseException:
                for f in futures:
                    f.cancel()  # nothing new starts after a failure or Ctrl-C
                raise
    finally:
        bar.close()
    meta = {"source": engine.server, "model": engine.model, "base_url": engine.base_url, "top_logprobs": k,
            "mode": "choose", "seconds": round(time.perf_counter() - started, 4)}
    return choices_of(inputs, options, traces, length=length, gold=gold, single=single, meta=meta, strict=strict)


def _score_options(engine, item: ChoiceInput, k: int) -> list:
    """One request for all of a prompt's options: one trace per option, its prompt_len the prompt's."""
    rows = [pair.context + pair.option for pair in item.pairs]
    scored = engine.score_ids(rows, k, [len(pair.context) for pair in item.pairs])
    out = []
    for option, pair, trace, ids in zip(item.options, item.pairs, scored, rows, strict=True):
        if trace.token_ids.tolist() != ids:
            raise engine.unexpected(f"scored other tokens than the ones sent for the option {option!r} "
                                     f"({trace.token_ids.tolist()[:8]}... for {ids[:8]}...)")
        trace.prompt_len = len(pair.context)  # the option's tokens are the trace's completion
        trace.meta.update({"base_url": engine.base_url, "mode": "choose", "option": option, **input_meta(item)})
        mark_straddle(trace, pair)
        out.append(trace)
    return out
