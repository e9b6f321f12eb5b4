"""Batched forward passes of the local runner: ``runner.score([...])`` and ``runner.generate([...])``.

For short texts a forward pass costs about the same whatever its length (the weights are read
once per call), so many texts go through the model together. Texts are sorted by length and
cut into batches of at most ``batch_tokens`` padded tokens (less padding, bounded memory: the
logits of a batch are batch_tokens x vocab floats); the traces come back in input order.

Scoring pads on the right: with a causal mask a real token never sees a later pad. Generation
pads on the left, so every row's next token is the last column; the attention mask hides the
pads and the position ids count only real tokens, so each row sees exactly what it would alone.
Every position is summarised with the same `distribution` functions as one trace at a time, and
only O(K) per token leaves the device: memory is O(N*K), never O(N*vocab).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import torch

from ...records.corpus import Corpus
from ..engine import ModelEngine
from ..job_lock import stop_requested
from ..progress import INTERRUPTS, Interrupted, Progress
from ..request import Request, check_max_new_tokens, check_prompt_ids, check_stop, is_int, item_seeds, parse_sampling
from .distribution import process, summarize, summarize_rows, to_host
from .recording import Recorder

__all__ = ["score_batch", "generate_batch", "BATCH_TOKENS_CPU", "BATCH_TOKENS_GPU"]

# Padded tokens per batch, for a 49k vocabulary (the default model's): on the CPU 1024 x 49k
# float32 logits are 200 MB, and larger batches are no faster (benchmarks/corpus.py); a GPU
# wants more rows per call. A model with a bigger vocabulary gets proportionally fewer tokens,
# so the logits of a batch stay the same size (Gemma 3's 262k vocabulary: 192 tokens).
BATCH_TOKENS_CPU = 1024
BATCH_TOKENS_GPU = 16384
_REFERENCE_VOCAB = 49152


def score_batch(engine: ModelEngine, items: list[dict], *, top_logprobs: int = 5, progress: bool = True,
                batch_tokens: int | None = None, stop=None) -> Corpus:
    """Teacher-forced traces of many inputs (dicts with one of text / messages / prompt_ids).

    ``stop`` (a threading.Event or a callable), checked between batches, ends early like Ctrl-C.
    """
    k = engine.check_top_logprobs(top_logprobs)
    check_stop(stop)
    reqs = _prepare_all(engine, items, k, max_new_tokens=0, scoring=True)

    def score_one(batch: list[int], traces: list) -> None:
        if stop_requested(stop):
            raise Interrupted("stopped by the caller")
        for i, trace in zip(batch, _score_one_batch(engine, [reqs[i] for i in batch], k), strict=True):
            traces[i] = trace

    lengths = [len(r.prompt_ids) for r in reqs]
    return _in_batches(score_one, lengths, check_budget(engine, batch_tokens), progress, mode="score")


def generate_batch(engine: ModelEngine, items: list[dict], *, max_new_tokens: int = 32, temperature=None, top_p=None,
                   top_k=None, do_sample=None, seed=None, top_logprobs: int = 5, progress: bool = True,
                   batch_tokens: int | None = None, stop=None) -> Corpus:
    """Continuations of many prompts, decoded together; each row stops on its own (EOS or length).

    Seeds: with ``seed=s``, item ``i`` is sampled with seed ``s + i`` (its position in the input
    list), so it equals ``runner.generate(item_i, seed=s + i)``; a list of seeds gives one per item.
    ``stop`` (a threading.Event or a callable), checked after every decode step, ends early like Ctrl-C.
    """
    k = engine.check_top_logprobs(top_logprobs)
    check_stop(stop)
    n_new = check_max_new_tokens(max_new_tokens)
    seeds = item_seeds(seed, len(items))
    sampling = parse_sampling(temperature, top_p, top_k, do_sample, seeds[0])
    reqs = _prepare_all(engine, items, k, max_new_tokens=n_new)
    for req, item_seed in zip(reqs, seeds, strict=True):
        req.sampling = None if sampling is None else parse_sampling(temperature, top_p, top_k, do_sample, item_seed)
        req.seed, req.stop = item_seed, stop

    def generate_one(batch: list[int], traces: list) -> None:
        recorders = _generate_one_batch(engine, [reqs[i] for i in batch], k, n_new, traces, batch)
        for i, (record, meta) in zip(batch, recorders, strict=True):
            traces[i] = record.trace(meta)

    lengths = [len(r.prompt_ids) + n_new for r in reqs]
    return _in_batches(generate_one, lengths, check_budget(engine, batch_tokens), progress, mode="generate")


# what score_batch and generate_batch show and say, by mode
_MODE_WORDS = {"score": ("scoring", "scored"), "generate": ("generating", "generated")}


def _in_batches(run_batch, lengths: list[int], budget: int, progress: bool, mode: str) -> Corpus:
    """Run `run_batch(batch, traces)` over the batches of `lengths`, with a progress bar; the Corpus.

    `run_batch` fills ``traces[i]`` for each item index ``i`` of its batch; an interrupt (Ctrl-C,
    stop) ends the loop with a warning, and the corpus keeps the traces made until then.
    """
    desc, verb = _MODE_WORDS[mode]
    traces: list = [None] * len(lengths)
    started = time.perf_counter()
    bar = Progress(bool(progress), len(lengths), unit="text", desc=desc)
    try:
        for batch in length_batches(lengths, budget):
            run_batch(batch, traces)
            bar.update_to(sum(t is not None for t in traces))
    except INTERRUPTS as error:
        _warn_interrupted(error, traces, verb)
    finally:
        bar.close()
    return _corpus(traces, started, mode=mode)


# -- preparing -----------------------------------------------------------------------------


def _prepare_all(engine: ModelEngine, items: list[dict], k: int, max_new_tokens: int,
                 scoring: bool = False) -> list[Request]:
    reqs = []
    for i, item in enumerate(items):
        req = Request(**item, top_logprobs=k, max_new_tokens=max_new_tokens, progress=False, scoring=scoring)
        try:
            if req.prompt_ids is not None:
                req.prompt_ids = check_prompt_ids(req.prompt_ids, engine.vocab_size)
            engine.prepare(req)
        except (TypeError, ValueError) as error:
            raise type(error)(f"item {i} of the list: {error}") from None
        reqs.append(req)
    return reqs


def check_budget(engine: ModelEngine, batch_tokens) -> int:
    if batch_tokens is None:
        tokens = BATCH_TOKENS_CPU if engine.device.type == "cpu" else BATCH_TOKENS_GPU
        return max(64, tokens * _REFERENCE_VOCAB // max(engine.vocab_size, 1))
    if not is_int(batch_tokens) or batch_tokens < 1:
        raise ValueError(f"batch_tokens must be an int >= 1 (padded tokens per forward pass), got {batch_tokens!r}")
    return int(batch_tokens)


def length_batches(lengths: list[int], budget: int) -> list[list[int]]:
    """Input indices grouped by length so each batch holds at most `budget` padded tokens."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:  # sorted ascending: the newest index is the batch's longest
        if current and (len(current) + 1) * lengths[i] > budget:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


