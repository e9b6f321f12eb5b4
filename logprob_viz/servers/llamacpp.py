"""A local llama.cpp server (``llama-server``) serving the default model's GGUF file itself.

    python -m logprob_viz.servers.llamacpp build   # once: llama-server and two tools (~9 min on 2 cores)
    python -m logprob_viz.servers.llamacpp start   # background server on 127.0.0.1, prints its URL
    python -m logprob_viz.servers.llamacpp url     # the URL of the running server
    python -m logprob_viz.servers.llamacpp stop    # stops the server this module started (pid file)

The URL is the server's root: llama.cpp's own API is there (``/completion`` with ``n_probs``,
``/tokenize``, ``/props``) and its OpenAI-compatible one under ``/v1`` (``lv.connect(url + "/v1")``).

The recipe: llama.cpp's source is taken from the PyPI source distribution of ``llama-cpp-python``
(pinned below; it vendors llama.cpp with ``tools/server``), so it comes from the same registry as
everything else, and only three targets are built with plain cmake: ``llama-server``, and
``llama-perplexity`` and ``llama-quantize`` (llama.cpp's own KL-divergence statistics and the
requantized file they compare, the reference figures for ``lv.divergence``; ``llamacpp_tools.py``
runs them). They share the server's compiled libraries, so adding them to a build that has only
the server compiles their own four source files (56 s measured on 2 busy cores). No web UI, no
prebuilt-UI download, no curl or OpenSSL, no ``-march=native`` (the binaries stay valid if the
cache folder moves to another CPU).
Everything lives under ``$LOGPROB_VIZ_LLAMACPP_HOME`` (default ``<logprob_viz cache>/llama.cpp-<version>``)::

    dl/                        the sdist
    llama_cpp_python-<v>/      its unpacked source (vendor/llama.cpp)
    build/                     cmake's build folder; build/bin/llama-server (and the tools), build.log,
                               build.ok and <tool>.ok (written once a target is completely built)
    server.pid, server.port, server.log, install.lock

Needs cmake (>= 3.14) and a C++17 compiler (Debian: ``apt-get install cmake g++``).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

from ..sources.local import default_model
from . import process

__all__ = ["LlamaCppServerError", "home", "build", "is_built", "binary", "server_binary", "start", "stop", "url",
           "is_running", "pid", "SERVER", "TOOLS", "TARGETS"]

logger = logging.getLogger(__name__)

LLAMA_CPP_PYTHON_VERSION = "0.3.36"  # its sdist vendors the llama.cpp this module builds
SERVED_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"  # the same id lv.load() takes (and vLLM serves)
CONTEXT = 2048  # tokens per request, as the vLLM server; the model was trained on 8192
SERVER = "llama-server"
TOOLS = ("llama-perplexity", "llama-quantize")  # llama.cpp's KL-divergence statistics and requantizing
TARGETS = (SERVER, *TOOLS)  # what `build` makes by default (the set-up's command)
CMAKE_OPTIONS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_BUILD_UI=OFF",  # the web UI needs npm; the server's API is all we use
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # ... and its prebuilt copy is a download at configure time
    "-DLLAMA_CURL=OFF",  # no model downloads from the server
    "-DLLAMA_OPENSSL=OFF",
    "-DGGML_NATIVE=OFF",  # portable x86-64 kernels chosen at run time, not this CPU's -march=native
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
]


class LlamaCppServerError(process.LocalServerError):
    """llama-server could not be built, started or reached; the message says why."""


# -- paths -------------------------------------------------------------------------------------


def home() -> Path:
    """The folder holding the source, the build and the server's pid/port/log files."""
    env = os.environ.get("LOGPROB_VIZ_LLAMACPP_HOME")
    return Path(env).expanduser() if env else default_model.cache_dir() / f"llama.cpp-{LLAMA_CPP_PYTHON_VERSION}"


def _files(root: Path | None = None) -> process.ServerFiles:
    return process.ServerFiles(Path(root) if root is not None else home(), "llama-server", LlamaCppServerError)


def binary(target: str = SERVER, root: Path | None = None) -> Path:
    """Where the build puts the program `target` (one of `TARGETS`)."""
    return (Path(root) if root is not None else home()) / "build" / "bin" / target


def server_binary(root: Path | None = None) -> Path:
    return binary(SERVER, root)


def _marker(target: str, root: Path) -> Path:
    # written after a complete build of `target`, so an interrupted one is never trusted; the
    # server's keeps its first name (build.ok) so caches built before the tools stay valid
    return root / "build" / ("build.ok" if target == SERVER else f"{target}.ok")


