"""Lesson 2 as a class sees it: notebooks/02_sampling.ipynb run in JupyterLab with *Run All Cells*.

Its slider demo pins the model's second choice; the temperature slider is moved by the keyboard on
its handle, as a person does, to 0.5 and to 1.5, and the pinned token's row must then read two
clearly different percents (the numbers themselves are checked against an independent softmax in
tests/test_lesson_2.py). No output of the lesson may be a warning box that carries a path of the
package: a class should not read the checkout's file names. Pictures: normal size and projector
(1280x720 at 150 %).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from browser.lab import (
    ARTIFACTS,
    MODEL_TIMEOUT,
    PROJECTOR,
    PROJECTOR_SCALE,
    cell,
    next_frames,
    open_notebook,
    run_cell,
    wait_cell_done,
)

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSON = "02_sampling.ipynb"
APP = ".jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore"
PINNED_ROW = ".lv-explore-pinned .lv-pin[data-state='exact'] tr.lv-pin-chosen"
A_PATH = re.compile(r"logprob_viz[/\\]|\.py:\d+")  # a file of the package, or any file:line


# Every cell's stderr outputs (the red boxes), from the notebook's model: the page lays out only the cells in view.
STDERR_JS = """() => {
  const model = window.jupyterapp.shell.currentWidget.content.model, found = [];
  for (let i = 0; i < model.cells.length; i++) {
    const c = model.cells.get(i);
    if (c.type !== 'code') continue;
    for (let j = 0; j < c.outputs.length; j++) {
      const o = c.outputs.get(j).toJSON();
      if (o.output_type === 'stream' && o.name === 'stderr') found.push([].concat(o.text).join(''));
    }
  }
  return found;
}"""


# What cell `index` printed (its stdout), from the notebook's model: the page's text of a cell that
# is off screen can read empty (JupyterLab skips laying out cells out of view).
STDOUT_JS = """index => {
  const c = window.jupyterapp.shell.currentWidget.content.model.cells.get(index), found = [];
  for (let j = 0; j < c.outputs.length; j++) {
    const o = c.outputs.get(j).toJSON();
    if (o.output_type === 'stream' && o.name === 'stdout') found.push([].concat(o.text).join(''));
  }
  return found.join('');
}"""


def temperature_slider(page, app):
    """The temperature slider in the view's column, above the chart."""
    return app.locator(".lv-side-slider", has=page.locator(".lv-side-range[data-setting='temperature']"))


def slide_temperature(page, app, steps: int) -> str:
    """Press an arrow key `steps` times on the temperature slider (in the view's column, above the
    chart; negative: left); the value it then shows ("0.50")."""
    slider = temperature_slider(page, app)
    slider.locator("input").focus()
    for _ in range(abs(steps)):
        page.keyboard.press("ArrowRight" if steps > 0 else "ArrowLeft")
    return slider.locator(".lv-side-value").inner_text().strip()


def slide_temperature_to(page, app, value: str, most: int = 60) -> str:
    """Press the arrow keys on the temperature slider until it shows `value` ("0.50"), as a person
    watching it does: a press taken while the app is still settling is pressed again."""
    slider = temperature_slider(page, app)
    shown = slider.locator(".lv-side-value")
    for _ in range(most):
        now = shown.inner_text().strip()
        if now == value:
            break
        slider.locator("input").focus()
        page.keyboard.press("ArrowRight" if float(now) < float(value) else "ArrowLeft")
        with contextlib.suppress(PlaywrightTimeout):  # a press not taken leaves the value: pressed again
            shown.filter(has_not_text=now).wait_for(timeout=1_000)
    return shown.inner_text().strip()


