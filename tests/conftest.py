"""Shared fixtures: the real default model, loaded once per test session."""

from __future__ import annotations

import os

import pytest

# Two cores, shared: one torch thread per process avoids oversubscription collapse.
os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def runner():
    import torch

    import logprob_viz as lv

    torch.set_num_threads(1)
    return lv.load()


@pytest.fixture(scope="session")
def reference_model():
    """The default model loaded a second time, with plain transformers: the independent check."""
    import torch
    from transformers import AutoModelForCausalLM

    from logprob_viz.sources.local.default_model import default_model_path

    torch.set_num_threads(1)
    return AutoModelForCausalLM.from_pretrained(default_model_path(), dtype=torch.float32).eval()
