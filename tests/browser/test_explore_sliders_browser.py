"""The explorer's sliders are dragged, as a person drags them, to each of their steps (issue 49, item 4),
on a projector (853x480 CSS px = 1280x720 at 150 %, dark, the file browser hidden) and at 1400x900
(light):

- With the mouse held down on a slider's track and moved across it a pixel at a time, every step of
  the slider (temperature 0 to 2 by 0.05, top-p 0.05 to 1 by 0.05, min-p 0 to 1 by 0.01) comes up:
  none is skipped between two pixels (the projector's 59 px temperature slider skipped some, and
  only the keyboard reached 0.70).
- The temperature slider dragged with the mouse from where it is to 0.70: the slider and the kernel
  say 0.70, and the pinned token's exact readout is the p an independent float64 softmax of the
  default model's logits at T = 0.7 gives.
- Dragging moves nothing else (< 2 px): the sliders, the readout, the pinned token's chart, the text.
- No slider's name or value wraps, overflows or touches the next label.
"""

from __future__ import annotations

import pytest

from browser.lab import (
    MODEL_TIMEOUT,
    next_frames,
    printed,
    projector_page,
    run_cell,
    screen_shot,
    set_theme,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)
from browser.one_screen import APP_CELL, NAMES_JS, REFERENCE_CELL, TOUCHING_JS

pytestmark = pytest.mark.browser

PROMPT = "The largest planet in the solar system is"
APP = ".jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore"
LARGE = {"width": 1400, "height": 900}
MOVED = 2  # px: dragging a slider moves nothing else by this much or more
STEP_TIMEOUT = 240  # s: one job after the model is loaded, on 2 shared cores

# The independent number: the default model loaded again with plain transformers, a float64 softmax
# of its logits divided by the temperature the kernel's slider holds (top-p 1 and min-p 0: checked).
PINNED_CELL = """\
t, at, c = app.current, app.view.selected, app.controls
with torch.inference_mode():
    logits = reference(torch.tensor([t.token_ids[:at].tolist()])).logits[0, -1].double()
p = torch.softmax(logits / c.temperature.value, dim=-1)
print("REF " + json.dumps({"at": at, "T": c.temperature.value, "top_p": c.top_p.value, "min_p": c.min_p.value,
                           "p": float(p[int(t.token_ids[at])])}))"""

# Every value a slider's input events gave while the mouse moved (what the person saw come up).
RECORD_JS = """input => {
  input.__seen = [];
  input.__record = (e) => input.__seen.push(e.target.value);
  input.addEventListener('input', input.__record);
}"""
SEEN_JS = """input => { input.removeEventListener('input', input.__record); return input.__seen; }"""

# The track of a range input, and its steps.
TRACK_JS = """e => { const r = e.getBoundingClientRect();
  return {left: r.left, right: r.right, y: r.top + r.height / 2, width: r.width,
          min: Number(e.min), max: Number(e.max), step: Number(e.step), value: Number(e.value)}; }"""

# What must not move while a slider is dragged: each box's page position (the notebook's scroll added).
STILL = {"sliders": ".lv-side-sliders", "readout": ".lv-side-readout", "chart": ".lv-side .lv-panel",
         "text": ".lv-token[data-index='0']"}
PLACE_JS = "e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; }"


def slider(page, setting: str):
    return page.locator(f"{APP} .lv-side-range[data-setting='{setting}']")


def steps_of(track: dict) -> set[str]:
    """Every value of the slider, as the input reports it ("0.7", "1")."""
    count = round((track["max"] - track["min"]) / track["step"])
    decimals = 2
    return {f"{track['min'] + k * track['step']:.{decimals}f}".rstrip("0").rstrip(".") for k in range(count + 1)}


def sweep(page, setting: str, back: bool) -> None:
    """The mouse held down on the slider's track, moved across it a pixel at a time (and back to its
    left end when `back`): every step comes up, none skipped."""
    input_ = slider(page, setting)
    input_.scroll_into_view_if_needed()
    track = input_.evaluate(TRACK_JS)
    input_.evaluate(RECORD_JS)
    x, y = round(track["left"]), track["y"]
    page.mouse.move(x, y)
    page.mouse.down()
    path = list(range(x, round(track["right"]) + 3))
    if back:
        path += path[::-1]
    for px in path:
        page.mouse.move(px, y)
    page.mouse.up()
    seen = input_.evaluate(SEEN_JS)
    missing = sorted(steps_of(track) - set(seen), key=float)
    px_per_step = track["width"] * track["step"] / (track["max"] - track["min"])
    assert not missing, (f"{setting}: dragged across its {track['width']:.0f} px ({px_per_step:.2f} px a step), "
                         f"these steps never came up: {missing}")


