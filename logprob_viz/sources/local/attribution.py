"""Why this token: attribution of one token's log-probability to the tokens before it.

The quantity is ``f = log p(target)`` at a position, or ``log p(target) - log p(contrast)``
with a contrast token. Each method splits ``f`` into one score per earlier token:

- ``gradient_x_input``: the gradient of ``f`` with respect to each input embedding, dotted with
  that embedding (one forward and one backward pass).
- ``integrated_gradients``: the same gradient averaged along the straight path from a baseline
  to the input, dotted with (input - baseline); the scores then sum to ``f(input) -
  f(baseline)`` up to the quadrature error, which is reported with every result.
- ``occlusion``: ``f(input) - f(input with token j's embedding set to zero)``, batched over j.

The model is called with ``inputs_embeds=`` (the rows of ``model.get_input_embeddings()``), so
any transformers causal LM that takes embeddings works.

Integrated gradients on this model, measured (SmolLM2-135M, the 21-token planet prompt, the
quantity's completeness error as a share of f(input) - f(baseline)): along a straight path the
quantity is far from smooth (for log p(Neptune) - log p(Jupiter) its total variation over the
path is 16-27 nats for a net change of 0.3), so no baseline tried converges at practical step
counts: zero baseline with Gauss-Legendre nodes 750 % at 16 steps, 46 % at 64 for log p(Neptune);
a baseline keeping each token's norm (the vocabulary's mean direction) 2.5x at 64; nodes crowded
near the baseline worse. The default is the zero baseline with Gauss-Legendre nodes (exact for
polynomials of degree 2n-1, the fastest to fall as steps grow here), and every result says
whether it converged (``meta["converged"]``: error below 5 % of f(input) - f(baseline)) and
warns when not: use more ``n_steps``, or read gradient x input or occlusion instead.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import time
import warnings

import numpy as np
import torch

from ...records.attribution import Attribution
from ...records.trace import Trace
from ..engine import ModelEngine
from ..request import is_int

__all__ = ["attribute", "METHODS", "BASELINES", "STEP_RULES", "path_nodes"]

log = logging.getLogger(__name__)

METHODS = ("gradient_x_input", "integrated_gradients", "occlusion")
BASELINES = ("zero", "pad")
STEP_RULES = ("gauss-legendre", "midpoint")
# Integrated gradients have converged when the completeness error is below this share of
# |f(input) - f(baseline)| (the part of the quantity the scores are meant to split).
CONVERGED = 0.05
# Tokens (batch x sequence) per forward pass when batching steps or occlusions: keeps the
# activations kept for the backward pass to a few hundred MB on this size of model.
TOKENS_PER_BATCH = 4096


def path_nodes(n_steps: int, rule: str) -> tuple[np.ndarray, np.ndarray]:
    """(alphas, weights) of a quadrature of [0, 1]: alpha 0 is the baseline, 1 the input."""
    if rule == "midpoint":
        return (np.arange(n_steps) + 0.5) / n_steps, np.full(n_steps, 1.0 / n_steps)
    x, w = np.polynomial.legendre.leggauss(n_steps)
    u, w = (x + 1) / 2, w / 2
    if rule == "gauss-legendre":
        return u, w
    raise ValueError(f"steps must be one of {STEP_RULES}, got {rule!r}")


def _embedding_table(model) -> torch.Tensor:
    try:
        table = model.get_input_embeddings()
    except (AttributeError, NotImplementedError):
        table = None
    weight = getattr(table, "weight", None)
    accepts = "inputs_embeds" in inspect.signature(model.forward).parameters
    if weight is None or not accepts or not torch.is_floating_point(weight):
        raise ValueError(
            f"attribution needs embedding gradients, and {type(model).__name__} cannot give them: it needs "
            "model.get_input_embeddings() with a floating-point weight and a forward(inputs_embeds=...)"
        )
    return weight


class _Quantity:
    """f(embeds) for a batch of inputs: (B, T, d) -> (B,) values of the quantity at the last position."""

    def __init__(self, model, target: int, contrast: int | None):
        self.model, self.target, self.contrast = model, target, contrast
        # Only the last position's logits are needed: skip the other T-1 output-embedding rows.
        params = inspect.signature(model.forward).parameters
        self.extra = {"logits_to_keep": 1} if "logits_to_keep" in params else {}

    def __call__(self, embeds: torch.Tensor) -> torch.Tensor:
        logits = self.model(inputs_embeds=embeds, use_cache=False, **self.extra).logits[:, -1]  # (B, V)
        logp = torch.log_softmax(logits.double(), dim=-1)  # one row per input: float64 costs nothing here
        value = logp[:, self.target]
        return value if self.contrast is None else value - logp[:, self.contrast]


@contextlib.contextmanager
def _frozen(model):
    """No gradients for the weights while we differentiate by the inputs (restored afterwards)."""
    flags = [(p, p.requires_grad) for p in model.parameters()]
    for p, _ in flags:
        p.requires_grad_(False)
    try:
        yield
    finally:
        for p, flag in flags:
            p.requires_grad_(flag)


def _grad(f: _Quantity, embeds: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(values (B,), gradients (B, T, d)) of f at a batch of inputs."""
    with torch.enable_grad():
        embeds = embeds.detach().requires_grad_(True)
        values = f(embeds)
        try:
            (grads,) = torch.autograd.grad(values.sum(), embeds)
        except RuntimeError as error:
            raise ValueError(
                f"{type(f.model).__name__} gave no gradient with respect to its input embeddings ({error}); "
                "attribution needs a model whose forward pass is differentiable (not quantized to integers)"
            ) from error
    return values.detach(), grads


