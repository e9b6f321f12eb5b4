"""The shipped notebooks run top to bottom, headless, on the real default model."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).parent.parent / "notebooks"


def run_notebook(name: str, timeout: int = 600) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    resources = {"metadata": {"path": str(NOTEBOOKS)}}  # run where the notebook lives, as a user does
    NotebookClient(nb, timeout=timeout, kernel_name="python3", resources=resources).execute()
    return nb


def test_quickstart_runs():
    nb = run_notebook("quickstart.ipynb")
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    widgets = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(widgets) >= 4, "each trace (and the view) shows as a widget"
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "perplexity" in text