def drag_to(page, setting: str, target: str) -> list[str]:
    """Drag the slider's thumb, a pixel at a time, until it says `target`; release there. The values it
    passed through (it must come to `target`, never jump over it)."""
    input_ = slider(page, setting)
    track = input_.evaluate(TRACK_JS)
    input_.evaluate(RECORD_JS)
    # the thumb's centre: its half-width (16 px thumbs in chromium) in from the ends of the track
    share = (track["value"] - track["min"]) / (track["max"] - track["min"])
    x, y = track["left"] + 8 + share * (track["width"] - 16), track["y"]
    direction = 1 if float(target) > track["value"] else -1
    page.mouse.move(x, y)
    page.mouse.down()
    seen: list[str] = []
    for _ in range(round(track["width"]) + 4):
        if seen and seen[-1] == target.rstrip("0"):
            break
        x += direction
        page.mouse.move(x, y)
        seen = input_.evaluate("e => e.__seen")
    page.mouse.up()
    input_.evaluate(SEEN_JS)
    assert seen and seen[-1] == target.rstrip("0"), f"{setting}: the drag passed {seen}, never stopping at {target}"
    return seen


def places(page) -> dict:
    app = page.locator(APP)
    return {name: app.locator(selector).first.evaluate(PLACE_JS) for name, selector in STILL.items()}


def labels_whole(page, where: str) -> None:
    app = page.locator(APP)
    bad, close = app.evaluate(NAMES_JS), app.evaluate(TOUCHING_JS)
    if bad or close:
        screen_shot(page, f"explore-sliders-cut-{where}.png")
    assert not bad, f"{where}: names or labels cut: {bad}"
    assert not close, f"{where}: labels that touch: {close}"


def dragged_to_0_70(page, where: str, at: int) -> None:
    """Each slider swept across its steps; the temperature dragged to 0.70: the readout is the
    reference's p at T = 0.7, and nothing but the thumb moved."""
    for setting, back in (("temperature", False), ("top_p", False), ("min_p", True)):
        sweep(page, setting, back)  # (leaves temperature 2, top-p 1, min-p 0)
    readout = page.locator(f"{APP} .lv-side-readout")
    page.wait_for_function("e => e.dataset.state === 'exact' && e.textContent.includes('T = 2.00')",
                           arg=readout.element_handle(), timeout=STEP_TIMEOUT * 1000)
    next_frames(page, 3)
    before = places(page)
    passed = drag_to(page, "temperature", "0.70")
    assert passed[-2:] == ["0.75", "0.7"], passed  # it came to 0.70 by the step before it
    page.wait_for_function("e => e.dataset.state === 'exact' && e.textContent.includes('T = 0.70')",
                           arg=readout.element_handle(), timeout=STEP_TIMEOUT * 1000)
    next_frames(page, 3)
    shown = page.locator(f"{APP} .lv-side-slider:has([data-setting='temperature']) .lv-side-value")
    assert shown.inner_text() == "0.70"
    after = places(page)
    moved = {name: [round(a - b, 1) for a, b in zip(after[name], before[name], strict=True)] for name in STILL}
    assert all(abs(d) < MOVED for deltas in moved.values() for d in deltas), f"{where}: the drag moved {moved}"
    screen_shot(page, f"explore-sliders-{where}.png")
    labels_whole(page, where)
    ref = printed(page, 2, "REF")  # the kernel's slider, and the independent p there (the cell scrolls)
    assert (ref["at"], ref["T"], ref["top_p"], ref["min_p"]) == (at, 0.7, 1.0, 0.0), ref
    said = readout.evaluate("e => ({...e.dataset})")
    assert abs(float(said["sampled"]) - ref["p"]) < 1e-6, (said, ref)


def test_each_slider_step_is_reached_by_dragging(browser, lab_server):
    write_notebook(lab_server, "sliders.ipynb", [APP_CELL, REFERENCE_CELL, PINNED_CELL])
    with projector_page(browser, lab_server, "sliders.ipynb") as page:
        page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        set_theme(page, dark=True)
        run_cell(page, 0)
        wait_for_output(page, lab_server, 0, ".lv-explore .lv-side-range", MODEL_TIMEOUT)
        labels_whole(page, "projector-start")
        run_cell(page, 1)
        wait_cell_done(page, 1, timeout=MODEL_TIMEOUT)
        app = page.locator(APP)
        app.locator("textarea").fill(PROMPT)
        app.locator(".lv-explore-bar button", has_text="Generate").click()
        page.wait_for_function(f"() => document.querySelector('{APP} .lv-explore-status').textContent"
                               ".startsWith('Generated')", timeout=MODEL_TIMEOUT * 1000)
        app.locator(".lv-root").evaluate("e => e.scrollIntoView({block: 'start'})")
        next_frames(page, 3)
        at = app.locator(".lv-token:not(.lv-prompt)").first.evaluate("e => Number(e.dataset.index)") + 1
        app.locator(f".lv-token[data-index='{at}']").click()
        app.locator(".lv-side-readout").hover()  # (off the text: the chart shows the pinned token)
        dragged_to_0_70(page, "projector-dark", at)

        set_theme(page, dark=False)
        page.set_viewport_size(LARGE)
        next_frames(page, 3)
        app.locator(".lv-root").evaluate("e => e.scrollIntoView({block: 'start'})")
        next_frames(page, 3)
        dragged_to_0_70(page, "large-light", at)
