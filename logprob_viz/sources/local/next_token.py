"""The model's whole next-token distribution after a token prefix: what the explorer's pinned-token
panel computes its exact numbers from (one forward pass per position; the caller caches it)."""

from __future__ import annotations

import numpy as np
import torch

from ..runner import jobs_of

__all__ = ["next_logprobs"]


def next_logprobs(runner, prompt_ids: list[int]) -> np.ndarray:
    """log p (V,) float64 of every token of the vocabulary after `prompt_ids`, from `runner`'s model.

    One forward pass without a cache, under the runner's job lock: it waits, silently, for a running
    job (a stream) to end.
    The log-softmax is taken in float64 from the model's logits, so tiny probabilities keep their digits.
    """
    if not prompt_ids:
        raise ValueError("prompt_ids is empty: the first token has no context to predict it from")

    ids = torch.tensor([list(prompt_ids)], device=runner.device)  # (1, P)
    with jobs_of(runner).hold("the explorer's pinned-token readout"), torch.inference_mode():
        logits = runner.model(input_ids=ids, use_cache=False).logits[0, -1]  # (V,)
    return torch.log_softmax(logits.double(), dim=-1).cpu().numpy()
