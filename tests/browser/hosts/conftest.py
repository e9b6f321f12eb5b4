"""Fixtures of the hosts suite: a real Voilà and a real marimo server, each started by the test on
127.0.0.1 at a free port; the browser and page are the browser suite's (tests/browser/conftest.py:
one headless Debian chromium for the whole session).

Each server is the venv's own executable (so the pid held is the server's); its kernels import
logprob_viz from this checkout (PYTHONPATH), reach nothing outside the machine, and are stopped
with the server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser.conftest import _children
from browser.lab import ARTIFACTS, REPO
from logprob_viz.servers.process import free_port

SERVER_START_TIMEOUT = 120  # s; the machine has 2 shared cores


class HostServer:
    """A started server: its url, process and log."""

    def __init__(self, name: str, port: int, proc: subprocess.Popen, log: Path) -> None:
        self.name, self.port, self.proc, self.log = name, port, proc, log
        self.url = f"http://127.0.0.1:{port}"

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no server log)"


def host_env(private: Path) -> dict:
    env = dict(os.environ)
    env.update(
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        JUPYTER_CONFIG_DIR=str(private / "jupyter-config"),
        JUPYTER_RUNTIME_DIR=str(private / "jupyter-runtime"),
        IPYTHONDIR=str(private / "ipython"),
        XDG_CONFIG_HOME=str(private / "config"),  # marimo's user config: none of this machine's
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    return env


def start_server(name: str, cmd: list[str], cwd: Path, env: dict, ready_path: str = "/"):
    """Start `cmd` (which listens on the port given as {port}), wait until it answers `ready_path`."""
    port = free_port()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = ARTIFACTS / f"{name}-server.log"
    cmd = [part.format(port=port) for part in cmd]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = HostServer(name, port, proc, log)
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{name} exited with code {proc.returncode} while starting; its log:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url + ready_path, timeout=10):
                return server
        except urllib.error.HTTPError:
            return server  # it answers (a status page is an answer)
        except (OSError, urllib.error.URLError):
            if time.monotonic() > deadline:
                stop_server(server)
                pytest.fail(f"{name} did not answer within {SERVER_START_TIMEOUT} s; log:\n{server.log_tail()}")
            time.sleep(0.5)


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        found += kids
        todo += kids
    return found


def stop_server(server: HostServer) -> None:
    """Stop the server, then anything it started (kernels) that is still there."""
    started = _descendants(server.proc.pid)
    server.proc.terminate()
    try:
        server.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait(timeout=10)
    for pid in started:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def venv_tool(name: str) -> Path:
    tool = Path(sys.executable).parent / name
    if not tool.exists():
        pytest.fail(f"{tool} not found: install the dev extras into this venv (pip install -e '.[dev]')")
    return tool


@pytest.fixture(scope="session")
def tokenizer():
    from transformers import AutoTokenizer

    from logprob_viz.sources.local.default_model import default_model_path

    return AutoTokenizer.from_pretrained(default_model_path())
