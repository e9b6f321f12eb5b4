"""The independent reference for sampling settings: transformers' own logits warpers (temperature,
top-k, top-p, min-p, in the order `generate` applies them), then a softmax — none of it the package's."""

from __future__ import annotations


def warp(scores, temperature: float, top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0):
    """p (V,) of the distribution transformers samples from, given float64 scores (1, V) (logits or logprobs)."""
    import torch
    from transformers import (
        LogitsProcessorList,
        MinPLogitsWarper,
        TemperatureLogitsWarper,
        TopKLogitsWarper,
        TopPLogitsWarper,
    )

    if temperature == 0:
        return torch.nn.functional.one_hot(scores.argmax(-1), scores.shape[-1])[0].double().numpy()
    warpers = [TemperatureLogitsWarper(temperature)]
    if top_k:
        warpers.append(TopKLogitsWarper(top_k))
    if top_p < 1:
        warpers.append(TopPLogitsWarper(top_p))
    if min_p > 0:
        warpers.append(MinPLogitsWarper(min_p))
    scores = LogitsProcessorList(warpers)(torch.zeros((1, 1), dtype=torch.long), scores)
    return torch.softmax(scores, dim=-1)[0].numpy()


def warped(model, ids: list[int], temperature: float, top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0):
    """p (V,) of the distribution transformers samples from after `ids`, with these settings."""
    import torch

    with torch.inference_mode():
        logits = model(torch.tensor([ids])).logits[:, -1].double()  # (1, V)
    return warp(logits, temperature, top_k, top_p, min_p)