# -- scoring ---------------------------------------------------------------------------------


def _score_one_batch(engine: ModelEngine, reqs: list[Request], k: int) -> list:
    lengths = [len(r.prompt_ids) for r in reqs]
    width = max(lengths)
    pad = pad_id(engine)
    input_ids = torch.tensor([r.prompt_ids + [pad] * (width - n) for r, n in zip(reqs, lengths, strict=True)],
                             device=engine.device)  # (B, T), padded on the right
    mask = (torch.arange(width, device=engine.device)[None, :] < torch.tensor(lengths, device=engine.device)[:, None])
    with torch.inference_mode():
        logits = engine.model(input_ids=input_ids, attention_mask=mask.long(), use_cache=False).logits  # (B, T, V)
        # Row b's positions 0..n_b-2 predict its tokens 1..n_b-1; the pads' rows are never read.
        parts = [summarize_rows(logits[b, : n - 1], input_ids[b, 1:n], k) for b, n in enumerate(lengths)]
        del logits
    host = to_host(parts)  # one copy per field for the whole batch
    cuts = np.cumsum([n - 1 for n in lengths])[:-1]
    traces = []
    for req, n, rows in zip(reqs, lengths, split_rows(host, cuts), strict=True):
        record = Recorder(engine, req.prompt_ids, k, n, processed=False)
        record.add(rows)
        traces.append(record.trace({**engine.trace_meta(k), "mode": "score", **req.input_meta()}))
    return traces


