"""The widget in a real JupyterLab, driven by a real (headless Debian) chromium.

Each test writes a notebook into the server's folder, opens it as a person would, runs its
cells and reads what the page shows. The expected numbers come from the trace itself (written
to trace.json by the notebook), formatted independently (browser/expected.py) the way the view
promises to. Screenshots go to tests/artifacts/; scripts/screenshots.sh copies some to docs/.
"""

from __future__ import annotations

import json
import sys

import pytest

from browser.cells import HOSTILE, HOSTILE_ALT, HOSTILE_IMG
from browser.expected import as_float, expected_rows
from browser.lab import (
    HAND_MADE_TIMEOUT,
    MODEL_TIMEOUT,
    cell,
    chart_rows,
    dot_cells,
    open_notebook,
    pseudo,
    python_prints,
    run_cell,
    save_screenshot,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

GENERATE_CELL = """\
import logprob_viz as lv
t = lv.generate("A robot may not injure a human being", max_new_tokens=12, top_logprobs=5)
import json, pathlib
pathlib.Path("trace.json").write_text(json.dumps(t.to_dict()))
t"""

HAND_MADE_CELL = f"""\
import sys, json, pathlib
import numpy as np
import logprob_viz as lv
print("python:", sys.executable)
ninf = -np.inf
t = lv.Trace(
    tokens=["Say", " hi", ":", "\\n", {HOSTILE!r}, "\\t", " two  spaces", {HOSTILE_IMG!r}],
    token_ids=[1, 2, 3, 4, 5, 6, 7, 8],
    logprobs=[np.nan, -0.2, -1.5, -0.1, -3.0, -0.7, -6.0, -0.05],
    ranks=[0, 1, 2, 1, 1, 1, 12, 1],
    top_tokens=[[], [" hi", " hello"], [",", ":", " -"], ["\\n", " "], [{HOSTILE!r}, {HOSTILE_ALT!r}], ["\\t"],
                [" one", " three"], [{HOSTILE_IMG!r}]],
    top_logprobs=[[ninf, ninf, ninf], [-0.2, -1.8, ninf], [-0.4, -1.5, -2.9], [-0.1, -2.5, ninf],
                  [-3.0, -3.2, ninf], [-0.7, ninf, ninf], [-0.9, -1.3, ninf], [-0.05, ninf, ninf]],
    top_ids=[[-1, -1, -1], [2, 20, -1], [30, 3, 31], [4, 40, -1], [5, 50, -1], [6, -1, -1], [70, 71, -1],
             [8, -1, -1]],
    prompt_len=3,
    meta={{"model": "hand-made", "source": "test"}},
)
pathlib.Path("trace.json").write_text(json.dumps(t.to_dict()))
v = lv.LogprobView(t)
v"""


# ---- the tests -----------------------------------------------------------------------------


def test_hand_made_trace_shows_hostile_text_as_text_whitespace_and_pinning(page, lab_server):
    write_notebook(lab_server, "handmade.ipynb", [HAND_MADE_CELL, 'print("selected", v.selected)', "v.selected = 1"])
    open_notebook(page, lab_server, "handmade.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
    trace = json.loads((lab_server.root / "trace.json").read_text())

    out = cell(page, 0).locator(".jp-OutputArea")
    assert f"python: {sys.executable}" in out.inner_text(), "the kernel is not this venv's python"

    root = page.locator(".lv-root:visible").first
    tokens = root.locator(".lv-token")
    assert tokens.count() == len(trace["tokens"])
    # Every token's text is there, literally, whitespace included.
    assert tokens.evaluate_all("els => els.map(e => e.textContent)") == trace["tokens"]
    assert root.locator(".lv-prompt").count() == trace["prompt_len"] == 3
    assert root.locator(".lv-part-label").all_text_contents() == ["prompt", "completion"]
    assert "lv-unknown" in (tokens.nth(0).get_attribute("class") or ""), "an unknown logprob must look neutral"
    assert "8 tokens" in root.locator(".lv-header").inner_text()
    legend = root.locator(".lv-legend").inner_text()
    assert "0%" in legend and "100%" in legend

    # Whitespace is visible and faithful: a dot over spaces, an arrow for tabs, ↵ then a real line break.
    # " hi" draws its space's dot as its background (one text node, no span per space): in its
    # first character cell and nowhere else; " two  spaces" marks each space with a span.
    hi = root.locator(".lv-token[data-index='1']")
    assert "lv-dot-lead" in hi.get_attribute("class")
    assert hi.evaluate("el => el.childNodes.length === 1 && el.firstChild.nodeType === Node.TEXT_NODE")
    assert dot_cells(page, hi) == [True, False, False]  # (a token lies on one line: CSS white-space pre)
    assert pseudo(page, ".lv-token[data-index='6'] .lv-sp") == '"·"'
    assert pseudo(page, ".lv-token[data-index='5'] .lv-tab") == '"→"'
    assert pseudo(page, ".lv-token[data-index='3'] .lv-nl") == '"↵"'
    assert root.locator(".lv-token[data-index='6'] .lv-sp").count() == 3
    before = tokens.nth(2).bounding_box()
    after = tokens.nth(4).bounding_box()
    assert after["y"] > before["y"] + before["height"] / 2, "the newline token did not break the line"

    # Hostile token and alternative texts are shown as text; nothing from the data became an element.
    for i in (4, 7):
        tokens.nth(i).hover()
        assert chart_rows(page, i) == expected_rows(trace, i)
    assert root.locator(".lv-token[data-index='4']").text_content() == HOSTILE
    # No element came from the data (so no onerror/onload can fire later), and nothing ran so far.
    assert root.locator("script, img, svg, b, iframe").count() == 0
    assert page.evaluate("() => window.__pwned") is None, "a token's text ran as code"
    assert not page.page_errors, page.page_errors

    # A chosen token outside the top-K is added below them, with its rank.
    tokens.nth(6).hover()
    assert chart_rows(page, 6) == expected_rows(trace, 6)
    extra = root.locator(".lv-chart .lv-alt-row.lv-extra")
    assert extra.count() == 1 and "rank 12" in extra.inner_text()
    assert root.locator(".lv-chart .lv-rank").inner_text() == "rank 12"

    # Click pins a token and Python sees it; Python pins one and the view shows it.
    tokens.nth(2).hover()
    rows = chart_rows(page, 2)
    assert rows == expected_rows(trace, 2) and [r[3] for r in rows] == [False, True, False]
    save_screenshot(page, "widget-handmade.png")
    tokens.nth(2).click()
    python_prints(page, lab_server, 1, "selected 2")
    run_cell(page, 2)
    root.locator(".lv-token[data-index='1'].lv-pinned").wait_for(timeout=30_000)
    page.locator(".lv-root:visible .lv-chart[data-index='1']").wait_for(timeout=10_000)
    assert root.locator(".lv-token.lv-pinned").count() == 1

    # The view follows JupyterLab's theme through its CSS variables.
    def colors():
        return root.evaluate(
            """el => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color,
                      getComputedStyle(document.body).getPropertyValue('--jp-layout-color1').trim()]"""
        )

    light = colors()
    try:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        # The theme's style sheet is in once its variables changed; then the view's colours follow.
        page.wait_for_function(
            "light => getComputedStyle(document.body).getPropertyValue('--jp-layout-color1').trim() !== light",
            arg=light[2],
            timeout=30_000,
        )
        dark = colors()
        assert dark[0] != light[0] and dark[1] != light[1], f"the widget kept its colours in the dark theme: {dark}"
        save_screenshot(page, "widget-handmade-dark.png")
    finally:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)


def test_generated_trace_hover_lists_the_model_alternatives(page, lab_server):
    trace_file = lab_server.root / "trace.json"
    trace_file.unlink(missing_ok=True)
    write_notebook(lab_server, "generate.ipynb", [GENERATE_CELL])
    open_notebook(page, lab_server, "generate.ipynb")
    run_cell(page, 0)
    # The cell's last expression is the Trace: this is Trace._repr_mimebundle_ showing the widget.
    wait_for_output(page, lab_server, 0, ".lv-root .lv-token", MODEL_TIMEOUT)
    trace = json.loads(trace_file.read_text())
    n, prompt_len = len(trace["tokens"]), trace["prompt_len"]
    assert n > prompt_len > 0 and trace["k"] == 5

    root = page.locator(".lv-root:visible").first
    tokens = root.locator(".lv-token")
    assert tokens.count() == n
    assert "".join(tokens.evaluate_all("els => els.map(e => e.textContent)")) == "".join(trace["tokens"])
    assert root.locator(".lv-prompt").count() == prompt_len
    assert f"{n} tokens ({prompt_len} prompt, {n - prompt_len} completion)" in root.locator(".lv-header").inner_text()

    # The generated token where the model hesitated most: its chart is the interesting one.
    def top1(i):
        return as_float(trace["top_logprobs"][i][0])

    generated = [i for i in range(prompt_len, n) if len(trace["top_tokens"][i]) >= 2]
    assert generated, "no generated token has alternatives"
    i = min(generated, key=top1)
    root.scroll_into_view_if_needed()
    tokens.nth(i).hover()
    rows = chart_rows(page, i)
    want = expected_rows(trace, i)
    assert rows == want, f"chart of token {i} ({trace['tokens'][i]!r}):\n got {rows}\nwant {want}"
    assert root.locator(f".lv-chart[data-index='{i}'] .lv-rank").inner_text() == f"rank {trace['ranks'][i]}"
    assert not page.page_errors, page.page_errors

    save_screenshot(page, "widget.png")
