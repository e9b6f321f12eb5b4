"""The fidelity rows: the same float32 model on the device and on the CPU gives the same numbers.

For each tiny architecture: greedy tokens equal and every recorded logprob (the chosen token's
and the top-K's) within 1e-4 between a runner on the device and one on the CPU, and the device's
logprobs within 1e-4 of a plain transformers forward pass (an independent computation). For the
1B-class model: ``runner.score`` of one 128-token text, device against CPU, within 1e-3.
With ``--device cpu`` both sides run on the CPU: the rows then check the code runs and agrees
with plain transformers, not two devices.
"""

from __future__ import annotations

import copy

import numpy as np

from benchmarks.gpu.models import build, size, tiny_config
from benchmarks.gpu.report import Row
from benchmarks.lens import text_of
from benchmarks.runner import PROMPT

TINY_BOUND, BIG_BOUND = 1e-4, 1e-3


def largest_difference(a, b, n: int | None = None) -> float:
    """Largest |a - b| over the first `n` positions (default: all both traces have), the chosen token's
    logprob and the top-K's (position 0 has none)."""
    n = min(len(a), len(b), len(a) if n is None else n)
    parts = [np.abs(a.logprobs[1:n] - b.logprobs[1:n]), np.abs(a.top_logprobs[1:n] - b.top_logprobs[1:n])]
    return float(max(np.max(p, initial=0.0) for p in parts))


def plain_difference(runner, trace) -> float:
    """Largest |runner's logprob - log_softmax of a plain forward pass| over the trace's tokens."""
    import torch

    ids = torch.tensor([list(trace.token_ids)], device=runner.device)
    with torch.inference_mode():
        logp = torch.log_softmax(runner.model(input_ids=ids).logits.float()[0, :-1], -1)  # (N-1, V)
        chosen = logp.gather(-1, ids[0, 1:, None])[:, 0].cpu().numpy()
    return float(np.max(np.abs(chosen - trace.logprobs[1:]), initial=0.0))


def tiny_row(name: str, tokenizer, device, n_new: int) -> Row:
    import logprob_viz as lv

    model = build(tiny_config(name, len(tokenizer)))
    on_cpu = lv.load((model, tokenizer))
    on_device = lv.load((copy.deepcopy(model).to(device), tokenizer))
    here, there = (runner.generate(PROMPT, max_new_tokens=n_new, top_logprobs=5, progress=False)
                   for runner in (on_cpu, on_device))
    equal = np.asarray(here.token_ids) == np.asarray(there.token_ids)  # the same prompt, the same length
    same = int(np.sum(equal[-n_new:]))
    # Past a token that differs, the two continue from different texts: compare up to it (inclusive).
    diff = largest_difference(here, there, n=int(np.argmin(equal)) + 1 if not equal.all() else None)
    against_plain = plain_difference(on_device, there)
    met = "yes" if same == n_new and diff <= TINY_BOUND and against_plain <= TINY_BOUND else "no"
    return Row(f"fidelity: tiny {name} ({size(model)}), fp32, max abs logprob diff device vs CPU",
               f"greedy tokens equal {same}/{n_new}", f"vs plain forward {against_plain:.1e}", diff,
               f"<= {TINY_BOUND:g}", met=met, why="" if met == "yes" else where_they_part(here, there, equal))


def where_they_part(here, there, equal) -> str:
    """For a missed fidelity row: where the two runs first differ, and how close the CPU's top two were there."""
    if equal.all():
        at = int(np.argmax(np.abs(here.logprobs[1:] - there.logprobs[1:]))) + 1
        return f"the same tokens; the largest difference is at position {at} of {len(here)}"
    at = int(np.argmin(equal))
    gap = float(here.top_logprobs[at, 0] - here.top_logprobs[at, 1])
    tie = " (a near tie: rounding may flip it)" if gap < 1e-3 else ""
    return (f"position {at}: CPU token {here.token_ids[at]}, device token {there.token_ids[at]}; the CPU's top two "
            f"logprobs there were {gap:.1e} apart{tie}")


def big_row(runner, n_tokens: int) -> Row:
    """`runner` holds the float32 model on the device; its CPU copy scores the same text."""
    import logprob_viz as lv

    text, ids = text_of(runner, n_tokens)
    there = runner.score(text, top_logprobs=5, progress=False)
    on_cpu = lv.load((copy.deepcopy(runner.model).to("cpu"), runner.tokenizer))
    here = on_cpu.score(text, top_logprobs=5, progress=False)
    diff = largest_difference(here, there)
    return Row(f"fidelity: the {size(runner.model)} Llama, fp32, score of {len(ids)} tokens, "
               "max abs logprob diff device vs CPU", "runner.score on the device", "runner.score on the CPU", diff,
               f"<= {BIG_BOUND:g}")
