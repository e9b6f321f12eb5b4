"""The live llama.cpp suite's server: built once into the cache folder, started once per session.

The server is logprob_viz's own recipe (``python -m logprob_viz.servers.llamacpp``): llama-server
built from the llama.cpp source vendored in the ``llama-cpp-python`` sdist, serving the default
model's GGUF file on 127.0.0.1 at a free port. Building takes ~9 min on 2 cores the first time
(``scripts/setup.sh`` does it), starting ~1 s. If it cannot be built or started, every test here
fails with the reason. Set ``LOGPROB_VIZ_SKIP_LLAMACPP=1`` to skip the suite;
``LOGPROB_VIZ_LLAMACPP_HOME`` and ``LOGPROB_VIZ_LLAMACPP_PORT`` choose the folder and the port.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.llamacpp)


@pytest.fixture(scope="session")
def llamacpp_url():
    """The root URL (``http://127.0.0.1:PORT``) of a running llama-server on the default model's GGUF file."""
    if os.environ.get("LOGPROB_VIZ_SKIP_LLAMACPP", "").strip() not in ("", "0"):
        pytest.skip("LOGPROB_VIZ_SKIP_LLAMACPP is set: the live llama.cpp suite is skipped on request")
    from logprob_viz.servers import llamacpp

    started_here = not llamacpp.is_running()  # a server the user started from the same home is reused
    url = failure = None
    try:
        url = llamacpp.start(timeout=120)
    except Exception as e:  # noqa: BLE001  (whatever it was, the suite fails with it)
        failure = f"llama-server could not be built or started under {llamacpp.home()}: {e}"
    if failure:
        pytest.fail(failure, pytrace=False)
    yield url
    if started_here:
        llamacpp.stop()
