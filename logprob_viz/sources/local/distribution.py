"""Per-position distribution math of the local runner: what a trace keeps of a [T, vocab] block
of logits (chosen logprob, rank, entropy, top-K), and the sampling settings' processed
distribution. Everything stays on the model's device; the caller decides when to read it.
"""

from __future__ import annotations

import math

import torch

from ...records.sampling import min_p_removes, top_k_removes, top_p_removes
from ..request import Sampling

# Rows summarised at once when scoring many positions. On the CPU a block of 16 x 49k float32
# logprobs (3 MB) stays in cache across the log_softmax, softmax, entropy and top-K passes,
# where 256 rows (50 MB, the previous block) went to memory and back for each pass. A GPU wants
# big blocks instead (fewer kernel launches). Measured in benchmarks/runner.py (scoring).
SCORE_ROWS_CPU = 16
SCORE_ROWS_GPU = 256


def process(sampling: Sampling, logits: torch.Tensor) -> torch.Tensor:
    """Logprobs of the distribution sampled from, in transformers' order: temperature, top-k, top-p, min-p.

    The cuts are the rules of `records.sampling`, which the explorer's numbers use too.
    """
    scores = logits / sampling.temperature  # (T, V)
    if sampling.top_k > 0:
        kth = torch.topk(scores, min(sampling.top_k, scores.shape[-1]), dim=-1).values[..., -1:]
        scores = scores.masked_fill(top_k_removes(scores, kth), -math.inf)
    if sampling.top_p < 1.0:
        sorted_scores, order = torch.sort(scores, descending=False, dim=-1)
        cumulative = sorted_scores.softmax(dim=-1).cumsum(dim=-1)
        remove = top_p_removes(cumulative, sampling.top_p)
        remove[..., -1:] = False  # always keep the most likely token
        scores = scores.masked_fill(remove.scatter(-1, order, remove), -math.inf)
    if sampling.min_p > 0.0:
        # the top token always stays (transformers' MinPLogitsWarper keeps at least one too)
        top = scores.amax(dim=-1, keepdim=True)  # (T, 1)
        scores = scores.masked_fill(min_p_removes(scores, top, sampling.min_p), -math.inf)
    return torch.log_softmax(scores, dim=-1)


def summarize(logits: torch.Tensor, chosen: torch.Tensor, k: int, processed: torch.Tensor | None = None) -> dict:
    """Everything the trace keeps about T distributions: O(T*K) tensors, still on the device.

    logits: (T, V) next-token logits; chosen: (T,) the token that followed each; processed:
    (T, V) logprobs of the distribution sampled from, when sampling settings changed it.
    """
    logits = logits.float()
    logp = torch.log_softmax(logits, dim=-1)  # (T, V)
    chosen_logp = logp.gather(-1, chosen[:, None])  # (T, 1)
    top = torch.topk(logp, k, dim=-1)  # (T, K)
    out = {
        "token_ids": chosen,
        "logprobs": chosen_logp[:, 0],
        "ranks": _ranks(logp, chosen, chosen_logp, top.indices),
        "entropy": _entropy(logits, logp),
        "top_logprobs": top.values,
        "top_ids": top.indices,
    }
    if processed is not None:
        out["processed_logprobs"] = processed.gather(-1, chosen[:, None])[:, 0]
        out["processed_top_logprobs"] = processed.gather(-1, top.indices)
    return out


def summarize_rows(logits: torch.Tensor, chosen: torch.Tensor, k: int, on_rows=None) -> dict:
    """`summarize` over many positions, a cache-sized block of rows at a time. (T, ...) tensors.

    ``on_rows(n)`` is called after each block with the rows done so far (progress).
    """
    rows = SCORE_ROWS_CPU if logits.device.type == "cpu" else SCORE_ROWS_GPU
    parts = []
    for i in range(0, len(chosen), rows):
        parts.append(summarize(logits[i : i + rows], chosen[i : i + rows], k))
        if on_rows is not None:
            on_rows(min(i + rows, len(chosen)))
    if not parts:
        return summarize(logits[:0], chosen[:0], k)
    return {name: torch.cat([p[name] for p in parts]) for name in parts[0]}


def _entropy(logits: torch.Tensor, logp: torch.Tensor) -> torch.Tensor:
    """Entropy in nats of each row, -sum(p * log p). (T,)"""
    # softmax is one fused pass, where logp.exp() is a slower elementwise one; the dot product
    # needs no (T, V) temporary for p * log p.
    return -torch.linalg.vecdot(torch.softmax(logits, dim=-1), logp)


def _ranks(logp: torch.Tensor, chosen: torch.Tensor, chosen_logp: torch.Tensor, top_ids: torch.Tensor) -> torch.Tensor:
    """1-based rank of each chosen token in its full distribution. (T,)"""
    if logp.shape[0] == 1 or top_ids.shape[1] == 0:
        # A decode step: one comparison over the vocabulary, and no host read.
        return (logp > chosen_logp).sum(-1) + 1
    # Scoring many positions: most chosen tokens are in the top-K, whose position is their rank
    # (up to exact ties); count over the whole vocabulary only for the rest, which saves a full
    # [T, vocab] comparison pass (measured in benchmarks/runner.py: scoring).
    hit = top_ids == chosen[:, None]  # (T, K)
    found = hit.any(-1)
    ranks = torch.where(found, hit.int().argmax(-1) + 1, 0).long()
    misses = (~found).nonzero()[:, 0]
    ranks[misses] = (logp[misses] > chosen_logp[misses]).sum(-1) + 1
    return ranks


def to_host(parts: list[dict]) -> dict:
    """Concatenate summaries along T and move them to the host in one copy per field (numpy)."""
    if not parts:
        return {}
    return {name: torch.cat([p[name] for p in parts]).cpu().numpy() for name in parts[0]}
