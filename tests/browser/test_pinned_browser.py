"""The explorer's pinned token in a real JupyterLab + chromium, as a person uses it: Generate, click a
token, read its numbers under the sliders, move min-p with the keyboard, read the band; the page
must not move when the token is pinned (its bounding box is measured before and after, also on a
1280x720 screen at 150 %). Next token shows its choices as a chart in the chart panel's place; Enter on one
appends it.

The independent computation runs in the same kernel but shares nothing with the package: the default
model loaded again with plain transformers, its logits filtered by transformers' own warpers
(temperature, top-p, min-p), a softmax, and a sweep of the slider's values for the band.
"""

from __future__ import annotations

import time

import pytest

from browser.lab import (
    ARTIFACTS,
    MODEL_TIMEOUT,
    next_frames,
    open_notebook,
    output_text,
    printed,
    run_cell,
    save_screenshot,
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
app = explore({PROMPT!r}, max_new_tokens=8, top_logprobs=5, temperature=0.8, top_p=0.9, seed=1)
app"""

REFERENCE_CELL = """\
import json, torch
from transformers import (AutoModelForCausalLM, LogitsProcessorList, MinPLogitsWarper, TemperatureLogitsWarper,
                          TopPLogitsWarper)
from logprob_viz.sources.local.default_model import default_model_path
reference = AutoModelForCausalLM.from_pretrained(default_model_path(), dtype=torch.float32).eval()

def warped(logits, temperature, top_p, min_p):
    warpers = [TemperatureLogitsWarper(temperature), TopPLogitsWarper(top_p)]
    if min_p > 0:
        warpers.append(MinPLogitsWarper(min_p))
    return torch.softmax(LogitsProcessorList(warpers)(None, logits.clone()), dim=-1)[0]

def reference_numbers(at, temperature, top_p, min_p):
    t = app.current
    ids = t.token_ids[:at].tolist()
    chosen = int(t.token_ids[at])
    with torch.inference_mode():
        logits = reference(torch.tensor([ids])).logits[:, -1].double()
    p, model = warped(logits, temperature, top_p, min_p), torch.softmax(logits, dim=-1)[0]
    temps = [round(0.01 * i, 2) for i in range(1, 201)]
    sweep = [float(warped(logits, v, top_p, min_p)[chosen]) for v in temps]
    return {"at": at, "chosen": chosen, "rank": int((model > model[chosen]).sum()) + 1,
            "p": {int(i): float(p[i]) for i in range(len(p)) if p[i] > 0 or i in t.top_ids[at].tolist()},
            "model": {int(i): float(model[i]) for i in t.top_ids[at].tolist() + [chosen]},
            "kept_from": next((v for v, q in zip(temps, sweep) if q > 0), None),
            "alone_to": max((v for v, q in zip(temps, sweep) if q >= 1 - 1e-12), default=None),
            "kept": int((p > 0).sum())}
print("ready")"""

STATE_CELL = """\
t = app.current
print("STATE " + json.dumps({"n": t and len(t), "prompt_len": t and t.prompt_len, "ranks": t and t.ranks.tolist(),
                             "running": app.running or t is None, "error": app.last_error}))"""

SHOW_CELL = "app"

# The pinned token (the view's selection: what the person clicked), under T 0.8, top-p 0.9 and a min-p.
REF_CELLS = [f'print("REF " + json.dumps(reference_numbers(app.view.selected, 0.8, 0.9, {m})))' for m in (0.0, 0.05)]

ROWS_JS = """panel => [...panel.querySelectorAll('tr[data-token-id]')].map(r => ({
  id: Number(r.dataset.tokenId), model: Number(r.dataset.pModel), p: Number(r.dataset.pNew),
  shown: [...r.querySelectorAll('td')].map(td => td.textContent)}))"""

BAND_JS = """panel => Object.fromEntries([...panel.querySelectorAll('.lv-pin-band')].map(b => [b.dataset.setting, {
  from: b.dataset.sampleableFrom, to: b.dataset.sampleableTo, onlyFrom: b.dataset.onlyFrom, onlyTo: b.dataset.onlyTo,
  words: b.textContent}]))"""


BOX_JS = """e => {
  const r = e.getBoundingClientRect();
  const panel = e.closest('.jp-NotebookPanel');
  const scroller = panel.querySelector('.jp-WindowedPanel-outer') || panel.querySelector('.jp-Notebook');
  const app = e.closest('.lv-explore').getBoundingClientRect();
  const view = e.closest('.lv-root').getBoundingClientRect();
  return {x: r.x, y: r.y, w: r.width, h: r.height, scroll: scroller.scrollTop, appTop: app.y, appHeight: app.height,
          viewTop: view.y, viewHeight: view.height};
}"""


def pin_without_moving(page, at: int, app=None) -> None:
    """Click token `at` (of `app`, a locator of one explorer: default the page's first); its bounding box
    (and the notebook's scroll) must not change, to the pixel."""
    app = page.locator(APP).first if app is None else app
    token = app.locator(f".lv-root .lv-token[data-index='{at}']")
    token.scroll_into_view_if_needed()
    next_frames(page)
    before = token.evaluate(BOX_JS)
    token.click()
    app.locator(f".lv-explore-pinned .lv-pin[data-at='{at}'][data-state='exact']").wait_for(
        timeout=MODEL_TIMEOUT * 1000)
    next_frames(page, 3)
    after = token.evaluate(BOX_JS)
    moved = {k: (before[k], after[k]) for k in ("x", "y", "w", "h", "scroll") if abs(after[k] - before[k]) >= 1}
    assert not moved, f"pinning moved the token: {before} -> {after}"


def as_chart_writes(p: float) -> str:
    """One decimal, and "<0.1%" where that would read 0.0 % for a probability that is not 0."""
    return "<0.1%" if 100 * p < 0.05 else f"{100 * p:.1f}%"


def check_numbers(page, reference: dict) -> None:
    panel = page.locator(PANEL).first
    rows = panel.evaluate(ROWS_JS)
    assert rows and any(r["id"] == reference["chosen"] for r in rows)
    for r in rows:
        want = reference["p"].get(str(r["id"]), 0.0)
        assert abs(r["p"] - want) < 2e-6, (r, want)
        assert abs(r["model"] - reference["model"][str(r["id"])]) < 2e-6
        shown = r["shown"][3]  # token, rank, p(model), p(sampled)
        assert shown == ("cut off" if want == 0 else as_chart_writes(want)), (shown, want)
        assert r["shown"][2] == as_chart_writes(reference["model"][str(r["id"])])
    assert int(panel.locator("[data-kept]").get_attribute("data-kept")) == reference["kept"]
    band = panel.evaluate(BAND_JS)["temperature"]
    if reference["rank"] == 1:  # the most likely: sampleable at every T, alone at low T
        assert float(band["from"]) == 0.0
        assert reference["alone_to"] is None or abs(float(band["onlyTo"]) - reference["alone_to"]) <= 0.01
    else:
        assert reference["kept_from"] is not None
        assert reference["kept_from"] - 0.01 <= float(band["from"]) <= reference["kept_from"] + 1e-9, band
        assert f"T ≥ {float(band['from']):.3g}" in band["words"]


def test_pinned_token_numbers_are_exact_the_page_stays_and_the_band_matches_a_sweep(page, lab_server, browser):
    write(lab_server, "pinned.ipynb", [APP_CELL, REFERENCE_CELL, STATE_CELL, *REF_CELLS, SHOW_CELL])
    open_notebook(page, lab_server, "pinned.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-explore textarea", MODEL_TIMEOUT)
    page.locator(f"{APP} button", has_text="Generate").first.click()
    run_cell(page, 1)  # (the reference model loads while the app generates)
    wait_cell_done(page, 1, timeout=MODEL_TIMEOUT)
    assert "ready" in output_text(page, 1), output_text(page, 1)
    deadline = time.monotonic() + MODEL_TIMEOUT
    while True:
        state = printed(page, 2, "STATE")
        if not state["running"]:
            break
        assert time.monotonic() < deadline, state
    assert state["error"] is None, state
    completion = range(state["prompt_len"], state["n"])
    at = next((i for i in completion if state["ranks"][i] > 1), completion[0])

    pin_without_moving(page, at)
    reference = printed(page, 3, "REF")
    assert reference["at"] == at
    check_numbers(page, reference)

    # min-p by the keyboard on its slider (in the view's column, above the chart): five steps of 0.01
    page.locator(f"{APP} .lv-side-range[data-setting='min_p']").focus()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    # (the panel's HTML is replaced on each change: wait on the selector, not on an element)
    page.locator(PANEL, has_text="min-p 0.05").first.wait_for(timeout=30_000)
    reference = printed(page, 4, "REF")
    check_numbers(page, reference)
    picture(page, "pinned-panel.png")
    save_screenshot(page, "pinned-band.png", f"{APP} .lv-explore-pinned")  # the panel alone, for docs/
    dark_screenshot(page)
    projector(browser, lab_server, at)
    next_token_chart(page)
    assert not page.page_errors, page.page_errors


def picture(page, name: str) -> None:
    """The whole app in tests/artifacts/, in a page tall enough that it is not cut by the window."""
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": 2400})
    try:
        next_frames(page, 3)
        page.locator(APP).scroll_into_view_if_needed()
        save_screenshot(page, name, APP)
    finally:
        page.set_viewport_size(size)


def dark_screenshot(page) -> None:
    try:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        next_frames(page, 3)
        picture(page, "pinned-panel-dark.png")
    finally:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)


def projector(browser, lab_server, at: int) -> None:
    """A 1280x720 screen at 150 %: 853x480 CSS pixels at device scale 1.5; the same app shown again,
    unpinned by a click on the pinned token, then pinned again: the token stays where it was."""
    context = browser.new_context(viewport={"width": 853, "height": 480}, device_scale_factor=1.5)
    small = context.new_page()
    try:
        open_notebook(small, lab_server, "pinned.ipynb")
        run_cell(small, 5)
        wait_cell_done(small, 5)
        app = small.locator(APP).last  # this cell's view of the app (the notebook may show cell 0's too)
        token = app.locator(f".lv-root .lv-token[data-index='{at}']")
        token.wait_for(timeout=60_000)
        token.click()  # pinned from before: unpins
        app.locator(".lv-explore-pinned .lv-pin").wait_for(state="hidden", timeout=30_000)
        pin_without_moving(small, at, app)
        small.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")  # the room
        next_frames(small, 3)
        app.locator(".lv-explore-pinned .lv-pin").scroll_into_view_if_needed()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        small.screenshot(path=str(ARTIFACTS / "pinned-panel-projector.png"))
    finally:
        context.close()


def next_token_chart(page) -> None:
    """Next token: the choices as a chart in the view's column, in the chart panel's place (the same
    box); Tab to one and Enter appends it."""
    tokens = page.locator(f"{APP} .lv-root .lv-token").count()
    page.locator(f"{APP} button", has_text="Next token").first.click()
    chart = page.locator(f"{APP} .lv-next-chart")
    chart.locator(".lv-next-choice").first.wait_for(timeout=MODEL_TIMEOUT * 1000)
    slot = page.locator(f"{APP} .lv-side-slot").first.bounding_box()
    where = page.locator(f"{APP} .lv-next").first.bounding_box()
    assert all(abs(where[k] - slot[k]) < 1 for k in ("x", "y", "width", "height")), (where, slot)
    fills = chart.locator(".lv-next-choice .lv-alt-fill")  # (the choices' bars; "other" comes after them)
    widths = fills.evaluate_all("els => els.map(e => parseFloat(e.style.width))")
    assert widths == sorted(widths, reverse=True) and widths[0] > 0
    picture(page, "next-token-chart.png")
    chart.locator(".lv-next-choice").nth(1).focus()
    page.keyboard.press("Enter")
    page.wait_for_function("([sel, n]) => document.querySelectorAll(sel).length === n + 1",
                           arg=[f"{APP} .lv-root .lv-token", tokens], timeout=MODEL_TIMEOUT * 1000)
