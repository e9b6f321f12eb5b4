"""A corpus of choices (`Choices.to_corpus`: predicted, gold and right? beside the label) on a projector and
at 1400x900 (issue 49 item 9: "negat…", "predi…" were cut): every heading, label and option text whole, no
sideways scroll, the text column with room. The default model chooses between real options in the kernel."""

from __future__ import annotations

import pytest

from browser.lab import (
    MODEL_TIMEOUT,
    dark_theme,
    open_notebook,
    projector_page,
    run_cell,
    wait_for_output,
    write_notebook,
)
from browser.test_corpus_large_browser import ROOT, check_fit

pytestmark = pytest.mark.browser

PROMPTS = ["Review: I loved every minute of it. Sentiment:", "Review: A dull, tedious mess. Sentiment:",
           "Review: The acting was superb and the story moving. Sentiment:",
           "Review: I want my two hours back. Sentiment:"]
CELL = f"""\
import logprob_viz as lv
ch = lv.load().choose({PROMPTS!r}, [" positive", " negative"], gold=[0, 1, 0, 1], progress=False)
v = lv.CorpusView(ch.to_corpus())
v"""


def test_a_corpus_of_choices_shows_its_options_and_headings_whole(browser, page, lab_server):
    write_notebook(lab_server, "choices_corpus.ipynb", [CELL, "v"])
    page.set_viewport_size({"width": 1400, "height": 900})
    open_notebook(page, lab_server, "choices_corpus.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvx-root .lvx-data", MODEL_TIMEOUT)
    heads = page.locator(ROOT).locator(".lvx-traces .lvx-head .lvx-head-title").all_inner_texts()
    assert heads[:4] == ["#", "label", "predicted", "right?"], heads  # (gold: the label, Choices.to_corpus)
    check_fit(page, "corpus-choices-1400.png", 200)
    with projector_page(browser, lab_server, "choices_corpus.ipynb") as small:
        small.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")  # (a presenter's)
        run_cell(small, 1)
        with dark_theme(small, small.locator(ROOT)):
            check_fit(small, "corpus-choices-150-dark.png", 200)
    assert not page.page_errors, page.page_errors
