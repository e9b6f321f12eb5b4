"""Which distribution a server's numbers are, where the server documents it: ``meta["numbers"]``.

- ``"raw"``: the model's own distribution at T = 1, before the samplers ("as the model gave them");
- ``"processed"``: the distribution the token was sampled from, after temperature and the cuts
  ("as sampled from").

Tagged only where the server says so: llama.cpp's ``/completion`` (``n_probs`` alone gives the
softmax of the logits; ``post_sampling_probs: true`` the probabilities after its sampler chain: the
server's README), Ollama (the logprobs of the logits before temperature and the samplers:
ollama/ollama#16196), and vLLM where a body names its ``logprobs_mode`` (``raw_logprobs``,
``raw_logits``, ``processed_logprobs``, ``processed_logits``: a server flag, not in its standard
responses). OpenAI does not document whether its logprobs follow temperature, so its bodies are not
tagged. ``meta["numbers_from"]`` says what the tag rests on. `lv.audit` can overrule the tag: its
verdict (``meta["audit"]``) is what the view labels when there is one.
"""

from __future__ import annotations

__all__ = ["numbers_tag", "vllm_mode_tag"]


def numbers_tag(kind: str, why: str) -> dict:
    """The meta fields of a tag: ``numbers`` ("raw" or "processed") and ``numbers_from`` (why)."""
    if kind not in ("raw", "processed"):
        raise ValueError(f"a numbers tag is 'raw' or 'processed', got {kind!r}")
    return {"numbers": kind, "numbers_from": why}


def vllm_mode_tag(body) -> dict:
    """The tag of a body that names vLLM's ``logprobs_mode`` (at its top level), else nothing."""
    mode = body.get("logprobs_mode") if isinstance(body, dict) else None
    if not isinstance(mode, str) or not mode.startswith(("raw_", "processed_")):
        return {}
    return numbers_tag(mode.split("_", 1)[0], f"vLLM logprobs_mode={mode}")