def split_rows(host: dict, cuts) -> list[dict]:
    pieces = {name: np.split(values, cuts) for name, values in host.items()}
    return [{name: pieces[name][b] for name in host} for b in range(len(cuts) + 1)]


def pad_id(engine: ModelEngine) -> int:
    pad = getattr(engine.tokenizer, "pad_token_id", None)
    if pad is None:
        pad = getattr(engine.tokenizer, "eos_token_id", None)
    return 0 if pad is None else int(pad)  # a pad's value never matters: the mask hides it


# -- generation ------------------------------------------------------------------------------


def _generate_one_batch(engine: ModelEngine, reqs: list[Request], k: int, n_new: int, traces: list, batch: list[int]):
    """Decode one left-padded batch; returns (Recorder, meta) per row. On an interrupt, keeps the rows."""
    rows = len(reqs)
    sampling = reqs[0].sampling
    keep_processed = sampling is not None and sampling.changes_distribution
    generators = [_generator(engine.device, r.sampling) for r in reqs] if sampling is not None else []
    eos = engine.eos_ids()
    metas = [{**engine.trace_meta(k), **r.sampling_meta(), "finish_reason": "length", **r.input_meta()} for r in reqs]
    records = [Recorder(engine, r.prompt_ids, k, len(r.prompt_ids) + n_new, processed=keep_processed) for r in reqs]
    out = list(zip(records, metas, strict=True))
    chunk = engine.sync_every or (1 if engine.device.type == "cpu" else 16)
    done = np.zeros(rows, dtype=bool)
    started = time.perf_counter()
    mask, position, next_logits, cache = _prefill(engine, reqs, records, k)
    pending: list[dict] = []
    try:
        for step in range(n_new):
            chosen, summary = _next_tokens(next_logits, sampling, generators, k, keep_processed)
            pending.append(summary)
            if (step + 1) % chunk == 0 or step + 1 == n_new:
                _read_chunk(records, metas, pending, done, eos)
                pending = []
                if done.all():
                    break
            if step + 1 == n_new:
                break
            if stop_requested(reqs[0].stop):
                raise Interrupted("stopped by the caller")
            with torch.inference_mode():
                mask = torch.cat([mask, mask.new_ones(rows, 1)], dim=1)
                position = position + 1
                logits, cache = engine.forward(chosen[:, None], cache, attention_mask=mask,
                                               position_ids=position)  # (B, 1, V)
                next_logits = logits[:, -1]
    except INTERRUPTS:
        _read_chunk(records, metas, pending, done, eos)  # steps computed but not yet read
        for b, meta in enumerate(metas):
            if not done[b]:
                meta["finish_reason"] = "interrupted"
        for i, (record, meta) in zip(batch, out, strict=True):
            traces[i] = record.trace(meta)  # the rows of this batch, each as far as it got
        raise
    seconds = round(time.perf_counter() - started, 4)
    for meta in metas:
        meta["seconds"] = seconds  # the batch's time: its rows ran together
    return out