def pinned_percent(app, temperature: str) -> tuple[str, float]:
    """The pinned row's p(sampled) as shown, and its exact value, once the panel is at `temperature`."""
    # (the kernel computes the readout: on 2 cores shared with the rest of the suite, it can take a while)
    app.locator(".lv-explore-pinned .lv-pin", has_text=f"T = {temperature}").wait_for(timeout=MODEL_TIMEOUT * 1000)
    row = app.locator(PINNED_ROW)
    return row.locator("td").nth(3).inner_text().strip(), float(row.get_attribute("data-p-new"))


def test_lesson_2_slider_changes_the_pinned_token_visibly_and_no_warning_names_a_file(page, lab_server, browser):
    shutil.copy(NOTEBOOKS / LESSON, lab_server.root / LESSON)
    cells = json.loads((NOTEBOOKS / LESSON).read_text())["cells"]
    code = [i for i, c in enumerate(cells) if c["cell_type"] == "code"]
    demo = next(i for i in code if "lv.explore(" in "".join(cells[i]["source"]))
    open_notebook(page, lab_server, LESSON)
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    for i in code:
        wait_cell_done(page, i, timeout=MODEL_TIMEOUT)
    assert page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type*='error']").count() == 0
    cell(page, demo).scroll_into_view_if_needed()  # (the notebook lays out only the cells in view)
    app = cell(page, demo).locator(".lv-explore")
    app.locator(PINNED_ROW).wait_for(timeout=MODEL_TIMEOUT * 1000)
    printed = page.evaluate(STDOUT_JS, demo)
    assert "the model's second choice" in printed, printed
    app.locator(PINNED_ROW).scroll_into_view_if_needed()
    assert slide_temperature(page, app, -6) == "0.50"  # 0.8 -> 0.5 in steps of 0.05
    low_text, low = pinned_percent(app, "0.50")
    panel_picture(page, app, "lesson-02-slider-t05.png")
    assert slide_temperature(page, app, 20) == "1.50"
    high_text, high = pinned_percent(app, "1.50")
    panel_picture(page, app, "lesson-02-slider-t15.png")
    assert low_text == f"{100 * low:.1f}%" and high_text == f"{100 * high:.1f}%", (low_text, high_text)
    assert low_text != high_text and low - high >= 0.05, (low_text, high_text)

    projector_picture(browser, lab_server, demo)

    with_path = [t for t in page.evaluate(STDERR_JS) if A_PATH.search(t)]
    assert not with_path, f"a warning box names a file of the package: {with_path}"
    assert not page.page_errors, page.page_errors


def panel_picture(page, app, name: str) -> None:
    """The slider row and the pinned panel, each scrolled into view (the explorer is taller than the window)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for part, suffix in ((".lv-side-sliders", "-slider"), (".lv-explore-pinned", "")):
        app.locator(part).scroll_into_view_if_needed()
        next_frames(page, 2)
        picture = name.replace(".png", f"{suffix}.png")
        app.locator(part).screenshot(path=str(ARTIFACTS / picture), animations="disabled")


def projector_picture(browser, lab_server, demo: int) -> None:
    """The demo at 1280x720 at 150 % (853x480 CSS px), file browser hidden: the demo cell run again
    in the same kernel, the slider at 0.5, the slider and the pinned token's readout and chart in view."""
    context = browser.new_context(viewport=PROJECTOR, device_scale_factor=PROJECTOR_SCALE)
    small = context.new_page()
    try:
        open_notebook(small, lab_server, LESSON)
        small.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
        run_cell(small, demo)
        wait_cell_done(small, demo, timeout=MODEL_TIMEOUT)
        app = cell(small, demo).locator(".lv-explore")
        app.locator(PINNED_ROW).wait_for(timeout=MODEL_TIMEOUT * 1000)
        assert slide_temperature_to(small, app, "0.50") == "0.50"
        pinned_percent(app, "0.50")
        app.locator(".lv-side-sliders").scroll_into_view_if_needed()  # the slider, its readout and the chart
        next_frames(small, 3)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        small.screenshot(path=str(ARTIFACTS / "lesson-02-slider-projector.png"))
    finally:
        context.close()
