"""Fixtures of the browser suite: a real JupyterLab server and a headless Debian chromium.

The server is the venv's own `jupyter-lab` executable (so the pid we hold is the server's),
listening on 127.0.0.1 at a free port, serving a temporary folder, with no token and nothing
that reaches the internet. Its kernels run the venv's python (the server resolves the python3
kernelspec's "python" to its own interpreter) and import logprob_viz from this checkout.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser.lab import ARTIFACTS, REPO
from logprob_viz.servers.process import free_port

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SERVER_START_TIMEOUT = 120  # s; the machine has 2 shared cores
# Kernels kept alive between tests: the most recently used, so that the tests of one notebook share
# its kernel; the rest are shut down (each holds a model: 48 of them took 11 GiB of a 24 GiB machine).
KERNELS_KEPT = 3


def _children(pid: int) -> list[int]:
    """Direct children of `pid` (Linux /proc), e.g. the kernels a server started."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


class LabServer:
    def __init__(self, root: Path, port: int, proc: subprocess.Popen, log: Path):
        self.root, self.port, self.proc, self.log = root, port, proc, log
        self.url = f"http://127.0.0.1:{port}"

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(self.url + path, method=method)
        with urllib.request.urlopen(req, timeout=10) as resp:
            body = resp.read()
        return json.loads(body) if body else None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return "(no server log)"

    def keep_recent_kernels(self, n: int) -> None:
        """Shut down every notebook session but the `n` whose kernels were active last."""
        try:
            sessions = self.api("/api/sessions")
            sessions.sort(key=lambda s: (s.get("kernel") or {}).get("last_activity") or "", reverse=True)
            for session in sessions[n:]:
                self.api(f"/api/sessions/{session['id']}", method="DELETE")
        except (OSError, urllib.error.URLError, ValueError):
            pass  # a server that is gone has no kernels left

    def shutdown_kernels(self) -> None:
        try:
            for kernel in self.api("/api/kernels"):
                self.api(f"/api/kernels/{kernel['id']}", method="DELETE")
        except (OSError, urllib.error.URLError, ValueError):
            pass


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory):
    jupyter_lab = Path(sys.executable).parent / "jupyter-lab"
    if not jupyter_lab.exists():
        pytest.fail(f"{jupyter_lab} not found: install the dev extras into this venv (pip install -e '.[dev]')")
    root = tmp_path_factory.mktemp("lab")
    private = tmp_path_factory.mktemp("jupyter-private")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log = ARTIFACTS / "jupyter-server.log"
    port = free_port()
    env = dict(os.environ)
    env.update(
        OMP_NUM_THREADS="1",  # torch in the kernel: one thread, the machine is small and shared
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        JUPYTER_CONFIG_DIR=str(private / "config"),  # no user config changes what we test
        JUPYTER_RUNTIME_DIR=str(private / "runtime"),
        IPYTHONDIR=str(private / "ipython"),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    # JupyterLab asks "get notified about official Jupyter news?" in a toast that covers a corner of
    # every picture, and answering it while it animates raced (a click on a detached button, a
    # page error from the toast's removal): told here that the answer is no, it never asks
    notification = private / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text('{"fetchNews": "false"}')
    cmd = [
        str(jupyter_lab),
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        f"--LabApp.workspaces_dir={private / 'workspaces'}",
        f"--LabApp.user_settings_dir={private / 'settings'}",
        # window.jupyterapp in the page, in JupyterLab and in Notebook 7: the tests read the page's
        # kernel state and switch themes through it
        "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = LabServer(root, port, proc, log)
    kernels: set[int] = set()
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                pytest.fail(
                    f"jupyter-lab exited with code {proc.returncode} while starting; its log:\n{server.log_tail()}"
                )
            try:
                server.api("/api/status")
                break
            except (OSError, urllib.error.URLError):
                if time.monotonic() > deadline:
                    pytest.fail(
                        f"jupyter-lab did not answer /api/status within {SERVER_START_TIMEOUT} s; "
                        f"log:\n{server.log_tail()}"
                    )
                time.sleep(0.5)
        server.remember_kernels = lambda: kernels.update(_children(proc.pid))
        yield server
    finally:
        kernels.update(_children(proc.pid))
        server.shutdown_kernels()
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        for pid in kernels:  # anything the server started and did not stop
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


@pytest.fixture(autouse=True)
def _few_kernels(request):
    """After each test of the lab server, only the last few kernels stay (see KERNELS_KEPT)."""
    yield
    server = request.node.funcargs.get("lab_server")
    if server is not None:
        server.keep_recent_kernels(KERNELS_KEPT)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: apt-get install -y chromium")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, device_scale_factor=2)
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    errors: list[str] = []
    # the message, and where it was thrown (a library's or ours: the message alone does not say)
    pg.on("pageerror", lambda exc: errors.append(f"{exc}\n{getattr(exc, 'stack', '') or ''}".strip()))
    pg.page_errors = errors
    try:
        yield pg
    finally:
        context.close()
