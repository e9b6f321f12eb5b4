"""A pinned position at another temperature: the top-K approximation and the exact value."""

from __future__ import annotations

import numpy as np

from ...records.trace import Trace
from .settings import Settings

__all__ = ["tempered_top_k", "exact_at"]


def tempered_top_k(top_logprobs, temperature: float) -> np.ndarray:
    """Probabilities of the top-K tokens under `temperature`, renormalised over the top K.

    An approximation: the exact tempered distribution needs the whole vocabulary's logits,
    which the trace does not keep (the tail outside the top K is left out). Temperature 0 is
    greedy: all the mass on the most likely token.
    """
    lp = np.asarray(top_logprobs, dtype=np.float64)
    finite = np.isfinite(lp)
    out = np.zeros_like(lp)
    if not finite.any():
        return out
    if temperature <= 0:
        out[int(np.argmax(np.where(finite, lp, -np.inf)))] = 1.0
        return out
    scaled = np.where(finite, lp / temperature, -np.inf)
    scaled -= scaled[finite].max()
    weights = np.where(finite, np.exp(scaled), 0.0)
    return weights / weights.sum()


def exact_at(runner, trace: Trace, at: int, settings: Settings) -> tuple[str, np.ndarray]:
    """(label, logprobs): token `at`'s top-K alternatives under `settings`, exactly, by one forward pass.

    The runner records the processed (sampled-from) distribution over the whole vocabulary; it is
    read at the same token ids as the trace's alternatives (-inf where the settings cut one off).
    """
    sampling = settings.sampling()
    if settings.temperature <= 0:
        return "greedy", np.where(np.arange(trace.k) == 0, 0.0, -np.inf)  # all the mass on the top token
    step = runner.generate(
        prompt_ids=trace.token_ids[:at].tolist(),
        max_new_tokens=1,
        top_logprobs=max(trace.k, 1),
        progress=False,
        **sampling,
    )
    processed = step.top_logprobs if step.processed_top_logprobs is None else step.processed_top_logprobs
    by_id = dict(zip(step.top_ids[-1].tolist(), processed[-1].tolist(), strict=True))
    label = ", ".join(f"{name}={value}" for name, value in sampling.items() if name != "seed")
    return label, np.array([by_id.get(int(i), -np.inf) for i in trace.top_ids[at]])
