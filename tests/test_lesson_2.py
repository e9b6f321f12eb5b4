"""Lesson 2's slider demo (notebooks/02_sampling.ipynb) shows a change a class can see.

The lesson runs headless as shipped, with one cell added at the end that moves the explorer's
temperature slider to 0.5 and to 1.5 and prints what the pinned-token panel then holds. The
independent computation: the model loaded a second time with plain transformers
(`reference_model`), its logits after the pinned token's prefix, and a float64 softmax at each
temperature, here.
"""

from __future__ import annotations

import json

import nbformat
import numpy as np
from nbclient import NotebookClient

from test_notebooks import NOTEBOOKS

LESSON = "02_sampling.ipynb"
TEMPERATURES = (0.5, 1.5)

# Appended to the lesson: the slider moved as a person moves it (the control's value), and the panel read.
READ_PANEL = f"TEMPERATURES = {TEMPERATURES!r}\n" + """\
import json, time
shown = {}
for temperature in TEMPERATURES:
    app.controls.temperature.value = temperature
    started = time.monotonic()
    while app.readout.numbers is None and time.monotonic() - started < 300:
        time.sleep(0.05)  # (the first distribution is computed in the panel's thread)
    numbers = app.readout.numbers
    row = next(r for r in numbers["rows"] if r["chosen"])
    shown[temperature] = {"p": row["new"], "model": row["model"], "rank": row["rank"],
                          "html": app.readout.html.value}
at = app.view.selected
print("PANEL " + json.dumps({"at": at, "ids": app.current.token_ids[: at + 1].tolist(), "shown": shown}))
"""


def run_lesson_reading_the_panel() -> tuple[dict, list]:
    nb = nbformat.read(NOTEBOOKS / LESSON, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(READ_PANEL))
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    line = next(ln for o in nb.cells[-1].outputs for ln in o.get("text", "").splitlines() if ln.startswith("PANEL "))
    return json.loads(line[len("PANEL "):]), outputs


def softmax64(logits: np.ndarray, temperature: float) -> np.ndarray:
    z = logits.astype(np.float64) / temperature
    e = np.exp(z - z.max())
    return e / e.sum()


def test_lesson_2_pins_a_token_whose_probability_changes_visibly(reference_model):
    import torch

    panel, outputs = run_lesson_reading_the_panel()
    assert not [o for o in outputs if o.output_type == "error"]
    at, ids = panel["at"], panel["ids"]
    with torch.inference_mode():
        logits = reference_model(torch.tensor([ids[:at]])).logits[0, -1].double().numpy()
    chosen = ids[at]
    assert int(np.count_nonzero(logits > logits[chosen])) == 1, "the pinned token is the model's second choice"
    p = {t: float(softmax64(logits, t)[chosen]) for t in TEMPERATURES}
    for t in TEMPERATURES:
        shown = panel["shown"][str(t)]
        assert abs(shown["p"] - p[t]) < 1e-6, (t, shown["p"], p[t])
        assert abs(shown["model"] - softmax64(logits, 1.0)[chosen]) < 1e-6
        assert shown["rank"] == 2
        # the bold row of the table reads the number, to one decimal as the panel writes it
        assert f"{p[t]:.1%}" in shown["html"], (t, f"{p[t]:.1%}")
    assert p[0.5] - p[1.5] >= 0.05, f"a change a class can see: {p}"
    assert f"{p[0.5]:.1%}" != f"{p[1.5]:.1%}"
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert f"pinned token {at + 1}:" in printed and "the model's second choice" in printed
