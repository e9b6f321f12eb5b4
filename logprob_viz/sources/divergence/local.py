"""The whole next-token distributions of a local runner over a batch of id lists, a block of positions
at a time: one padded forward pass per batch (as ``runner.score([...])`` batches, sources/local/batch.py),
then float64 log-probabilities of a few rows at once, so no N x vocabulary array outlives its batch.
"""

from __future__ import annotations

import numpy as np
import torch

from ..local.batch import pad_id

__all__ = ["forward_batch"]


def forward_batch(engine, id_lists: list[list[int]]):
    """One right-padded forward pass of ``id_lists``; returns ``rows(b, positions, k)``: the float64
    log-probabilities (T, V) of the distributions that predict tokens ``positions`` of row b, and their
    k most likely ids (T, k) (torch.topk: many times faster than numpy's argpartition over a vocabulary)."""
    lengths = [len(ids) for ids in id_lists]
    width = max(lengths)
    pad = pad_id(engine)
    device = engine.device
    input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids in id_lists], device=device)  # (B, T)
    mask = torch.arange(width, device=device)[None, :] < torch.tensor(lengths, device=device)[:, None]
    with torch.inference_mode():
        # with a causal mask a real token never sees a later pad: each row is as if alone
        logits = engine.model(input_ids=input_ids, attention_mask=mask.long(), use_cache=False).logits  # (B, T, V)

    def rows(b: int, positions: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        # position i is predicted by the logits at i - 1; float64 before the softmax, as the definitions ask
        index = torch.as_tensor(np.asarray(positions) - 1, device=device)
        with torch.inference_mode():
            logp = torch.log_softmax(logits[b].index_select(0, index).double(), dim=-1)  # (T, V)
            top = torch.topk(logp, min(k, logp.shape[-1]), dim=-1).indices  # (T, k), most likely first
            return logp.cpu().numpy(), top.cpu().numpy()

    return rows