def _batch(n_items: int, length: int, batch_size: int | None) -> int:
    return batch_size or max(1, min(n_items, TOKENS_PER_BATCH // max(length, 1)))


def gradient_x_input(f: _Quantity, embeds: torch.Tensor) -> tuple[torch.Tensor, float, dict]:
    values, grads = _grad(f, embeds[None])
    return (grads[0] * embeds).sum(-1), float(values[0]), {}


def _baseline(kind, embeds: torch.Tensor, table: torch.Tensor, pad_id: int | None) -> torch.Tensor:
    if isinstance(kind, torch.Tensor):
        if kind.shape != embeds.shape:
            raise ValueError(
                f"a baseline tensor must have the inputs' shape {tuple(embeds.shape)}, got {tuple(kind.shape)}")
        return kind.to(embeds)
    if kind == "zero":
        return torch.zeros_like(embeds)
    if kind == "pad":
        if pad_id is None:
            raise ValueError("the tokenizer has no pad or end-of-text token for a 'pad' baseline; use 'zero'")
        return table[pad_id].detach().expand_as(embeds).clone()
    raise ValueError(f"baseline must be one of {BASELINES} or a tensor of the inputs' shape, got {kind!r}")


def integrated_gradients(f, embeds, baseline, n_steps: int, rule: str, batch_size) -> tuple[torch.Tensor, float, dict]:
    alphas, weights = path_nodes(n_steps, rule)
    diff = embeds - baseline  # (T, d)
    total = torch.zeros_like(embeds, dtype=torch.float64)
    step = _batch(n_steps, len(embeds), batch_size)
    for s in range(0, n_steps, step):
        a = torch.tensor(alphas[s : s + step], dtype=embeds.dtype, device=embeds.device)[:, None, None]
        _, grads = _grad(f, baseline + a * diff)  # (B, T, d)
        w = torch.tensor(weights[s : s + step], dtype=torch.float64, device=embeds.device)[:, None, None]
        total += (grads.double() * w).sum(0)
    scores = (total * diff.double()).sum(-1)
    with torch.inference_mode():
        ends = f(torch.stack([embeds, baseline]))
    value, base_value = float(ends[0]), float(ends[1])
    error = float(scores.sum()) - (value - base_value)
    relative = abs(error) / max(abs(value - base_value), 1e-6)
    meta = {"n_steps": n_steps, "steps": rule, "baseline_value": base_value, "completeness_error": error,
            "relative_error": relative, "converged": relative < CONVERGED}
    return scores, value, meta


def occlusion(f, embeds, batch_size) -> tuple[torch.Tensor, float, dict]:
    n = len(embeds)
    step = _batch(n, n, batch_size)
    with torch.inference_mode():
        value = f(embeds[None])[0]
        drops = []
        for s in range(0, n, step):
            rows = torch.arange(s, min(s + step, n), device=embeds.device)
            batch = embeds.expand(len(rows), -1, -1).clone()  # (B, T, d)
            batch[torch.arange(len(rows)), rows] = 0  # copy b has token s + b's embedding zeroed
            drops.append(value - f(batch))
    return torch.cat(drops), float(value), {}


def _contrast_id(engine: ModelEngine, contrast, vocab_size: int) -> int | None:
    if contrast is None:
        return None
    if is_int(contrast):
        if not 0 <= contrast < vocab_size:
            raise ValueError(f"contrast id {contrast} is outside the vocabulary of {vocab_size}")
        return int(contrast)
    if not isinstance(contrast, str) or not contrast:
        raise TypeError(f"contrast must be a token's text (as the chart shows it) or its id, got {contrast!r}")
    ids = engine.tokenizer(contrast, add_special_tokens=False)["input_ids"]
    if len(ids) != 1:
        pieces = [engine.text_of(int(i)) for i in ids]
        raise ValueError(f"contrast {contrast!r} is not one token: the tokenizer splits it into {len(ids)} tokens "
                         f"{pieces}; give one token's text (e.g. {pieces[0]!r}) or its id")
    return int(ids[0])


def _ids_and_position(engine: ModelEngine, trace, at) -> tuple[list[int], int]:
    if isinstance(trace, str):
        ids = list(engine.tokenizer(trace)["input_ids"])
    elif isinstance(trace, Trace):
        ids = [int(i) for i in trace.token_ids]
    else:
        raise TypeError(f"attribute reads a logprob_viz.Trace or a str, got {type(trace).__name__}")
    n = len(ids)
    if not is_int(at) or not (1 <= at < n or -n < at < 0):
        raise ValueError(f"at must be the index of a token that has tokens before it, 1..{n - 1} "
                         f"(or negative from the end), got {at!r}")
    position = int(at) % n
    if min(ids[: position + 1]) < 0:
        raise ValueError("this trace has no token ids (e.g. one read from a server); pass its text instead")
    return ids[: position + 1], position


def attribute(engine: ModelEngine, trace, *, at: int, contrast=None, method: str = "gradient_x_input",
              n_steps: int = 64, baseline="zero", steps: str = "gauss-legendre",
              batch_size: int | None = None) -> Attribution:
    """Why the token at `at`: one score per earlier token for log p(token) (- log p(contrast)).

    Parameters
    ----------
    engine : TransformersEngine
    trace : Trace or str
        A trace of this model (its token ids are followed exactly) or a text.
    at : int
        The target token's index (1..N-1, or negative from the end).
    contrast : str, int or None
        An alternative token (its text as the chart shows it, e.g. ``" Jupiter"``, or its id):
        the quantity becomes ``log p(target) - log p(contrast)``.
    method : ``"gradient_x_input"`` | ``"integrated_gradients"`` | ``"occlusion"``
    n_steps, baseline, steps : integrated gradients only
        Quadrature nodes; the baseline (``"zero"``, ``"pad"``: the pad or end-of-text token's
        embedding at every position, or a [position, d] tensor); ``"gauss-legendre"`` or
        ``"midpoint"`` nodes. Check ``meta["converged"]``.
    batch_size : int or None
        Inputs per forward pass (steps or occlusions); None: as many as fit `TOKENS_PER_BATCH`.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "integrated_gradients" and (not is_int(n_steps) or n_steps < 1):
        raise ValueError(f"n_steps must be a positive int, got {n_steps!r}")
    model = engine.model
    table = _embedding_table(model)
    ids, position = _ids_and_position(engine, trace, at)
    contrast_id = _contrast_id(engine, contrast, engine.vocab_size)
    if contrast_id == ids[position]:
        raise ValueError(f"the contrast is the target token itself ({engine.text_of(contrast_id)!r}): "
                         "the quantity would be 0; pick another alternative")
    started = time.perf_counter()
    f = _Quantity(model, ids[position], contrast_id)
    with _frozen(model):
        embeds = table[torch.tensor(ids[:position], device=table.device)].detach()  # (T, d)
        if method == "gradient_x_input":
            scores, value, extra = gradient_x_input(f, embeds)
        elif method == "occlusion":
            scores, value, extra = occlusion(f, embeds, batch_size)
        else:
            pad = engine.tokenizer.pad_token_id
            pad = engine.tokenizer.eos_token_id if pad is None else pad
            base = _baseline(baseline, embeds, table, pad)
            scores, value, extra = integrated_gradients(f, embeds, base, n_steps, steps, batch_size)
            extra["baseline"] = baseline if isinstance(baseline, str) else "tensor"
            if not extra["converged"]:
                warnings.warn(
                    f"integrated gradients have not converged: the scores miss {extra['relative_error']:.0%} of "
                    f"f(input) - f(baseline) with {n_steps} {steps} steps; use more n_steps", stacklevel=2)
    meta = {"model": engine.name, "seconds": round(time.perf_counter() - started, 4), **extra}
    return Attribution(
        scores=scores.detach().double().cpu().numpy(), token_ids=np.array(ids[:position]),
        token_bytes=[engine.bytes_of(i) for i in ids[:position]], position=position,
        target_id=ids[position], target_bytes=engine.bytes_of(ids[position]), method=method, value=value,
        contrast_id=contrast_id, contrast_bytes=None if contrast_id is None else engine.bytes_of(contrast_id),
        meta=meta,
    )
