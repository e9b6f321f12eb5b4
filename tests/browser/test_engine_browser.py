"""The explorer's engine choice in a real JupyterLab + chromium, as a person uses it: Generate at
T 1.5 and min-p 0.1, click the first generated token, pick llama.cpp under "sampled as in", and read
the panel's line ("llama.cpp keeps N tokens here, transformers M"), its table and the readout under
the sliders change to llama.cpp's numbers. Pictures: the app, in the dark theme, and on a projector
(853x480 CSS px at 150 %), in tests/artifacts/engine_*.png.

The independent computation runs in the same kernel but shares nothing with the package: the default
model loaded again with plain transformers, llama.cpp's order written out (min-p on the T = 1 logits,
the temperature applied last) and transformers' own warpers for transformers' count.
"""

from __future__ import annotations

import time

import pytest

from browser.lab import (
    ARTIFACTS,
    MODEL_TIMEOUT,
    dark_screenshot,
    next_frames,
    open_notebook,
    output_text,
    printed,
    projector_page,
    run_cell,
    set_theme,
    tall_screenshot,
    wait_cell_done,
    wait_for_output,
)
from browser.lab import write_notebook as write

pytestmark = pytest.mark.browser

PROMPT = "The largest planet in the solar system is"
APP = ".jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore"
PANEL = f"{APP} .lv-explore-pinned .lv-pin"

APP_CELL = f"""\
from logprob_viz.views.explorer import explore
app = explore({PROMPT!r}, max_new_tokens=3, top_logprobs=5, temperature=1.5, min_p=0.1, seed=1)
app"""

REFERENCE_CELL = """\
import json, torch
from transformers import AutoModelForCausalLM, LogitsProcessorList, MinPLogitsWarper, TemperatureLogitsWarper
from logprob_viz.sources.local.default_model import default_model_path
reference = AutoModelForCausalLM.from_pretrained(default_model_path(), dtype=torch.float32).eval()

def reference_numbers(at):
    t = app.current
    with torch.inference_mode():
        logits = reference(torch.tensor([t.token_ids[:at].tolist()])).logits[:, -1].double()
    warpers = LogitsProcessorList([TemperatureLogitsWarper(1.5), MinPLogitsWarper(0.1)])
    theirs = int((torch.softmax(warpers(None, logits.clone()), dim=-1) > 0).sum())
    kept = logits[0] >= logits[0].max() + torch.log(torch.tensor(0.1, dtype=torch.float64))  # at T = 1
    p = torch.softmax(torch.where(kept, logits[0] / 1.5, float("-inf")), dim=-1)  # the temperature last
    return {"at": at, "kept": int(kept.sum()), "theirs": theirs,
            "p": {int(i): float(p[i]) for i in t.top_ids[at].tolist() + [int(t.token_ids[at])]}}
print("ready")"""

STATE_CELL = """\
t = app.current
print("STATE " + json.dumps({"n": t and len(t), "prompt_len": t and t.prompt_len,
                             "running": app.running or t is None, "error": app.last_error}))"""

REF_CELL = 'print("REF " + json.dumps(reference_numbers(app.view.selected)))'
SHOW_CELL = "app"

ROWS_JS = """panel => [...panel.querySelectorAll('tr[data-token-id]')].map(r => ({
  id: Number(r.dataset.tokenId), p: Number(r.dataset.pNew), shown: r.querySelectorAll('td')[3].textContent}))"""


def generated(page, lab_server) -> dict:
    write(lab_server, "engine.ipynb", [APP_CELL, REFERENCE_CELL, STATE_CELL, REF_CELL, SHOW_CELL])
    open_notebook(page, lab_server, "engine.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-explore textarea", MODEL_TIMEOUT)
    page.locator(f"{APP} button", has_text="Generate").first.click()
    run_cell(page, 1)  # (the reference model loads while the app generates)
    wait_cell_done(page, 1, timeout=MODEL_TIMEOUT)
    assert "ready" in output_text(page, 1), output_text(page, 1)
    deadline = time.monotonic() + MODEL_TIMEOUT
    while (state := printed(page, 2, "STATE"))["running"]:
        assert time.monotonic() < deadline, state
    assert state["error"] is None, state
    return state


def check_rows(panel, p: dict) -> None:
    rows = panel.evaluate(ROWS_JS)
    assert rows
    for row in rows:
        want = p[str(row["id"])]
        assert abs(row["p"] - want) < 2e-6, (row, want)
        assert (row["shown"] == "cut off") == (want == 0), row


def test_picking_an_engine_changes_the_numbers_and_says_what_it_keeps(page, lab_server, browser):
    state = generated(page, lab_server)
    at = state["prompt_len"]  # the first generated token: the model's distribution right after the prompt
    page.locator(f"{APP} .lv-root .lv-token[data-index='{at}']").click()
    page.locator(f"{PANEL}[data-at='{at}'][data-state='exact']").wait_for(timeout=MODEL_TIMEOUT * 1000)
    reference = printed(page, 3, "REF")
    assert reference["at"] == at and reference["kept"] != reference["theirs"], reference
    panel = page.locator(PANEL).first
    assert int(panel.locator("[data-kept]").get_attribute("data-kept")) == reference["theirs"]  # transformers
    assert page.locator(f"{APP} .lv-pin-differs").count() == 0
    transformers_note = page.locator(f"{APP} .lv-side-note").first.text_content()

    page.locator(f"{APP} .lv-explore-engine select").first.select_option(label="llama.cpp")
    line = f"llama.cpp keeps {reference['kept']} tokens here, transformers {reference['theirs']}"
    page.locator(f"{APP} .lv-pin-differs", has_text=line).first.wait_for(timeout=30_000)
    panel = page.locator(PANEL).first
    assert int(panel.locator("[data-kept]").get_attribute("data-kept")) == reference["kept"]
    check_rows(panel, reference["p"])
    note = page.locator(f"{APP} .lv-side-note").first
    page.wait_for_function("([el, line]) => el.textContent.includes(line)", arg=[note.element_handle(), line],
                           timeout=30_000)
    assert "as in llama.cpp" in note.text_content() and note.text_content() != transformers_note

    tall_screenshot(page, "engine_panel.png", APP)
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": 2400})  # (the whole app: nothing cut by the window)
    try:
        page.locator(APP).first.scroll_into_view_if_needed()
        dark_screenshot(page, page.locator(f"{APP} .lv-root").first, "engine_panel_dark.png", APP)
    finally:
        page.set_viewport_size(size)
    with projector_page(browser, lab_server, "engine.ipynb") as small:
        projector(small, line)
    assert not page.page_errors, page.page_errors


def projector(small, line: str) -> None:
    """The app shown again on the projector page, in the dark theme (light again afterwards)."""
    set_theme(small, dark=True)
    try:
        run_cell(small, 4)
        wait_cell_done(small, 4)
        app = small.locator(APP).last  # this cell's view of the app
        app.locator(".lv-pin-differs", has_text=line).wait_for(timeout=60_000)
        small.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")  # the room
        app.locator(".lv-explore-engine").scroll_into_view_if_needed()
        next_frames(small, 3)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        small.screenshot(path=str(ARTIFACTS / "engine_projector_dark.png"))
        app.locator(".lv-pin-differs").scroll_into_view_if_needed()
        next_frames(small, 3)
        small.screenshot(path=str(ARTIFACTS / "engine_projector_dark_line.png"))
    finally:
        set_theme(small, dark=False)
