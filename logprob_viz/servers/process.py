"""What every local server of logprob_viz does the same way: files, locks, launching, readiness, stopping.

A server lives in one folder (its "home") holding ``server.pid``, ``server.port``, ``server.log``
and ``install.lock``. It is launched in its own process group (so stopping it stops its children
too), bound to 127.0.0.1, and counted as started once an HTTP probe answers. The server modules
(``vllm.py``, ``llamacpp.py``) only say how to install and which command to run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

logger = logging.getLogger(__name__)


class LocalServerError(RuntimeError):
    """A local server could not be installed, built, started or reached; the message says why."""


@dataclass(frozen=True)
class ServerFiles:
    """The files of one server's home folder, and the word its command line must contain."""

    root: Path
    program: str  # e.g. b"vllm" / b"llama-server" in /proc/PID/cmdline: a stale pid file is not trusted
    error: type[LocalServerError] = LocalServerError

    # the files of the home folder, by name: `files.pid` is `root / "server.pid"`
    pid = property(lambda self: self.root / "server.pid")
    port = property(lambda self: self.root / "server.port")
    log = property(lambda self: self.root / "server.log")
    lock = property(lambda self: self.root / "install.lock")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(cmd: list, what: str, error: type[LocalServerError] = LocalServerError, **kwargs) -> None:
    """Run a command to completion; on failure raise `error` with the command and its last output lines."""
    shown = " ".join("<script>" if "\n" in str(c) else str(c) for c in cmd)
    logger.info("%s: %s", what, shown)
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-25:])
        raise error(f"{what} failed (exit {proc.returncode}): {shown}\n{tail}")


@contextlib.contextmanager
def install_lock(path: Path):
    """Hold an exclusive file lock: two test sessions (or a user and a test run) never install at once."""
    import fcntl  # POSIX only: imported where a lock is taken, so the module itself imports anywhere

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def read_pid(files: ServerFiles) -> int | None:
    """The server's pid from its pid file, if that process is alive and runs `files.program`."""
    try:
        pid = int(files.pid.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    try:  # a stale pid file may name a pid the system has given to another program
        if files.program.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return None
    except OSError:
        pass  # no /proc (macOS): trust the pid file
    return pid


def root_url(files: ServerFiles, error: type[LocalServerError] = LocalServerError) -> str:
    """``http://127.0.0.1:PORT`` of the server started from `files` (its port file)."""
    if not files.port.exists():
        raise error(f"no server was started from {files.root} (no {files.port.name})")
    return f"http://127.0.0.1:{files.port.read_text().strip()}"


def log_tail(files: ServerFiles, n: int = 30) -> str:
    try:
        return "\n".join(files.log.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def answers(url: str, check: Callable[[dict], bool] = bool, timeout: float = 2) -> bool:
    """Whether GET `url` answers 200 with a JSON body that passes `check`."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status == 200 and bool(check(json.load(r)))
    except (OSError, ValueError):
        return False


def launch(
    files: ServerFiles,
    cmd: list,
    port: int,
    ready: Callable[[int], bool],
    timeout: float,
    env: dict | None = None,
    stop_hint: str = "",
) -> int:
    """Start `cmd` in the background (or join the one already started from `files.root`); return its port.

    `ready(port)` probes the server. If a server from this home is already running it is waited
    for and reused. Raises `files.error` with the log's last lines when the process exits, or is
    not ready within `timeout` seconds (then it is stopped).
    """
    err = files.error
    if read_pid(files) is not None:  # already running (or being started by another process)
        port = int(files.port.read_text().strip())
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and read_pid(files) is not None:
            if ready(port):
                return port
            time.sleep(1)
        raise err(f"a server started from {files.root} (pid file) does not answer on port {port}; stop it{stop_hint} "
                  f"and start again. Last lines of {files.log}:\n{log_tail(files)}")
    if ready(port):
        raise err(f"port {port} already serves a server not started from {files.root}; choose another port")
    files.root.mkdir(parents=True, exist_ok=True)
    files.port.write_text(str(port))
    with open(files.log, "wb") as log:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)  # own process group, stopped as one
    files.pid.write_text(str(proc.pid))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready(port):
            return port
        if proc.poll() is not None:
            files.pid.unlink(missing_ok=True)
            raise err(f"the server exited with code {proc.returncode} while starting; "
                      f"last lines of {files.log}:\n{log_tail(files)}")
        time.sleep(0.5)
    stop(files)
    raise err(f"the server was not ready after {timeout:.0f} s; last lines of {files.log}:\n{log_tail(files)}")


def stop(files: ServerFiles, timeout: float = 30) -> bool:
    """Stop the server started from `files.root`: SIGINT to its process group, SIGKILL after `timeout` s."""
    pid = read_pid(files)
    if pid is None:
        files.pid.unlink(missing_ok=True)
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
        time.sleep(0.3)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    files.pid.unlink(missing_ok=True)
    return True


def command_line(
    server: ModuleType,
    argv: list[str] | None,
    *,
    prog: str,
    setup: tuple[str, str, Callable[[], str]],
    what_url: str,
    port_help: str,
    start_timeout: float,
    error: type[LocalServerError] = LocalServerError,
    start_options: Callable[[argparse.ArgumentParser], None] = lambda parser: None,
) -> int:
    """``python -m logprob_viz.servers.<name>``: a set-up command, then start / stop / url; the exit status.

    `server` is the server module: its docstring describes the commands, its ``start``, ``stop``,
    ``is_running``, ``url`` and ``home`` do them. `setup` is (command, help, what it does, returning
    the line to print); `start_options` adds the server's own options to ``start``, each passed to
    ``server.start`` under its name. An `error` is printed after `prog`'s last word, not raised.
    """
    parser = argparse.ArgumentParser(prog=prog, description=server.__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    setup_command, setup_help, do_setup = setup
    sub.add_parser(setup_command, help=setup_help)
    start = sub.add_parser("start", help=f"start the server in the background and print its {what_url}")
    start.add_argument("--port", type=int, default=None, help=port_help)
    start_options(start)
    start.add_argument("--timeout", type=float, default=start_timeout)
    sub.add_parser("stop", help="stop the server started by `start`")
    sub.add_parser("url", help=f"print the {what_url} of the running server")
    args = vars(parser.parse_args(argv))
    command = args.pop("cmd")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        if command == setup_command:
            print(do_setup())
        elif command == "start":
            print(server.start(**args))
        elif command == "stop":
            print("stopped" if server.stop() else "no server was running")
        elif command == "url":
            if not server.is_running():
                print(f"no server is running from {server.home()}", file=sys.stderr)
                return 1
            print(server.url())
    except error as e:
        print(f"{prog.rsplit('.', 1)[-1]}: {e}", file=sys.stderr)
        return 1
    return 0
