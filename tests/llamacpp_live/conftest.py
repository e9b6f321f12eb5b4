"""The live llama.cpp suite's server: built once into the cache folder, started once per session.

The server is logprob_viz's own recipe (``python -m logprob_viz.servers.llamacpp``): llama-server
built from the llama.cpp source vendored in the ``llama-cpp-python`` sdist, serving the default
model's GGUF file on 127.0.0.1 at a free port. Building takes ~9 min on 2 cores the first time
(``scripts/setup.sh`` does it), starting ~1 s. If it cannot be built or started, every test here
fails with the reason. Set ``LOGPROB_VIZ_SKIP_LLAMACPP=1`` to skip the suite;
``LOGPROB_VIZ_LLAMACPP_HOME`` and ``LOGPROB_VIZ_LLAMACPP_PORT`` choose the folder and the port.

``llamacpp_kld`` is llama.cpp's own KL-divergence run (``llama-quantize``, ``llama-perplexity``,
built from the same source; ``kld_reference.py``): the default model against a requantized copy,
its files (base.gguf, requant.gguf, base.kld, the text) and its parsed statistics, made once per
session for every test that compares figures with llama.cpp's.
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


def _skip_if_asked():
    if os.environ.get("LOGPROB_VIZ_SKIP_LLAMACPP", "").strip() not in ("", "0"):
        pytest.skip("LOGPROB_VIZ_SKIP_LLAMACPP is set: the live llama.cpp suite is skipped on request")


@pytest.fixture(scope="session")
def llamacpp_url():
    """The root URL (``http://127.0.0.1:PORT``) of a running llama-server on the default model's GGUF file."""
    _skip_if_asked()
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


@pytest.fixture(scope="session")
def llamacpp_kld(tmp_path_factory):
    """A `kld_reference.KldReference`: llama.cpp's KL-divergence statistics of the default model against
    a requantized copy, with the files they came from (the tools are built first if the cache lacks them)."""
    _skip_if_asked()
    from llamacpp_live.kld_reference import make_reference
    from logprob_viz.servers.llamacpp import LlamaCppServerError

    try:
        return make_reference(tmp_path_factory.mktemp("llamacpp_kld"))
    except LlamaCppServerError as e:  # the tools' errors too: the whole reason, not a traceback
        pytest.fail(f"llama.cpp's KL-divergence reference could not be made: {e}", pytrace=False)


@pytest.fixture(scope="session")
def float64_figures(llamacpp_kld):
    """Per token llama.cpp scored, both GGUF files in transformers in float64 (kld_reference.float64_figures)."""
    from llamacpp_live.kld_reference import float64_figures as figures

    return figures(llamacpp_kld)
