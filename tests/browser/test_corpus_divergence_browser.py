"""Texts compared by two engines opened in the corpus view in a real JupyterLab + chromium (issue 44): a row
per text with its mean KLD, max KLD, flips... as columns a click sorts.

The notebook compares the real default model with a copy whose weights are rounded to bf16
(`lv.divergence`, as tests/sources/test_divergence.py does, which checks each position against the
models' logits) and writes the per-token values to div.json; the test reduces them here in plain loops
and checks the order a header click gives and the flips each row shows.
"""

from __future__ import annotations

import json
import math

import pytest

from browser.lab import ARTIFACTS, MODEL_TIMEOUT, next_frames, open_notebook, run_cell, wait_for_output, write_notebook

pytestmark = pytest.mark.browser

TEXTS = ["A robot may not injure a human being or, through inaction, allow a human being to come to harm.",
         "The quick brown fox jumps over the lazy dog.",
         "In 1905 Einstein published four papers; the third introduced special relativity.",
         "Colourless green ideas sleep furiously.",
         "def add(a, b):\n    return a + b\n"]
CELL = f"""\
import copy, json, pathlib, torch
import logprob_viz as lv
runner = lv.load()
model = copy.deepcopy(runner.model)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(p.to(torch.bfloat16).to(torch.float32))
d = lv.divergence(runner, lv.load((model, runner.tokenizer)), {TEXTS!r}, cutoff=None)
names = ("kld_low", "same_top", "delta_p")
pathlib.Path("div.json").write_text(json.dumps([{{n: x.arrays[n].tolist() for n in names}} for x in d]))
v = lv.CorpusView(d)
v"""
ROOT = ".jp-NotebookPanel:visible .jp-OutputArea-output .lvx-root"
ROWS = """els => els.filter(e => e.style.display !== 'none' && e.dataset.row !== '')
  .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
  .map(e => ({item: Number(e.dataset.row), flips: e.querySelector('.lvx-col-flips').textContent}))"""


def per_text(row: dict) -> dict:
    scored = [i for i, x in enumerate(row["delta_p"]) if not math.isnan(x)]
    return {"mean_kld": sum(row["kld_low"][i] for i in scored) / len(scored),
            "max_kld": max(row["kld_low"][i] for i in scored),
            "flips": sum(1 for i in scored if row["same_top"][i] == 0.0)}


def test_a_header_click_sorts_the_texts_by_mean_kld_and_each_row_shows_its_flips(page, lab_server):
    write_notebook(lab_server, "divergence_corpus.ipynb", [CELL])
    open_notebook(page, lab_server, "divergence_corpus.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvx-root .lvx-data", MODEL_TIMEOUT)
    expected = [per_text(r) for r in json.loads((lab_server.root / "div.json").read_text())]
    root = page.locator(ROOT)
    heads = root.locator(".lvx-traces .lvx-head .lvx-head-title").all_inner_texts()
    assert heads[3:7] == ["mean KLD", "max KLD", "flips", "same top"], heads  # after #, label, text
    # the figures take the logprob columns' room (a narrower window scrolls the table sideways)
    assert "mean lp" not in heads and "max surpr." not in heads and "perplexity" in heads
    for column, name in (("mean_kld", "mean KLD"), ("max_kld", "max KLD"), ("flips", "flips")):
        want = sorted(range(len(TEXTS)), key=lambda i, c=column: (expected[i][c], i))  # ascending, stable
        root.locator(f".lvx-traces .lvx-head .lvx-col-{column}").click()
        next_frames(page, 3)
        got = root.locator(".lvx-traces .lvx-data").evaluate_all(ROWS)
        assert [r["item"] for r in got] == want, name
        assert [r["flips"] for r in got] == [str(expected[i]["flips"]) for i in want]
    root.screenshot(path=str(ARTIFACTS / "corpus-divergence.png"))
    assert not page.page_errors, page.page_errors
