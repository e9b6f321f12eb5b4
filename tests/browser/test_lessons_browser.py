"""A lesson as a student sees it: notebooks/03_what_it_almost_said.ipynb run in JupyterLab.

The notebook is opened as shipped (its prose, no outputs), every cell is run with JupyterLab's
own *Run All Cells*, and the page must then show the lesson's views: the greedy answer with
" Neptune" in it and the branch that says " Jupiter" instead, with no error output anywhere.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from browser.lab import MODEL_TIMEOUT, cell, open_notebook, save_screenshot, wait_cell_done

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSON = "03_what_it_almost_said.ipynb"


def test_lesson_3_runs_in_jupyterlab_and_shows_the_branch(page, lab_server):
    shutil.copy(NOTEBOOKS / LESSON, lab_server.root / LESSON)
    cells = json.loads((NOTEBOOKS / LESSON).read_text())["cells"]
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
    open_notebook(page, lab_server, LESSON)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    for i in code:
        wait_cell_done(page, i, timeout=MODEL_TIMEOUT)
    assert page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type*='error']").count() == 0
    first_view, branch_view = (cell(page, code[n]).locator(".lv-root") for n in (0, 2))
    first_view.wait_for(timeout=60_000)
    branch_view.wait_for(timeout=60_000)
    assert " Neptune" in first_view.locator(".lv-text").inner_text().replace("·", " ")
    assert " Jupiter" in branch_view.locator(".lv-text").inner_text().replace("·", " ")
    cell(page, code[2]).scroll_into_view_if_needed()
    save_screenshot(page, "lesson-03.png", ".jp-NotebookPanel:visible .jp-WindowedPanel-outer")
