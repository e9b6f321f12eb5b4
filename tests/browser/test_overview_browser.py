"""The chart panel's overview before any hover (issue 18, item 10), in a real JupyterLab + chromium.

A real trace of the default model, shown first with its first few generated tokens, then grown to
the whole trace (a stream's append): the panel lists where the model hesitated (the generated tokens
of lowest probability) and a summary line, which must equal what is computed here from the trace's
own logprobs (trace.json, written by the notebook; sorted and formatted in this file). A click on a
row pins that token as a click in the text does, scrolling the text box (never the page) to it; Tab
reaches the rows and Enter pins too; hovering never changes the panel's size. A hostile token is
shown as text. Screenshots (tests/artifacts/): normal, a 1280x720 screen at 150 %, dark.
"""

from __future__ import annotations

import json
import math

import pytest

from browser.cells import HOSTILE_IMG
from browser.expected import as_float, expected_logprob, expected_marks, expected_percent, js_to_fixed
from browser.lab import (
    HAND_MADE_TIMEOUT,
    MODEL_TIMEOUT,
    cell,
    dark_screenshot,
    next_frames,
    open_notebook,
    projector_page,
    run_cell,
    save_screenshot,
    screen_shot,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

PROMPT = "The robot opened the door and"
FIRST = 6  # generated tokens the view shows before it grows to the whole trace
ROWS = 5

CELLS = [
    f"""\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
t = runner.generate({PROMPT!r}, max_new_tokens=200, top_logprobs=5, temperature=0.7, seed=7)
pathlib.Path("overview.json").write_text(json.dumps(t.to_dict()))
v = lv.LogprobView(t[:t.prompt_len + {FIRST}])
v""",
    "v.trace = t  # the rest of the trace, as a stream's append",
    f"""\
import numpy as np
hostile = lv.Trace(tokens=["Say", " hi", {HOSTILE_IMG!r}, "."], logprobs=np.log([np.nan, 0.6, 0.003, 0.9]),
                   prompt_len=1)
hostile.view()""",
    "v",
]

# Each row of the overview: its token index, the token as drawn (marks through CSS, as the chart's
# title draws them), its percent and its position.
ROWS_JS = """root => [...root.querySelectorAll('.lv-panel .lv-overview-row')].map(r => {
  const chip = r.querySelector('.lv-chip');
  const drawn = Array.from(chip.childNodes, (n) =>
    n.nodeType === Node.TEXT_NODE ? n.textContent
    : n.classList.contains('lv-ws') ? getComputedStyle(n, '::before').content.replace(/^"|"$/g, '')
    : n.textContent).join('');
  return {index: Number(r.dataset.index), raw: chip.textContent, drawn,
          p: r.querySelector('.lv-overview-p').textContent,
          logprob: r.querySelector('.lv-overview-logprob').textContent,
          where: r.querySelector('.lv-overview-where').textContent};
})"""

# Where things are: the page's scroller, the text box, the panel (and whether its content fits).
BOXES_JS = """root => {
  const box = (el) => { const r = el.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; };
  const nb = root.closest('.jp-NotebookPanel');
  const scroller = nb.querySelector('.jp-WindowedPanel-outer') || nb.querySelector('.jp-Notebook');
  const panel = root.querySelector('.lv-panel'), text = root.querySelector('.lv-text');
  return {scroll: scroller.scrollTop, text: box(text), panel: box(panel), textScroll: text.scrollTop,
          fits: panel.scrollHeight <= panel.clientHeight + 1};
}"""


def percent(p: float) -> str:
    """A probability as the view formats one (one decimal, "<0.1%" below 0.05 %)."""
    pct = p * 100
    return "0%" if pct == 0 else "<0.1%" if pct < 0.05 else js_to_fixed(pct, 1) + "%"


def expected_overview(trace: dict, n: int) -> tuple[list[int], str]:
    """The rows (token indices, least likely first) and the summary line of the first n tokens."""
    lp = [as_float(x) for x in trace["logprobs"][:n]]
    start = 0 if trace["prompt_len"] >= n else trace["prompt_len"]
    known = [i for i in range(start, n) if not math.isnan(lp[i])]
    rows = sorted(known, key=lambda i: (lp[i], i))[:ROWS]
    mean_p = sum(math.exp(lp[i]) for i in known) / len(known)
    perplexity = math.exp(-sum(lp[i] for i in known) / len(known))
    unknown = n - start - len(known)
    over = f"over the {len(known)} generated tokens" + (f" with a logprob ({unknown} without)" if unknown else "")
    return rows, f"mean p {percent(mean_p)} · perplexity {js_to_fixed(perplexity, 2)}, {over}"


def check_overview(view, trace: dict, n: int) -> None:
    want_rows, want_summary = expected_overview(trace, n)
    rows = view.evaluate(ROWS_JS)
    assert [r["index"] for r in rows] == want_rows, (rows, want_rows)
    for r in rows:
        i = r["index"]
        assert r["p"] == expected_percent(as_float(trace["logprobs"][i])), r
        assert r["logprob"] == expected_logprob(as_float(trace["logprobs"][i])), r
        assert r["where"] == f"token {i + 1}", r  # numbered from 1, as the chart's title numbers it
        assert r["raw"] == trace["tokens"][i] and r["drawn"] == expected_marks(trace["tokens"][i]), r
    assert view.locator(".lv-overview-summary").text_content() == want_summary
    assert view.locator(".lv-overview-head").text_content() == "Where it hesitated"


def click_without_moving(page, view, i: int) -> None:
    """Click the overview's row of token i (at its place: nothing scrolls it into view first): token i
    is pinned, and neither the page's scroll nor the text box (nor the panel) moves."""
    row = view.locator(f".lv-overview-row[data-index='{i}']")
    box = row.bounding_box()
    assert box and 0 <= box["y"] and box["y"] + box["height"] <= page.viewport_size["height"], f"row off screen: {box}"
    before = view.evaluate(BOXES_JS)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    check_pinned(view, i)
    next_frames(page, 3)
    after = view.evaluate(BOXES_JS)
    for key in ("text", "panel"):
        moved = {k: (before[key][k], after[key][k]) for k in before[key] if abs(before[key][k] - after[key][k]) >= 1}
        assert not moved, f"the click moved the {key}: {moved}"
    assert abs(before["scroll"] - after["scroll"]) < 1, f"the click scrolled the page: {before} -> {after}"


def check_pinned(view, i: int) -> None:
    chart = view.locator(f".lv-panel .lv-chart[data-index='{i}']")
    chart.wait_for(timeout=10_000)
    n = view.locator(".lv-token").count()
    assert chart.locator(".lv-chart-where").text_content().startswith(f"token {i + 1} of {n}")
    assert chart.locator(".lv-pin-note").count() == 1, "the token is pinned, not hovered"
    assert "lv-pinned" in view.locator(f".lv-token[data-index='{i}']").get_attribute("class")


def test_the_overview_lists_where_the_model_hesitated_and_a_row_pins_its_token(page, lab_server, browser):
    write_notebook(lab_server, "overview.ipynb", CELLS)
    open_notebook(page, lab_server, "overview.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-panel.lv-sized", MODEL_TIMEOUT)
    trace = json.loads((lab_server.root / "overview.json").read_text())
    n, prompt_len = len(trace["tokens"]), trace["prompt_len"]
    view = cell(page, 0).locator(".lv-root")
    page.mouse.move(1, 1)  # (off the view: nothing hovered)
    view.locator(".lv-panel .lv-overview").wait_for(timeout=10_000)
    check_overview(view, trace, prompt_len + FIRST)

    # The trace grows (appended, not rebuilt: the first token's span stays the same node): the
    # overview on screen follows it.
    view.evaluate("root => { root.querySelector('.lv-token').lvKept = true; }")
    run_cell(page, 1)
    wait_cell_done(page, 1)
    page.wait_for_function("([root, n]) => root.querySelectorAll('.lv-token').length === n",
                           arg=[view.element_handle(), n], timeout=60_000)
    assert view.evaluate("root => root.querySelector('.lv-token').lvKept === true"), "the view was rebuilt"
    next_frames(page)
    check_overview(view, trace, n)
    view.locator(".lv-panel").scroll_into_view_if_needed()
    next_frames(page)
    assert view.evaluate(BOXES_JS)["fits"], "the overview does not fit the panel"
    save_screenshot(page, "overview.png")
    dark_screenshot(page, view, "overview-dark.png")

    # Hovering shows a chart in the same box; leaving the text shows the overview again, same size,
    # and the same element (it is not rebuilt for each hover: a trace of 100,000 tokens hovers fast).
    size = view.evaluate(BOXES_JS)["panel"]
    view.evaluate("root => { root.querySelector('.lv-overview').lvKept = true; }")
    rows, _ = expected_overview(trace, n)
    view.locator(f".lv-token[data-index='{rows[1]}']").hover()
    view.locator(f".lv-panel .lv-chart[data-index='{rows[1]}']").wait_for(timeout=10_000)
    hovered = view.evaluate(BOXES_JS)["panel"]
    view.locator(".lv-header").hover()
    view.locator(".lv-panel .lv-overview").wait_for(timeout=10_000)
    left = view.evaluate(BOXES_JS)["panel"]
    assert view.evaluate("root => root.querySelector('.lv-overview').lvKept === true"), "rebuilt on a hover"
    for got in (hovered, left):
        assert abs(got["w"] - size["w"]) < 1 and abs(got["h"] - size["h"]) < 1, f"panel resized: {size} -> {got}"

    # A click on a row pins its token; Escape releases it (the overview again).
    view.locator(".lv-panel").scroll_into_view_if_needed()
    next_frames(page)
    click_without_moving(page, view, rows[0])
    page.keyboard.press("Escape")
    view.locator(".lv-panel .lv-overview").wait_for(timeout=10_000)

    # The keyboard: Tab reaches the rows (after the view's own controls); Enter pins.
    view.evaluate("root => root.focus({preventScroll: true})")
    for _ in range(30):
        page.keyboard.press("Tab")
        if view.evaluate("r => r.contains(document.activeElement?.closest('.lv-overview-row') ?? null)"):
            break
    else:
        pytest.fail("Tab never reached the overview's rows")
    focused = view.evaluate("() => Number(document.activeElement.closest('.lv-overview-row').dataset.index)")
    assert focused == rows[0], "Tab reaches the first row first"
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    check_pinned(view, rows[1])
    page.keyboard.press("ArrowRight")  # the focus stayed in the view: its keys still move the pin
    check_pinned(view, rows[1] + 1)
    page.keyboard.press("Escape")

    # A hostile token is text in the overview, not markup.
    run_cell(page, 2)
    wait_for_output(page, lab_server, 2, ".lv-root .lv-overview-row", HAND_MADE_TIMEOUT)
    hostile = cell(page, 2).locator(".lv-root")
    got = hostile.evaluate(ROWS_JS)
    want = [(2, HOSTILE_IMG, "0.3%"), (1, " hi", "60.0%"), (3, ".", "90.0%")]
    assert [(r["index"], r["raw"], r["p"]) for r in got] == want
    assert hostile.locator(".lv-panel img").count() == 0
    assert page.evaluate("() => window.__pwned") is None

    # A 1280x720 screen at 150 %: the overview fits its panel; a click on a row whose token is out of
    # the text box's view scrolls the text box to it, not the page.
    with projector_page(browser, lab_server, "overview.ipynb") as small:
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(small, 3)
        wait_for_output(small, lab_server, 3, ".lv-root .lv-panel.lv-sized", HAND_MADE_TIMEOUT)
        big = cell(small, 3).locator(".lv-root")
        big.locator(".lv-body").evaluate("el => el.scrollIntoView({block: 'start'})")  # (the panel's top on screen)
        small.wait_for_function("root => !root.querySelector('.lv-header').classList.contains('lv-loading')",
                                arg=big.element_handle(), timeout=60_000)
        small.mouse.move(1, 1)  # (the run's click left the pointer where the text is now: off it)
        big.locator(".lv-panel .lv-overview").wait_for(timeout=10_000)
        next_frames(small)
        assert big.evaluate(BOXES_JS)["fits"], "the overview does not fit the panel on a projector"
        screen_shot(small, "overview-projector.png")
        i = scroll_text_away_from_a_row(big)
        click_without_moving(small, big, i)
        inside = big.evaluate("""(root, i) => {
            const t = root.querySelector('.lv-text').getBoundingClientRect();
            const s = root.querySelector(`.lv-token[data-index='${i}']`).getBoundingClientRect();
            return s.top >= t.top && s.bottom <= t.bottom;
        }""", i)
        assert inside, "the pinned token is not in the text box's view"
        small.keyboard.press("Escape")
        big.locator(".lv-panel .lv-overview").wait_for(timeout=10_000)
        # The view's own projector size (everything 1.25 times): the panel is measured again, the overview fits.
        big.locator("select.lv-size").select_option("projector")
        small.wait_for_function("el => el.classList.contains('lv-size-projector')", arg=big.element_handle())
        small.mouse.move(1, 1)
        next_frames(small, 4)
        assert big.evaluate(BOXES_JS)["fits"], "the overview does not fit the panel at the projector size"
        big.locator(".lv-body").evaluate("el => el.scrollIntoView({block: 'start'})")
        next_frames(small)
        screen_shot(small, "overview-projector-size.png")
    assert not page.page_errors, page.page_errors


def scroll_text_away_from_a_row(view) -> int:
    """Scroll the text box (to its top, else its bottom) so that one of the overview's tokens is out of
    its view; that token's index."""
    for where in ("0", "text.scrollHeight"):
        i = view.evaluate(f"""root => {{
            const text = root.querySelector('.lv-text');
            text.scrollTop = {where};
            const box = text.getBoundingClientRect();
            for (const row of root.querySelectorAll('.lv-overview-row')) {{
              const r = root.querySelector(`.lv-token[data-index='${{row.dataset.index}}']`).getBoundingClientRect();
              if (r.bottom <= box.top || r.top >= box.bottom) return Number(row.dataset.index);
            }}
            return -1;
        }}""")
        if i >= 0:
            return i
    pytest.fail("every overview token is in the text box's view at both ends: the text does not scroll")
