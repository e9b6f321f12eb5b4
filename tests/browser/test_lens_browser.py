"""The lens view in a real JupyterLab + chromium, on the real default model.

The notebook computes a lens and writes its arrays to lens.json; the test hovers cells, pins
tokens and compares what the page shows with those numbers, formatted here independently (as
the view documents: percent with one decimal, logprob with three). Three ways alternatives
reach the page: sent with the view (a short text), asked of the kernel on pin, and asked of a
kernel busy with a long cell, where the view must say that no answer came, then take the late one.
"""

from __future__ import annotations

import json
import math

import pytest

from browser.expected import expected_logprob, expected_marks, expected_percent
from browser.lab import (
    MODEL_TIMEOUT,
    cell,
    dark_theme,
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

TEXT = "The capital of France is Paris, and the capital of Germany is Berlin. <b>bold</b>"

LENS_CELL = f"""\
import json, pathlib
import logprob_viz as lv
from logprob_viz.sources.local.lens import lens
runner = lv.load()
L = lens(runner, {TEXT!r}, top_logprobs=5)
pathlib.Path("lens.json").write_text(json.dumps({{
    "tokens": L.tokens, "token_ids": L.token_ids.tolist(), "layers": L.layers.tolist(),
    "logprobs": L.logprobs.tolist(), "ranks": L.ranks.tolist(),
    "top_ids": L.top_ids.tolist(), "top_logprobs": L.top_logprobs.tolist(), "top_tokens": L.top_tokens,
}}))
L"""
REQUEST_CELL = "v = L.view(detail='request')\nv"
IMPATIENT_CELL = "v2 = L.view(detail='request', request_timeout=2)\nv2"
BUSY_CELL = "import time\ntime.sleep(12)\nprint('slept')"
PIN_CELL = "v.selected = 4\nprint('pinned', v.selected)"


def expected_panel(lens: dict, row: int, i: int) -> list[tuple[str, str, str, bool]]:
    """(text, percent, logprob, chosen) of the alternatives the panel must list for a cell."""
    rows, seen = [], False
    alternatives = zip(lens["top_tokens"][row][i], lens["top_ids"][row][i], lens["top_logprobs"][row][i], strict=True)
    for text, tid, lp in alternatives:
        chosen = not seen and tid == lens["token_ids"][i]
        seen |= chosen
        rows.append((text, expected_percent(lp), expected_logprob(lp), chosen))
    if not seen:
        lp = lens["logprobs"][row][i]
        rows.append((lens["tokens"][i], expected_percent(lp), expected_logprob(lp), True))
    return rows


def panel_rows(root) -> list[tuple[str, str, str, bool]]:
    rows = root.locator(".lvl-detail .lvl-alt-row").evaluate_all(
        """rows => rows.map(r => [r.querySelector('.lvl-alt-token').textContent,
            r.querySelector('.lvl-alt-prob').textContent, r.querySelector('.lvl-alt-logprob').textContent,
            r.classList.contains('lvl-chosen')])"""
    )
    return [tuple(r) for r in rows]


def hover_cell(root, row: int, i: int):
    target = root.locator(f".lvl-cell[data-row='{row}'][data-index='{i}']")
    target.hover()
    root.locator(f".lvl-detail[data-row='{row}'][data-index='{i}']").wait_for(timeout=10_000)
    return target


def check_plots(root, lens: dict, i: int) -> None:
    plots = root.locator(f".lvl-plots[data-index='{i}']")
    plots.wait_for(timeout=10_000)
    points = "ps => ps.map(p => [+p.dataset.layer, +p.dataset.value])"
    probs = plots.locator(".lvl-prob-plot .lvl-point").evaluate_all(points)
    ranks = plots.locator(".lvl-rank-plot .lvl-point").evaluate_all(points)
    assert [layer for layer, _ in probs] == lens["layers"] == [layer for layer, _ in ranks]
    for row, (_, p) in enumerate(probs):
        assert math.isclose(p, math.exp(lens["logprobs"][row][i]), rel_tol=1e-6, abs_tol=1e-9)
    assert [int(r) for _, r in ranks] == [lens["ranks"][row][i] for row in range(len(lens["layers"]))]


@pytest.fixture
def lens_notebook(lab_server):
    """The same notebook (so one kernel) for every test, written afresh: no outputs of an earlier test."""
    (lab_server.root / "lens.json").unlink(missing_ok=True)
    write_notebook(lab_server, "lens.ipynb", [LENS_CELL, REQUEST_CELL, IMPATIENT_CELL, BUSY_CELL, PIN_CELL])
    return "lens.ipynb"


def test_hover_reads_a_layers_alternatives_and_pin_plots_the_token_through_the_layers(page, lab_server, lens_notebook):
    open_notebook(page, lab_server, lens_notebook)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvl-root .lvl-cell", MODEL_TIMEOUT)
    lens = json.loads((lab_server.root / "lens.json").read_text())
    n_layers, n = len(lens["layers"]), len(lens["tokens"])
    root = cell(page, 0).locator(".lvl-root")
    assert f"{n_layers} layers × {n} tokens" in root.locator(".lvl-header").inner_text()
    # Token text is text: the "<b>" of the text is shown, never made an element.
    # Only the columns in view are in the page: read the labels, scroll to the end, read again.
    read = "els => els.map(e => [+e.dataset.index, e.textContent])"
    labels = dict(root.locator(".lvl-token").evaluate_all(read))
    root.locator(".lvl-scroll").evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    root.locator(f".lvl-token[data-index='{n - 1}']").wait_for(timeout=10_000)
    labels.update(root.locator(".lvl-token").evaluate_all(read))
    assert sorted(labels) == list(range(n))
    assert "".join(lens["tokens"]) == TEXT
    assert [labels[i] for i in range(n)] == [expected_marks(t) for t in lens["tokens"]]  # whitespace marked
    root.locator(".lvl-scroll").evaluate("el => { el.scrollLeft = 0; }")
    assert root.locator("b, script, img, iframe").count() == 0

    paris = lens["tokens"].index(" Paris")
    for row in (14, n_layers - 1, 3):
        hover_cell(root, row, paris)
        assert panel_rows(root) == expected_panel(lens, row, paris), f"layer {lens['layers'][row]}"
        assert root.locator(".lvl-detail .lvl-rank").inner_text() == f"rank {lens['ranks'][row][paris]}"
    # The cell under the mouse is marked, and its colour is the token's probability there (viridis ends).
    assert root.locator(".lvl-cell.lvl-hovered").count() == 1

    root.locator(f".lvl-token[data-index='{paris}']").click()
    root.locator(f".lvl-col.lvl-pinned[data-index='{paris}']").wait_for(timeout=10_000)
    check_plots(root, lens, paris)
    assert expected_marks(" Paris") in root.locator(".lvl-plot-caption").text_content()
    page.set_viewport_size({"width": 1280, "height": 1500})  # the whole view in one picture
    root.scroll_into_view_if_needed()
    hover_cell(root, 20, paris)
    save_screenshot(page, "lens.png", ".lvl-root:visible")
    assert not page.page_errors, page.page_errors


def test_long_text_mode_asks_the_kernel_on_pin_and_python_can_pin(page, lab_server, lens_notebook):
    open_notebook(page, lab_server, lens_notebook)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvl-root .lvl-cell", MODEL_TIMEOUT)
    lens = json.loads((lab_server.root / "lens.json").read_text())
    run_cell(page, 1)
    wait_for_output(page, lab_server, 1, ".lvl-root .lvl-cell", 120)
    root = cell(page, 1).locator(".lvl-root")
    berlin = lens["tokens"].index(" Berlin")
    target = hover_cell(root, 10, berlin)
    # Not asked yet: the layer's top guess is known, the rest waits for a pin.
    assert "click the token" in root.locator(".lvl-detail .lvl-note").inner_text()
    assert len(panel_rows(root)) == 1
    target.click()
    root.locator(".lvl-detail .lvl-alt-row:nth-child(5)").wait_for(timeout=60_000)
    assert panel_rows(root) == expected_panel(lens, 10, berlin)
    hover_cell(root, 25, berlin)
    assert panel_rows(root) == expected_panel(lens, 25, berlin)
    check_plots(root, lens, berlin)

    run_cell(page, 4)  # v.selected = 4 from Python
    wait_for_output(page, lab_server, 4, "text=pinned 4", 60)
    root.locator(".lvl-col.lvl-pinned[data-index='4']").wait_for(timeout=30_000)
    check_plots(root, lens, 4)
    assert not page.page_errors, page.page_errors


def test_a_busy_kernel_gives_a_message_not_a_spinner_and_the_late_answer_still_lands(page, lab_server, lens_notebook):
    open_notebook(page, lab_server, lens_notebook)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvl-root .lvl-cell", MODEL_TIMEOUT)
    lens = json.loads((lab_server.root / "lens.json").read_text())
    run_cell(page, 2)
    wait_for_output(page, lab_server, 2, ".lvl-root .lvl-cell", 120)
    root = cell(page, 2).locator(".lvl-root")
    run_cell(page, 3)  # the kernel sleeps 12 s: the request waits behind it
    i = lens["tokens"].index(" Germany")
    target = hover_cell(root, 12, i)
    target.click()
    waiting = root.locator(".lvl-detail .lvl-waiting")
    error = root.locator(".lvl-detail .lvl-error")
    waiting.or_(error).first.wait_for(timeout=10_000)
    error.wait_for(timeout=15_000)
    assert "no answer from the kernel after 2 s" in error.inner_text()
    wait_cell_done(page, 3, timeout=60)
    root.locator(".lvl-detail .lvl-alt-row:nth-child(5)").wait_for(timeout=60_000)
    assert error.count() == 0
    assert panel_rows(root) == expected_panel(lens, 12, i)
    assert not page.page_errors, page.page_errors


# Every column in the page: each cell's and the token's text and whether it overflows its box.
COLUMNS_JS = """root => [...root.querySelectorAll('.lvl-col')].map(col => {
  const whole = el => el.scrollWidth <= el.clientWidth;
  const token = col.querySelector('.lvl-token');
  return {index: +col.dataset.index, token: [token.textContent, whole(token)],
          cells: [...col.querySelectorAll('.lvl-cell')].map(c => [+c.dataset.row, c.textContent, whole(c)])};
})"""


def read_all_columns(page, root) -> dict[int, dict]:
    """Every column of the grid, scrolling it sideways a screen at a time (only those in view exist)."""
    columns = {}
    scroll = root.locator(".lvl-scroll")
    width, client = scroll.evaluate("el => [el.scrollWidth, el.clientWidth]")
    for left in range(0, width, max(client // 2, 1)):
        scroll.evaluate("(el, x) => { el.scrollLeft = x; }", left)
        next_frames(page, 3)
        columns.update({c["index"]: c for c in root.evaluate(COLUMNS_JS)})
    scroll.evaluate("el => { el.scrollLeft = 0; }")
    return columns


def check_names_whole(page, root, lens: dict) -> None:
    """Each layer's top guess and each token, whole: the text expected and no overflow in its cell."""
    columns = read_all_columns(page, root)
    assert sorted(columns) == list(range(len(lens["tokens"])))
    cut = []
    for i, col in columns.items():
        assert col["token"][0] == expected_marks(lens["tokens"][i])
        if not col["token"][1]:
            cut.append(("token", i, col["token"][0]))
        for row, text, whole in col["cells"]:
            assert text == ("" if i == 0 else expected_marks(lens["top_tokens"][row][i][0])), (row, i)
            if not whole:
                cut.append((lens["layers"][row], i, text))
    assert not cut, f"cut names (layer, token, text): {cut[:10]}"


def test_every_name_in_the_grid_is_whole_at_projector_size(browser, lab_server, lens_notebook):
    """At 853x480 CSS px, light and dark: no layer's guess and no token is cut (the columns fit their texts)."""
    with projector_page(browser, lab_server, lens_notebook) as small:
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(small, 0)
        wait_for_output(small, lab_server, 0, ".lvl-root .lvl-cell", MODEL_TIMEOUT)
        lens = json.loads((lab_server.root / "lens.json").read_text())
        root = cell(small, 0).locator(".lvl-root")
        root.scroll_into_view_if_needed()
        check_names_whole(small, root, lens)
        screen_shot(small, "lens-projector.png")
        with dark_theme(small, root):
            next_frames(small)
            check_names_whole(small, root, lens)
            screen_shot(small, "lens-projector-dark.png")
