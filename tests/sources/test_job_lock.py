"""A cell that finds the runner busy is warned at its own line, not at a path inside the package
(lesson 2 showed `logprob_viz/sources/jobs.py:82` in a red box)."""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

import pytest

import logprob_viz
from logprob_viz.sources.job_lock import RunnerJobs

PACKAGE = str(Path(logprob_viz.__file__).resolve().parent)


def held_elsewhere(jobs: RunnerJobs, what: str) -> threading.Event:
    """Another thread takes the runner for `what` and gives it back when the returned event is set."""
    taken, done = threading.Event(), threading.Event()

    def hold() -> None:
        with jobs.hold(what):
            taken.set()
            done.wait(30)

    threading.Thread(target=hold, daemon=True).start()
    assert taken.wait(30)
    return done


def waited(jobs: RunnerJobs, call) -> list[warnings.WarningMessage]:
    done = held_elsewhere(jobs, "the explorer's readout of a pinned token")
    release = threading.Timer(1.5, done.set)  # the holder ends while this thread waits, after the 1 s notice delay
    release.start()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    release.join()
    assert result == 42
    return [w for w in caught if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("how", ["call", "held"])
def test_the_waiting_warning_names_the_callers_line(how):
    jobs = RunnerJobs()
    if how == "call":
        caught = waited(jobs, lambda: jobs.call("runner.score", lambda: 42))  # the line warned
    else:
        caught = waited(jobs, lambda: sum(jobs.held("runner.stream", iter([40, 2]))))  # the line warned
    assert len(caught) == 1, [str(w.message) for w in caught]
    w = caught[0]
    assert Path(w.filename).resolve() == Path(__file__).resolve(), (w.filename, w.lineno)
    assert PACKAGE not in str(w.message) and PACKAGE not in w.filename
    line = Path(__file__).read_text().splitlines()[w.lineno - 1]
    assert line.endswith("# the line warned"), line  # the caller's own line, where it called the runner
    said = str(w.message)
    assert said.startswith(f"runner.{'score' if how == 'call' else 'stream'} waits for the runner, which is busy "
                           "with the explorer's readout of a pinned token"), said
