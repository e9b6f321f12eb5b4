"""The choices view and the reliability diagram in a real JupyterLab + chromium, on choices the real
default model scores.

The notebook runs `runner.choose` over four reviews x three options (one of them hostile markup) and
writes each option's trace (`to_dict`) to choices.json; the test computes the probabilities from
those traces' own logprobs (the sum after the prompt, a softmax written here), formats them as the
view does, and checks the bars. A click on a bar must show that option's tokens below, pinned at
the option's first token (Python's traits say so too). The reliability diagram's bins are plotly
bars in a FigureWidget: a click on one must open exactly the prompts whose confidence falls in it,
binned here. Screenshots: normal size, a 1280x720 screen at 150 %, the dark theme.
"""

from __future__ import annotations

import json
import math

import pytest

from browser.cells import HOSTILE_IMG
from browser.lab import (
    HAND_MADE_TIMEOUT,
    MODEL_TIMEOUT,
    cell,
    dark_screenshot,
    next_frames,
    open_notebook,
    projector_page,
    python_prints,
    run_cell,
    save_screenshot,
    screen_shot,
    tall_screenshot,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

PROMPTS = [
    "Review: I loved every minute of it. Sentiment:",
    "Review: The worst meal I have had in years. Sentiment:",
    "Review: It was fine, nothing special. Sentiment:",
    "Review: Brilliant cast, dreadful script. Sentiment:",
]
OPTIONS = [" positive", " negative", " " + HOSTILE_IMG]
GOLD = [0, 1, 0, 1]
BINS = 4

CHOICES_CELL = f"""\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
ch = runner.choose({PROMPTS!r}, {OPTIONS!r}, gold={GOLD!r}, progress=False)
pathlib.Path("choices.json").write_text(json.dumps([[t.to_dict() for t in row] for row in ch.traces]))
v = ch.view()
v"""
STATE_CELL = "print('shown', v.bars.selected_row, v.bars.selected_option, v.logprob_view.selected, " \
             "v.logprob_view.trace is ch.traces[v.bars.selected_row][v.bars.selected_option])"
DIAGRAM_CELL = f"d = ch.calibration(bins={BINS}).plot(widget=True)\nd"
BIN_CELL = "print('bin', d.selected_bin, None if d.items_view is None else d.items_view.choices.prompts)"
ROOT = ".jp-NotebookPanel:visible .jp-OutputArea-output .lvch-root"
# Where the page's parts are: the notebook's scroll, the bars, the clicked bar, the LogprobView's top.
BOXES_JS = """target => {
  const scroller = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
  const out = target.closest('.jp-OutputArea-output');
  const at = (e) => { const r = e.getBoundingClientRect(); return [r.top, r.left]; };
  return {scroll: scroller ? scroller.scrollTop : null, bars: at(out.querySelector('.lvch-root')),
          bar: at(target), view: at(out.closest('.jp-OutputArea').querySelector('.lv-root'))};
}"""


def expected(traces):
    """Per prompt: the options' probabilities (softmax of each trace's logprob sum after its prompt)."""
    out = []
    for row in traces:
        sums = [sum(float(x) for x in t["logprobs"][t["prompt_len"]:]) for t in row]
        top = max(sums)
        e = [math.exp(s - top) for s in sums]
        out.append([x / sum(e) for x in e])
    return out


def percent(p: float) -> str:
    """formatPercent of js/toolkit/format.js, for the float32 the view is sent."""
    import numpy as np

    pct = float(np.float32(p)) * 100
    return "0%" if pct == 0 else "<0.1%" if pct < 0.05 else f"{pct:.1f}%"


@pytest.fixture
def choices_notebook(lab_server):
    (lab_server.root / "choices.json").unlink(missing_ok=True)
    write_notebook(lab_server, "choices.ipynb", [CHOICES_CELL, STATE_CELL, DIAGRAM_CELL, BIN_CELL, "v"])
    return "choices.ipynb"


def test_bars_show_the_probabilities_and_a_click_opens_that_options_tokens(page, browser, lab_server,
                                                                         choices_notebook):
    open_notebook(page, lab_server, choices_notebook)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvch-root .lvch-bar", MODEL_TIMEOUT)
    traces = json.loads((lab_server.root / "choices.json").read_text())
    probs = expected(traces)
    root = page.locator(ROOT).first
    bars = root.locator(".lvch-bar")
    assert bars.count() == len(PROMPTS) * len(OPTIONS)
    for r, row in enumerate(probs):
        for j, p in enumerate(row):
            bar = root.locator(f".lvch-bar[data-row='{r}'][data-option='{j}']")
            assert bar.locator(".lvch-pct").inner_text() == percent(p)
            assert bar.locator(".lvch-option").inner_text() == OPTIONS[j].replace(" ", "\u00b7")
    # hostile markup is an option's text, shown, never run
    assert root.locator("img, script").count() == 0 and page.evaluate("() => window.__pwned") is None
    right = sum(max(range(len(OPTIONS)), key=row.__getitem__) == g for row, g in zip(probs, GOLD, strict=True))
    assert f"{right} of {len(PROMPTS)} right" in root.locator(".lvch-head").inner_text()

    # a click on prompt 1's " negative": its trace below, pinned at the option's first token
    target = root.locator(".lvch-bar[data-row='1'][data-option='1']")
    before = target.evaluate(BOXES_JS)
    target.click()
    view = cell(page, 0).locator(".lv-root")
    view.locator(f".lv-token[data-index='{traces[1][1]['prompt_len']}'].lv-pinned").wait_for(timeout=30_000)
    assert "worst meal" in view.locator(".lv-text").first.inner_text()
    assert target.get_attribute("aria-pressed") == "true"
    next_frames(page)
    after = target.evaluate(BOXES_JS)  # nothing the user did not ask for moves (before running a cell scrolls)
    for name in ("bars", "bar", "view"):
        assert max(abs(a - b) for a, b in zip(after[name], before[name], strict=True)) < 2, (name, before, after)
    assert after["scroll"] == before["scroll"]
    python_prints(page, lab_server, 1, f"shown 1 1 {traces[1][1]['prompt_len']} True")
    save_screenshot(page, "choices.png",
                    ".jp-NotebookPanel:visible .jp-Cell:first-child .jp-OutputArea-output:has(.lvch-root)")
    dark_screenshot(page, root, "choices-dark.png", ROOT)
    with projector_page(browser, lab_server, choices_notebook) as small:
        run_cell(small, 4)  # the same view again, in this page
        small.locator(ROOT).locator(".lvch-bar").first.wait_for(timeout=60_000)
        small.locator(ROOT).first.scroll_into_view_if_needed()
        screen_shot(small, "choices-150.png")  # what the class sees on a 1280x720 screen at 150 %
    assert page.page_errors == []


BARS_JS = """(plot) => [...plot.querySelectorAll('.barlayer .trace:first-child .point path')].map(p => {
  const r = p.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2, r.height];
})"""


def test_a_bin_of_the_reliability_diagram_opens_the_prompts_in_it(page, lab_server, choices_notebook):
    open_notebook(page, lab_server, choices_notebook)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvch-root .lvch-bar", MODEL_TIMEOUT)
    run_cell(page, 2)
    wait_for_output(page, lab_server, 2, ".js-plotly-plot", HAND_MADE_TIMEOUT)  # plotly's bundle loads after
    plot = cell(page, 2).locator(".js-plotly-plot").first
    plot.locator(".barlayer .point path").first.wait_for(state="attached", timeout=HAND_MADE_TIMEOUT * 1000)
    probs = expected(json.loads((lab_server.root / "choices.json").read_text()))
    confidence = [max(row) for row in probs]
    bins = [min(int(c * BINS), BINS - 1) for c in confidence]  # equal-width bins over [0, 1]
    b = bins[0]
    # one bar per bin, left to right; an empty bin's bar has no height
    shapes = plot.evaluate(BARS_JS)
    assert len(shapes) == BINS
    assert [h > 0 for _, _, h in shapes] == [k in bins for k in range(BINS)]
    x, y, _ = shapes[b]
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    members = [PROMPTS[i] for i, k in enumerate(bins) if k == b]
    python_prints(page, lab_server, 3, f"bin {b} {members!r}")
    items = cell(page, 2).locator(".lvch-root")
    items.locator(".lvch-bar").first.wait_for(timeout=60_000)
    assert items.locator(".lvch-prompt").all_inner_texts() == members
    assert f"{len(members)} items" in cell(page, 2).locator(".lvcal-caption").inner_text()
    # the diagram and the items it opened, in a page tall enough that neither is cut by the window
    tall_screenshot(page, "calibration.png",
                    ".jp-NotebookPanel:visible .jp-Cell:nth-child(3) .jp-OutputArea-output:has(.js-plotly-plot)")
    assert page.page_errors == []