def is_built(root: Path | None = None, targets: tuple[str, ...] = (SERVER,)) -> bool:
    """Whether every program in `targets` (default: the server) is completely built under `root`."""
    root = Path(root) if root is not None else home()
    return all(binary(target, root).is_file() and _marker(target, root).is_file() for target in targets)


# -- build ---------------------------------------------------------------------------------------


def build(root: Path | None = None, jobs: int | None = None, progress: Callable[[str], None] | None = None,
          targets: tuple[str, ...] = TARGETS) -> Path:
    """Build the programs `targets` (default all three) under `root` (default `home()`) once; return the server's path.

    Downloads the pinned ``llama-cpp-python`` sdist with pip, unpacks it and builds the targets of
    its vendored llama.cpp (8.5 min measured for the server on 2 busy cores). Incremental: only the
    targets not yet built are built, in the same cmake folder, so a cache that has the server gets
    the two tools by compiling their own sources only. `progress` receives one line per new
    percentage (default: printed).
    """
    root = Path(root) if root is not None else home()
    say = progress or (lambda line: print(line, flush=True))
    unknown = sorted(set(targets) - set(TARGETS))
    if unknown:
        raise ValueError(f"unknown llama.cpp target(s) {unknown}: this recipe builds {', '.join(TARGETS)}")
    with process.install_lock(_files(root).lock):
        needed = [target for target in targets if not is_built(root, (target,))]
        if not needed:
            return server_binary(root)
        missing = [tool for tool in ("cmake", "c++") if shutil.which(tool) is None]
        if missing:
            raise LlamaCppServerError(f"building {', '.join(needed)} needs {' and '.join(missing)}, not found on "
                                      "PATH; install them (Debian/Ubuntu: apt-get install cmake g++) and try again")
        source = _source(root, say)
        build_dir = root / "build"
        for target in needed:
            _marker(target, root).unlink(missing_ok=True)
        jobs = jobs or int(os.environ.get("LOGPROB_VIZ_LLAMACPP_JOBS") or os.cpu_count() or 2)
        started = time.monotonic()
        # configuring again is cheap and rewrites nothing that changed, so the objects already
        # compiled (a cache with the server only) are reused by the build below
        say(f"llama.cpp: configuring {source} (cmake)")
        _stream(["cmake", "-S", source, "-B", build_dir, *CMAKE_OPTIONS], build_dir / "build.log", say,
                append=(build_dir / "CMakeCache.txt").is_file())  # an added target keeps the first build's log
        say(f"llama.cpp: building {', '.join(needed)} with {jobs} jobs (minutes; log: {build_dir / 'build.log'})")
        _stream(["cmake", "--build", build_dir, "--target", *needed, "-j", str(jobs)],
                build_dir / "build.log", say, append=True)
        elapsed = f"built in {time.monotonic() - started:.0f} s"
        for target in needed:
            if not binary(target, root).is_file():
                raise LlamaCppServerError(f"the build finished but {binary(target, root)} is missing; see {build_dir}")
            _marker(target, root).write_text(elapsed + "\n")
        say(f"llama.cpp: {', '.join(needed)} {elapsed}: {binary(needed[0], root).parent}")
    return server_binary(root)


def _source(root: Path, say: Callable[[str], None]) -> Path:
    """The vendored llama.cpp folder of the pinned sdist, downloaded and unpacked if needed."""
    unpacked = root / f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}" / "vendor" / "llama.cpp"
    if (unpacked / "tools" / "server").is_dir():
        return unpacked
    dl = root / "dl"
    sdists = sorted(dl.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"))
    if not sdists:
        say(f"llama.cpp: downloading the llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION} source distribution (75 MB)")
        # --no-binary for this package only: with ":all:" pip builds every build dependency of the
        # sdist's metadata step from source too (scikit-build-core, hatchling, setuptools...), which
        # took over 10 minutes on a fresh machine; their wheels do the same job in seconds.
        process.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q", "--no-deps",
                     "--no-binary", "llama-cpp-python", "-d", dl, f"llama-cpp-python=={LLAMA_CPP_PYTHON_VERSION}"],
                    "downloading the llama-cpp-python sdist", LlamaCppServerError)
        sdists = sorted(dl.glob(f"llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz"))
        if not sdists:
            raise LlamaCppServerError(f"pip downloaded no llama_cpp_python-{LLAMA_CPP_PYTHON_VERSION}.tar.gz into {dl}")
    safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # no paths outside `root` (3.12+)
    with tarfile.open(sdists[-1]) as tar:
        tar.extractall(root, **safe)
    if not (unpacked / "tools" / "server").is_dir():
        raise LlamaCppServerError(f"{sdists[-1].name} holds no vendor/llama.cpp/tools/server; is the version right?")
    return unpacked


