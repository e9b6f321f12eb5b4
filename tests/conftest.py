"""Shared fixtures: the real default model, loaded once per test session; the suite's order options
(``--reverse``, ``--shuffle SEED``: any order must pass); the SIGINT guard the Ctrl-C tests need; and
how the suite is split over two processes (``pytest_xdist_make_scheduler``).
"""

from __future__ import annotations

import os
import random
import signal
from pathlib import Path

import pytest

# Two cores, shared: one torch thread per process avoids oversubscription collapse.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def pytest_addoption(parser):
    group = parser.getgroup("logprob_viz order")
    group.addoption("--reverse", action="store_true", help="run the collected tests in reverse order")
    group.addoption("--shuffle", type=int, metavar="SEED", default=None,
                    help="run the collected tests in a random order drawn from SEED")


def pytest_configure(config):
    # A program started in the background by a non-interactive shell (`cmd &` in a script, many CI
    # runners) inherits SIGINT as ignored, and Python then leaves it ignored: a Ctrl-C, `kill -INT`
    # and `_thread.interrupt_main()` (which does nothing while SIGINT is ignored) never reach it.
    # The suite's Ctrl-C tests simulate a user's interrupt, as a terminal or Jupyter's kernel (which
    # installs this same handler around every cell) delivers it, and pytest's own Ctrl-C summary
    # needs it too: the suite handles SIGINT as Python does by default, however it was started.
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL):
        signal.signal(signal.SIGINT, signal.default_int_handler)


# The suite runs in two processes (scripts/test.sh: pytest-xdist), each group of tests on one of
# them. The JupyterLab tests are one group: one JupyterLab server and one chromium, while the other
# process runs the rest beside it (they keep about one of the two cores busy). Each live server
# suite is a group (one server, started and stopped by the process that runs it, so no other
# process loses it midway), and every other file a group of its own (its module fixtures are made
# once). pytest-xdist's own `xdist_group` marks cannot say this under pytest 9.2, which no longer
# reads the node ids they rewrite, so a scheduler does.
WHOLE_GROUPS = {"browser": "browser", "vllm_live": "vllm", "llamacpp_live": "llamacpp"}


def xdist_group_of(path: Path) -> str:
    """The group of the test file at `path` (relative to tests/): its top folder's, or its own. The
    browser tests of other hosts (browser/hosts: Voila, marimo, Panel, each its own server) are files."""
    whole = len(path.parts) > 1 and path.parts[:2] != ("browser", "hosts")
    return WHOLE_GROUPS.get(path.parts[0], path.as_posix()) if whole else path.as_posix()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """LoadScopeScheduling (a scope runs whole on one process) with our groups as the scopes."""

        def _split_scope(self, nodeid: str) -> str:
            path = Path(nodeid.split("::", 1)[0])
            return xdist_group_of(path.relative_to("tests")) if path.parts[:1] == ("tests",) else path.as_posix()

    return GroupScheduling(config, log)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    if config.getoption("--reverse"):
        items.reverse()
    seed = config.getoption("--shuffle")
    if seed is not None:
        random.Random(seed).shuffle(items)


def pytest_report_header(config):
    order = ["reversed" if config.getoption("--reverse") else None,
             None if config.getoption("--shuffle") is None else f"shuffled (seed {config.getoption('--shuffle')})"]
    return f"test order: {', '.join(o for o in order if o) or 'as collected'}"


@pytest.fixture(autouse=True)
def _sigint_stays_with_python():
    """A test that leaves SIGINT ignored or taken over fails itself, not a later Ctrl-C test."""
    before = signal.getsignal(signal.SIGINT)
    yield
    after = signal.getsignal(signal.SIGINT)
    if after is not before:
        signal.signal(signal.SIGINT, before)  # the tests after this one get Python's handling back
        pytest.fail(f"this test left the SIGINT handler changed ({before!r} -> {after!r}): a later Ctrl-C "
                    "(or _thread.interrupt_main) would be lost; restore it in the test", pytrace=False)


@pytest.fixture(scope="session")
def runner():
    import torch

    import logprob_viz as lv

    torch.set_num_threads(1)
    return lv.load()


@pytest.fixture(scope="session")
def reference_model():
    """The default model loaded a second time, with plain transformers: the independent check."""
    import torch
    from transformers import AutoModelForCausalLM

    from logprob_viz.sources.local.default_model import default_model_path

    torch.set_num_threads(1)
    return AutoModelForCausalLM.from_pretrained(default_model_path(), dtype=torch.float32).eval()


@pytest.fixture(scope="session")
def rounded(runner):
    """The default model with every weight rounded to bf16 (computed in float32): a real, small divergence
    from `runner`, the candidate of the divergence tests."""
    import copy

    import torch

    import logprob_viz as lv

    model = copy.deepcopy(runner.model)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
    return lv.load((model, runner.tokenizer))
