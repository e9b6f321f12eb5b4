"""The runner's progress bar: a generation that ends at its end of sequence, before max_new_tokens,
closes its bar as done; only an interrupted one is left as tqdm leaves a bar short of its total."""

from __future__ import annotations

import pytest

from logprob_viz.sources import progress as base
from logprob_viz.sources.progress import Progress

tqdm_notebook = pytest.importorskip("tqdm.notebook")


def notebook_bar(n: int, total: int, finished: bool):
    """A real tqdm notebook bar (the widget Jupyter shows) driven as a generation of n of total tokens drives it."""
    progress = Progress(True, total, tqdm_class=tqdm_notebook.tqdm)
    progress.bar.delay = 0  # shown from the start, as after PROGRESS_AFTER_S
    progress.update_to(n)
    if finished:
        progress.finish()
    progress.close()
    return progress.bar


def bar_style(bar) -> str:
    return bar.container.children[1].bar_style


def test_an_end_of_sequence_before_the_total_closes_the_bar_as_done():
    bar = notebook_bar(26, 50, finished=True)  # 26 of max_new_tokens=50, then <|im_end|>
    assert bar_style(bar) != "danger", "a normal stop must not look like a failure"
    assert (bar.n, bar.total) == (26, 26)


def test_a_bar_closed_short_without_finish_is_the_red_one_tqdm_shows():
    # What the user saw before: tqdm marks a notebook bar closed short of its total as failed.
    assert bar_style(notebook_bar(26, 50, finished=False)) == "danger"


def test_generate_finishes_its_bar_at_an_end_of_sequence_and_not_on_a_stop(runner, monkeypatch):
    seen = []

    class Recorded(tqdm_notebook.tqdm):  # a real notebook bar, kept to be looked at afterwards
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(self)

    real = base.Progress.__init__
    monkeypatch.setattr(base.Progress, "__init__",
                        lambda self, *a, **k: real(self, *a, **{**k, "tqdm_class": Recorded}))
    trace = runner.generate(messages=[{"role": "user", "content": "Say hi."}], max_new_tokens=64, progress=True)
    assert trace.meta["finish_reason"] == "eos" and len(trace.completion) < 64
    assert seen and bar_style(seen[-1]) != "danger"
    assert (seen[-1].n, seen[-1].total) == (len(trace.completion), len(trace.completion))