def _prefill(engine: ModelEngine, reqs: list[Request], records: list[Recorder], k: int):
    """The forward pass of the left-padded prompts; each record gets its prompt's rows.

    Returns (attention mask (B, T), each row's last position (B, 1), the next logits (B, V), the cache).
    """
    device = engine.device
    lengths = torch.tensor([len(r.prompt_ids) for r in reqs], device=device)
    width = int(lengths.max())
    pad = pad_id(engine)
    input_ids = torch.tensor([[pad] * (width - len(r.prompt_ids)) + r.prompt_ids for r in reqs], device=device)
    mask = (torch.arange(width, device=device)[None, :] >= (width - lengths)[:, None]).long()  # (B, T)
    positions = (mask.cumsum(-1) - 1).clamp(min=0)  # (B, T): each row counts from its first real token
    with torch.inference_mode():
        logits, cache = engine.forward(input_ids, attention_mask=mask, position_ids=positions)  # (B, T, V)
        prompt_parts = [summarize_rows(logits[b, width - int(n) : -1], input_ids[b, width - int(n) + 1 :], k)
                        for b, n in enumerate(lengths.tolist())]
        next_logits = logits[:, -1]  # (B, V)
        del logits
    cuts = np.cumsum([len(r.prompt_ids) - 1 for r in reqs])[:-1]
    for record, part in zip(records, split_rows(to_host(prompt_parts), cuts), strict=True):
        record.add(part)
    return mask, positions[:, -1:], next_logits, cache


def _next_tokens(next_logits, sampling, generators: list, k: int, keep_processed: bool):
    """One decode step: each row's chosen token (B,) (greedy, or sampled with the row's own seed) and
    the step's summary (the processed distribution beside the raw one when it differs)."""
    with torch.inference_mode():
        if sampling is None:
            chosen = next_logits.argmax(dim=-1)  # (B,)
            processed = None
        else:
            processed = process(sampling, next_logits.float())  # (B, V)
            chosen = torch.cat([torch.multinomial(processed[b : b + 1].exp(), 1, generator=g)[:, 0]
                                for b, g in enumerate(generators)])  # (B,): each row its own seed
            processed = processed if keep_processed else None
        return chosen, summarize(next_logits, chosen, k, processed)


def _read_chunk(records, metas, pending: list[dict], done: np.ndarray, eos: list[int]) -> None:
    """Append a chunk of decode steps to each row still running; stop rows that reached EOS."""
    if not pending:
        return
    # one host copy per field for the chunk: (B, S) or (B, S, K)
    steps = {name: torch.stack([p[name] for p in pending], dim=1).cpu().numpy() for name in pending[0]}
    for b, record in enumerate(records):
        if done[b]:
            continue
        since = record.n
        record.add({name: values[b] for name, values in steps.items()})
        if record.stop_at(eos, since):
            metas[b]["finish_reason"] = "eos"
            done[b] = True
        elif record.n_new >= record.arrays["token_ids"].shape[0] - record.prompt_len:
            done[b] = True


def _generator(device, sampling):
    generator = torch.Generator(device=device)
    generator.manual_seed(sampling.seed if sampling.seed is not None else torch.seed())
    return generator


# -- the result ------------------------------------------------------------------------------


def _warn_interrupted(error: BaseException, traces: list, verb: str) -> None:
    kept = sum(t is not None for t in traces)
    partial = sum(t is not None and t.meta.get("finish_reason") == "interrupted" for t in traces)
    if isinstance(error, KeyboardInterrupt):
        rest = f" ({partial} of them cut short)" if partial else ""
        warnings.warn(f"interrupted: the corpus holds the {kept} of {len(traces)} items {verb} so far{rest}; "
                      "the others were not run", stacklevel=3)


def _corpus(traces: list, started: float, mode: str) -> Corpus:
    kept = [i for i, t in enumerate(traces) if t is not None]
    metadata = [{"index": i} for i in kept]
    meta = {"mode": mode, "items_asked": len(traces), "seconds": round(time.perf_counter() - started, 4),
            "interrupted": len(kept) < len(traces) or any(traces[i].meta.get("finish_reason") == "interrupted"
                                                          for i in kept)}
    return Corpus([traces[i] for i in kept], metadata=metadata, meta=meta)
