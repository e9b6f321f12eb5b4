"""`lv.divergence(base, candidate, text_or_texts)`: both sides score the base's token ids teacher-forced,
and each position's numbers (records/divergence/positions.py) are computed as the batch's logits come,
a block of positions at a time: memory stays O(N * K), whatever the number of texts.
"""

from __future__ import annotations

import functools
import numbers
import time
import warnings

import numpy as np

from ...records.divergence import Divergence, Divergences
from ...records.divergence.positions import LLAMA_CUTOFF, base_interval_rows, exact_rows, interval_rows
from ..progress import INTERRUPTS, Progress
from ..request import is_int
from ..runner import jobs_of
from .kld_file import KldFile
from .sides import TOKENIZERS_DIFFER, Whole, check_same_ids, check_scored, side_of

__all__ = ["divergence"]

# Positions per float64 block: 16 x 49k x 8 bytes = 6 MB per side (the runner's scoring block, in float64).
BLOCK_ROWS = 16


def divergence(base, candidate, text_or_texts=None, *, top_logprobs: int = 5, cutoff: float | None = LLAMA_CUTOFF,
               batch_tokens: int | None = None, progress: bool = True):
    """Where two engines part over the same text, token by token: an `lv.Divergence` (a list of texts:
    `lv.Divergences`, one per text, whose ``summary()`` pools every token).

    base, candidate: local runners (``lv.load``: whole distributions), server runners (``lv.connect``:
    their top-K), traces over the same token ids, or a llama.cpp base file (``lv.read_kld``, as base); at
    least one side whole. The base's tokenization is scored by both (the whole side's, when the base is a
    server). KL(base ‖ candidate) is summed over the base tokens with log p > -cutoff (llama.cpp's 16
    nats), or over all with ``cutoff=None``; a top-K side gives a range [kld_low, kld_high] that certainly
    holds it (a top-K base: a finite one). ``top_logprobs``: the alternatives kept per side
    and position (and asked of a server: more makes its range tighter).
    """
    k = _check_k(top_logprobs)
    cutoff = _check_cutoff(cutoff)
    base_side, cand_side = side_of(base, "base"), side_of(candidate, "candidate")
    if base_side.kind != "whole" and cand_side.kind != "whole":
        raise ValueError("one side must give its whole next-token distribution (a local runner from lv.load, or a "
                         "llama.cpp base file from lv.read_kld as the base): with two top-K lists the KL is bounded "
                         "only from below. Score one side locally, or read both traces with lv.compare")
    whole = base_side if base_side.kind == "whole" else cand_side  # tokenizes and names the tokens
    texts, single = _texts(text_or_texts, base_side)
    id_lists = _ids(whole, base_side, texts)
    traces = [None, None]  # each top-K side's traces of the ids
    for n, side in enumerate((base_side, cand_side)):
        if side.kind != "whole":
            traces[n] = _top_k_traces(side, whole, id_lists, k, progress)
    if base_side.kind == cand_side.kind == "whole":
        _check_whole_pair(base_side, cand_side, texts, id_lists)
    meta = {"base": base_side.describe(), "candidate": cand_side.describe(), "cutoff": cutoff, "top_logprobs": k}
    items = _holding([base_side, cand_side], lambda: _run((base_side, cand_side), whole, id_lists, traces, k, cutoff,
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
    if isinstance(cutoff, bool) or not isinstance(cutoff, numbers.Real) or not cutoff > 0:
        raise ValueError(f"cutoff must be a positive number of nats (llama.cpp's is 16.0) or None for the exact "
                         f"full sum, got {cutoff!r}")
    return float(cutoff)


def _texts(text_or_texts, base_side) -> tuple[list, bool]:
    if text_or_texts is None:
        texts = getattr(base_side, "texts", None)  # a llama.cpp base file, base traces: their own token ids
        if texts is None:
            raise ValueError("give the text (or a list of texts) that both sides score")
        return texts, getattr(base_side, "single", False)
    if isinstance(text_or_texts, str):
        return [text_or_texts], True
    if isinstance(text_or_texts, (list, tuple)) and text_or_texts and all(isinstance(t, str) for t in text_or_texts):
        return list(text_or_texts), False
    raise TypeError(f"text_or_texts must be a str or a non-empty list of str, got {type(text_or_texts).__name__}")


def _ids(whole, base, texts: list) -> list[list[int]]:
    """The token ids both sides score: the base's tokenization (the whole side's when the base is a server)."""
    if isinstance(texts[0], str):
        return (base if base.kind == "whole" else whole).ids_of(texts)
    return [list(map(int, ids)) for ids in texts]


def _check_whole_pair(base, cand, texts: list, id_lists: list[list[int]]) -> None:
    """Two whole sides: the same vocabulary, and the candidate's tokenizer makes the base's ids."""
    if isinstance(base, KldFile):
        if cand.vocab_size != base.vocab_size:
            raise ValueError(f"{base.path} was written for a vocabulary of {base.vocab_size} tokens, but the candidate "
                             f"{cand.engine.name} has {cand.vocab_size}: compare a model with the same vocabulary")
        base.engine = cand.engine  # the file holds ids only: the tokens' texts are the candidate's
        return
    if cand.vocab_size != base.vocab_size:
        raise ValueError(TOKENIZERS_DIFFER.format(detail=f"vocabularies of {base.vocab_size} and {cand.vocab_size} "
                                                         "tokens"))
    if isinstance(texts[0], str):
        for i, (text, ids) in enumerate(zip(texts, id_lists, strict=True)):
            check_same_ids(ids, cand.ids_of([text])[0], f"text {i}")


def _top_k_traces(side, whole, id_lists: list[list[int]], k: int, progress: bool) -> list:
    """A top-K side's traces of the ids (a server scores them; given traces must be over them)."""
    traces = side.score(id_lists, k, progress)
    for i, (trace, ids) in enumerate(zip(traces, id_lists, strict=True)):
        if (np.asarray(trace.token_ids) < 0).any():  # a source without ids: its bytes must be the ids' bytes
            if list(trace.token_bytes) != whole.tokens_of(ids)[1]:
                raise ValueError(TOKENIZERS_DIFFER.format(detail=f"text {i}: the tokens' bytes differ"))
        else:
            check_same_ids(ids, trace.token_ids, f"text {i}")
        check_scored(side, trace, i)
    return traces


def _run(sides: tuple, whole, id_lists, traces: list, k, cutoff, meta, batch_tokens, progress) -> list:
    from ..local.batch import check_budget, length_batches  # torch: the local side's batching

    base, cand = sides
    items: list = [None] * len(id_lists)
    started = time.perf_counter()
    bar = Progress(bool(progress), len(id_lists), unit="text", desc="divergence")
    local = base if isinstance(base, Whole) else cand if isinstance(cand, Whole) else None
    budget = check_budget(local.engine, batch_tokens) if local is not None else 1 << 30
    try:
        for batch in length_batches([len(ids) for ids in id_lists], budget):
            rows = [s.batch_rows(batch, id_lists) if s.kind == "whole" else None for s in sides]
            for b, i in enumerate(batch):
                ids = id_lists[i]
                positions = base.positions(i, ids) if base.kind == "whole" else np.arange(1, len(ids))
                given = [None if t is None else t[i] for t in traces]
                items[i] = _one(whole, ids, positions, (*rows, b), given, k, cutoff, meta)
            del rows  # the batch's logits go before the next batch's come
            bar.update_to(sum(d is not None for d in items))
    except INTERRUPTS:
        done = sum(d is not None for d in items)
        if not done:
            raise  # nothing was computed: the interrupt is the answer
        warnings.warn(f"interrupted: the divergences of {done} of {len(items)} texts were kept", stacklevel=3)
        meta["interrupted"] = True
    finally:
        bar.close()
    meta["seconds"] = round(time.perf_counter() - started, 4)
    return items


def _block(sides: tuple, traces: list, chosen: np.ndarray, block: np.ndarray, k: int, cutoff) -> dict:
    """One block of positions: exact where both sides are whole, else a range from the top-K side's trace."""
    base_rows, cand_rows, b = sides
    if base_rows is not None and cand_rows is not None:
        (lp, base_top), (lq, cand_top) = base_rows(b, block, k), cand_rows(b, block, k)
        return exact_rows(lp, lq, chosen[block], cutoff, k, top_ids=(base_top, cand_top))
    if base_rows is not None:
        lp, base_top = base_rows(b, block, k)
        t = traces[1]
        return interval_rows(lp, chosen[block], np.asarray(t.logprobs, dtype=np.float64)[block],
                             np.asarray(t.top_ids)[block], t.top_logprobs[block], cutoff, k, base_top_ids=base_top)
    lq, cand_top = cand_rows(b, block, k)
    t = traces[0]
    return base_interval_rows(lq, chosen[block], np.asarray(t.logprobs, dtype=np.float64)[block],
                              np.asarray(t.top_ids)[block], t.top_logprobs[block], cutoff, k, cand_top_ids=cand_top)


def _one(whole, ids: list[int], positions: np.ndarray, sides: tuple, traces: list, k, cutoff, meta) -> Divergence:
    """One text's record, its scored positions a block at a time. ``sides``: each side's ``rows(b, positions,
    k)`` of the batch (None for a top-K side, whose trace is in ``traces``) and the text's row b."""
    chosen = np.asarray(ids, dtype=np.int64)
    parts = [_block(sides, traces, chosen, positions[start : start + BLOCK_ROWS], k, cutoff)
             for start in range(0, len(positions), BLOCK_ROWS)]
    rows = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]} if parts else _no_rows(k)
    tokens, token_bytes = whole.tokens_of(ids)
    return Divergence.from_rows(tokens, token_bytes, chosen, positions, rows, cutoff=cutoff, vocab=whole.vocab,
                                meta=dict(meta))


def _no_rows(k: int) -> dict:
    """The rows of a text with no scored position (one token)."""
    empty = exact_rows(np.zeros((0, 1)), np.zeros((0, 1)), np.zeros(0, dtype=np.int64), None, k)
    return {name: np.zeros((0, k)) if v.ndim == 2 else v for name, v in empty.items()}