_PERCENT = re.compile(r"^\[\s*(\d+)%\]")


def _stream(cmd: list, log_path: Path, say: Callable[[str], None], append: bool = False) -> None:
    """Run a build command, keeping its output in `log_path` and reporting each new percentage."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    last = None
    with open(log_path, "a" if append else "w") as log:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            log.write(line)
            m = _PERCENT.match(line)
            if m and m.group(1) != last:
                last = m.group(1)
                say(f"llama.cpp: {line.strip()}")
        proc.wait()
    if proc.returncode != 0:
        tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-25:])
        raise LlamaCppServerError(f"{cmd[0]} failed (exit {proc.returncode}): {' '.join(map(str, cmd))}\n{tail}")


# -- start / stop --------------------------------------------------------------------------------


def is_running(root: Path | None = None, state: Path | None = None) -> bool:
    """Whether the server started from `root` (or its `state` folder; pid file) is alive."""
    return process.read_pid(_files(state or root)) is not None


def pid(root: Path | None = None, state: Path | None = None) -> int | None:
    """The running server's process id (from its pid file), None when none runs."""
    return process.read_pid(_files(state or root))


def url(root: Path | None = None, state: Path | None = None) -> str:
    """The root URL (``http://127.0.0.1:PORT``) of the server started from `root`; OpenAI routes are under /v1."""
    return process.root_url(_files(state or root), LlamaCppServerError)


def _ready(port: int) -> bool:
    # /health answers 503 while the model loads, 200 {"status": "ok"} once requests can be served
    return process.answers(f"http://127.0.0.1:{port}/health", lambda body: body.get("status") == "ok")


def start(
    port: int | None = None,
    root: Path | None = None,
    timeout: float = 120,
    build_if_needed: bool = True,
    model: Path | str | None = None,
    state: Path | None = None,
) -> str:
    """Start llama-server in the background on the default model's GGUF file; return its root URL.

    Builds first if needed (minutes, once). `port`: default ``$LOGPROB_VIZ_LLAMACPP_PORT`` or a
    free one. `model`: another GGUF file. A server already started from `root` is reused.
    `state`: a folder for the server's pid, port and log files instead of `root`, so a second
    server runs from the same build (e.g. one a test stops and restarts while the shared one stays).
    """
    root = Path(root) if root is not None else home()
    if not is_built(root):
        if not build_if_needed:
            raise LlamaCppServerError(f"llama-server is not built under {root}; "
                                      "run: python -m logprob_viz.servers.llamacpp build")
        build(root, targets=(SERVER,))  # the server only: the tools come with the set-up's `build`
    try:
        gguf = Path(model) if model is not None else default_model.gguf_path()
    except FileNotFoundError as e:  # the default model's package is not installed: say how to install it
        raise LlamaCppServerError(str(e)) from None
    if not gguf.is_file():
        raise LlamaCppServerError(f"no GGUF file at {gguf}")
    port = int(port or os.environ.get("LOGPROB_VIZ_LLAMACPP_PORT") or process.free_port())
    cmd = [
        server_binary(root), "--model", gguf,
        "--host", "127.0.0.1", "--port", port,
        "--alias", SERVED_NAME,
        "--ctx-size", CONTEXT,
        "--parallel", "1",  # one slot: every request sees the same cache state and batch shapes
    ]
    port = process.launch(_files(state or root), cmd, port, _ready, timeout,
                          stop_hint=" (python -m logprob_viz.servers.llamacpp stop)")
    return f"http://127.0.0.1:{port}"


def stop(root: Path | None = None, timeout: float = 15, state: Path | None = None) -> bool:
    """Stop the server started from `root` or `state` (SIGINT to its process group, SIGKILL after `timeout`)."""
    return process.stop(_files(state or root), timeout)


def main(argv: list[str] | None = None) -> int:
    return process.command_line(
        sys.modules[__name__], argv, prog="python -m logprob_viz.servers.llamacpp",
        setup=("build", "build llama-server, llama-perplexity and llama-quantize from source (once, minutes)",
               lambda: f"built: {build().parent}/{{{','.join(TARGETS)}}}"),
        what_url="URL", port_help="default $LOGPROB_VIZ_LLAMACPP_PORT or a free port", start_timeout=120,
        start_options=lambda start: start.add_argument("--model", default=None,
                                                       help="a GGUF file (default: the default model's)"))


if __name__ == "__main__":
    sys.exit(main())
