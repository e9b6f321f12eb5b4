"""`lv.divergence(base, candidate, text_or_texts)`: both sides score the base's token ids teacher-forced,
and each position's numbers (records/divergence/positions.py) are computed as the batch's logits come,
a block of positions at a time: memory stays O(N * K), whatever the number of texts.
"""

from __future__ import annotations

import functools
import time
import warnings

import numpy as np

from ...records.divergence import Divergence, Divergences
from ...records.divergence.positions import LLAMA_CUTOFF, exact_rows, interval_rows
from ..progress import INTERRUPTS, Progress
from ..request import is_int
from ..runner import jobs_of
from .kld_file import KldFile
from .sides import TOKENIZERS_DIFFER, Whole, check_same_ids, side_of

__all__ = ["divergence"]

# Positions per float64 block: 16 x 49k x 8 bytes = 6 MB per side (the runner's scoring block, in float64).
BLOCK_ROWS = 16


def divergence(base, candidate, text_or_texts=None, *, top_logprobs: int = 5, cutoff: float | None = LLAMA_CUTOFF,
               batch_tokens: int | None = None, progress: bool = True):
    """Where two engines part over the same text, token by token: an `lv.Divergence` (a list of texts:
    `lv.Divergences`, one per text, whose ``summary()`` pools every token).

    base, candidate: local runners (``lv.load``: whole distributions), server runners (``lv.connect``:
    their top-K), traces over the same token ids, or a llama.cpp base file (``lv.read_kld``, as base).
    The base's tokenization is scored by both. KL(base ‖ candidate) is summed over the base tokens with
    log p > -cutoff (llama.cpp's 16 nats), or over all with ``cutoff=None``; a top-K candidate gives a
    range [kld_low, kld_high] that certainly holds it. ``top_logprobs``: the alternatives kept per side
    and position (and asked of a server: more makes its range tighter).
    """
    k = _check_k(top_logprobs)
    cutoff = _check_cutoff(cutoff)
    base_side, cand_side = side_of(base, "base"), side_of(candidate, "candidate")
    if base_side.kind != "whole":
        raise ValueError("the base must give its whole next-token distribution (a local runner from lv.load, or a "
                         "llama.cpp base file from lv.read_kld): KL(base || candidate) weighs every token by the "
                         "base's probability. A server or a trace can be the candidate")
    texts, single = _texts(text_or_texts, base_side)
    id_lists = base_side.ids_of(texts)
    cand_traces = _candidate_ids(cand_side, base_side, texts, id_lists, k, progress)
    meta = {"base": base_side.describe(), "candidate": cand_side.describe(), "cutoff": cutoff, "top_logprobs": k}
    items = _holding([base_side, cand_side], lambda: _run(base_side, cand_side, id_lists, cand_traces, k, cutoff,
                                                          meta, batch_tokens, progress))
    if single:
        return items[0]
    return Divergences([d for d in items if d is not None], meta={**meta, "items_asked": len(id_lists)})


def _holding(sides: list, job):
    """``job()`` holding each local runner's job lock (sources/job_lock.py: one job at a time per runner,
    re-entrant, so a runner given as both sides is held once more, not waited for)."""
    for side in reversed([s for s in sides if isinstance(s, Whole)]):
        job = functools.partial(jobs_of(side.runner).call, "lv.divergence", job)
    return job()


def _check_k(top_logprobs) -> int:
    if not is_int(top_logprobs) or not 0 <= top_logprobs <= 100:
        raise ValueError(f"top_logprobs must be an int between 0 and 100 (the alternatives kept per side and "
                         f"position), got {top_logprobs!r}")
    return int(top_logprobs)


def _check_cutoff(cutoff) -> float | None:
    if cutoff is None:
        return None
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not cutoff > 0:
        raise ValueError(f"cutoff must be a positive number of nats (llama.cpp's is 16.0) or None for the exact "
                         f"full sum, got {cutoff!r}")
    return float(cutoff)


def _texts(text_or_texts, base_side) -> tuple[list, bool]:
    if text_or_texts is None:
        texts = getattr(base_side, "texts", None)  # a llama.cpp base file carries its own token ids
        if texts is None:
            raise ValueError("give the text (or a list of texts) that both sides score")
        return texts, False
    if isinstance(text_or_texts, str):
        return [text_or_texts], True
    if isinstance(text_or_texts, (list, tuple)) and text_or_texts and all(isinstance(t, str) for t in text_or_texts):
        return list(text_or_texts), False
    raise TypeError(f"text_or_texts must be a str or a non-empty list of str, got {type(text_or_texts).__name__}")


def _candidate_ids(cand, base, texts: list, id_lists: list[list[int]], k: int, progress: bool):
    """Check that the candidate scores the base's ids; for a top-K candidate, its traces of them."""
    if cand.kind == "whole" and isinstance(base, KldFile):
        if cand.vocab_size != base.vocab_size:
            raise ValueError(f"{base.path} was written for a vocabulary of {base.vocab_size} tokens, but the candidate "
                             f"{cand.engine.name} has {cand.vocab_size}: compare a model with the same vocabulary")
        base.engine = cand.engine  # the file holds ids only: the tokens' texts are the candidate's
        return None
    if cand.kind == "whole":
        if cand.vocab_size != base.vocab_size:
            raise ValueError(TOKENIZERS_DIFFER.format(
                detail=f"vocabularies of {base.vocab_size} and {cand.vocab_size} tokens"))
        if isinstance(texts[0], str):
            for i, (text, ids) in enumerate(zip(texts, id_lists, strict=True)):
                check_same_ids(ids, cand.ids_of([text])[0], f"text {i}")
        return None
    traces = cand.score(id_lists, k, progress)
    for i, (trace, ids) in enumerate(zip(traces, id_lists, strict=True)):
        if (np.asarray(trace.token_ids) < 0).any():  # a source without ids: its bytes must be the base's tokens'
            if list(trace.token_bytes) != base.tokens_of(ids)[1]:
                raise ValueError(TOKENIZERS_DIFFER.format(detail=f"text {i}: the tokens' bytes differ"))
        else:
            check_same_ids(ids, trace.token_ids, f"text {i}")
    return traces


def _run(base, cand, id_lists, cand_traces, k, cutoff, meta, batch_tokens, progress) -> list:
    from ..local.batch import check_budget, length_batches  # torch: the local side's batching

    items: list = [None] * len(id_lists)
    started = time.perf_counter()
    bar = Progress(bool(progress), len(id_lists), unit="text", desc="divergence")
    local = base if isinstance(base, Whole) else cand if isinstance(cand, Whole) else None
    budget = check_budget(local.engine, batch_tokens) if local is not None else 1 << 30
    try:
        for batch in length_batches([len(ids) for ids in id_lists], budget):
            base_rows = base.batch_rows(batch, id_lists)
            cand_rows = cand.batch_rows(batch, id_lists) if cand.kind == "whole" else None
            for b, i in enumerate(batch):
                trace = None if cand_traces is None else cand_traces[i]
                sides = (base_rows, cand_rows, b)
                items[i] = _one(base, id_lists[i], base.positions(i, id_lists[i]), sides, trace, k, cutoff, meta)
            del base_rows, cand_rows  # the batch's logits go before the next batch's come
            bar.update_to(sum(d is not None for d in items))
    except INTERRUPTS:
        done = sum(d is not None for d in items)
        if not done:
            raise  # nothing was computed: the interrupt is the answer
        warnings.warn(f"interrupted: the divergences of {done} of {len(items)} texts were kept", stacklevel=3)
    finally:
        bar.close()
    meta["seconds"] = round(time.perf_counter() - started, 4)
    return items


def _one(base, ids: list[int], positions: np.ndarray, sides: tuple, trace, k, cutoff, meta) -> Divergence:
    """One text's record: its scored positions a block at a time. ``sides``: each side's ``rows(b, positions, k)``
    of the batch (None for a top-K candidate, whose ``trace`` is given instead) and the text's row b."""
    base_rows, cand_rows, b = sides
    chosen = np.asarray(ids, dtype=np.int64)
    parts = []
    for start in range(0, len(positions), BLOCK_ROWS):
        block = positions[start : start + BLOCK_ROWS]
        lp, base_top = base_rows(b, block, k)
        if cand_rows is not None:
            lq, cand_top = cand_rows(b, block, k)
            parts.append(exact_rows(lp, lq, chosen[block], cutoff, k, top_ids=(base_top, cand_top)))
        else:
            parts.append(interval_rows(lp, chosen[block], np.asarray(trace.logprobs, dtype=np.float64)[block],
                                       np.asarray(trace.top_ids)[block], trace.top_logprobs[block], cutoff, k,
                                       base_top_ids=base_top))
    rows = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]} if parts else _no_rows(k)
    tokens, token_bytes = base.tokens_of(ids)
    return Divergence.from_rows(tokens, token_bytes, chosen, positions, rows, cutoff=cutoff, vocab=base.vocab,
                                meta=dict(meta))


def _no_rows(k: int) -> dict:
    """The rows of a text with no scored position (one token)."""
    empty = exact_rows(np.zeros((0, 1)), np.zeros((0, 1)), np.zeros(0, dtype=np.int64), None, k)
    return {name: np.zeros((0, k)) if v.ndim == 2 else v for name, v in empty.items()}

