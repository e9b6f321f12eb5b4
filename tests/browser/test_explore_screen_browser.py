"""The explorer on one screen, as a class sees it: a projector (1280x720 at 150 % = 853x480 CSS px,
JupyterLab's file browser hidden) and a 1400x900 screen, in the light and the dark theme.

- Before Generate, at most 10 controls are visible (a slider counts once), and no label is cut.
- With a token pinned, the temperature slider and the pinned token's chart lie together inside the
  notebook's visible area (real geometry: getBoundingClientRect against the notebook's scroller),
  and moving the slider changes the pinned token's p on the same screen, to the value an
  independent softmax gives (the default model loaded again with plain transformers in the kernel).
- No click moves what was clicked, nor scrolls the notebook (< 2 px): pin, release, branch, Next
  token, a choice (manual decoding), Compare. Each is measured before and after.
- Next token's choices show in the column beside the text, as the chart; "type a token" gives
  that token's p, checked against the independent softmax.
"""

from __future__ import annotations

import time

import pytest

from browser.lab import (
    ARTIFACTS,
    MODEL_TIMEOUT,
    next_frames,
    output_text,
    printed,
    projector_page,
    run_cell,
    screen_shot,
    set_theme,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

PROMPT = "The largest planet in the solar system is"
APP = ".jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore"
LARGE = {"width": 1400, "height": 900}
MOVED = 2  # px: a click moves nothing by this much or more
STEP_TIMEOUT = 180  # s: one job after the model is loaded (a branch, a Next token, a choice)

APP_CELL = """\
import logprob_viz as lv
app = lv.explore(max_new_tokens=12, top_logprobs=5, temperature=0.8, seed=1)
app"""

# The independent numbers: the default model loaded again with plain transformers, a float64
# softmax of its logits divided by the temperature (no top-p, top-k, min-p in this test).
REFERENCE_CELL = """\
import json, torch
from transformers import AutoModelForCausalLM
from logprob_viz.sources.local.default_model import default_model_path
reference = AutoModelForCausalLM.from_pretrained(default_model_path(), dtype=torch.float32).eval()

def softmax_after(ids, temperature=1.0):
    with torch.inference_mode():
        logits = reference(torch.tensor([list(ids)])).logits[0, -1].double()
    return torch.softmax(logits / temperature, dim=-1)
print("ready")"""

PINNED_CELL = """\
t, at = app.current, app.view.selected
p = softmax_after(t.token_ids[:at].tolist(), app.controls.temperature.value)
print("REF " + json.dumps({"at": at, "T": app.controls.temperature.value, "p": float(p[int(t.token_ids[at])])}))"""

TYPED_CELL = """\
base = app.state.base.token_ids.tolist()
tid = app.runner.tokenizer(app.view.next_typed["text"], add_special_tokens=False)["input_ids"]
print("REF " + json.dumps({"ids": tid, "p": float(softmax_after(base)[tid[0]])}))"""

STATE_CELL = """\
print("STATE " + json.dumps({"running": app.running, "error": app.last_error,
                             "nodes": 0 if app.tree is None else len(app.tree.nodes),
                             "shown": len(app.view.trace), "last": app.view.trace.tokens[-1]}))"""

# Visible controls in the app: what a person can operate (a range input is one slider).
CONTROLS_JS = """app => {
  const seen = [...app.querySelectorAll('button, input, select, textarea, [role=button]')].filter((e) => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && e.checkVisibility({visibilityProperty: true, opacityProperty: true});
  });
  const cut = seen.filter((e) => e.tagName === 'BUTTON' && e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent);
  return {count: seen.length, names: seen.map((e) => e.getAttribute('aria-label') || e.textContent.trim()
    || e.placeholder || e.tagName), cut};
}"""

# An element's box, the notebook's scroll and its visible area (the scroller's box).
BOX_JS = """e => {
  const r = e.getBoundingClientRect();
  const scroller = e.closest('.jp-NotebookPanel').querySelector('.jp-WindowedPanel-outer');
  const s = scroller.getBoundingClientRect();
  return {x: r.x, y: r.y, top: r.top, bottom: r.bottom, left: r.left, right: r.right, scroll: scroller.scrollTop,
          area: {top: s.top, bottom: s.bottom, left: s.left, right: s.right}};
}"""


# Token names in the charts and lists, and the buttons there: none cut (its text wider than its box,
# an ellipsis, or its box past the edge of the panel that clips it).
CUT_JS = """app => {
  const cut = [];
  const names = '.lv-chip, .lv-alt-token, .lv-side-tok, .lv-why-row, .lv-why-ask, .lv-side button';
  for (const e of app.querySelectorAll(names)) {
    const r = e.getBoundingClientRect();
    if (!r.width) continue;
    const clipper = e.closest('.lv-panel, .lv-side, .lv-root');
    const c = clipper.getBoundingClientRect();
    const style = getComputedStyle(e);
    const past = r.right > c.right + 1 || r.left < c.left - 1;
    if (e.scrollWidth > e.clientWidth + 1 || style.textOverflow === 'ellipsis' || past)
      cut.push({text: e.textContent, className: e.className, width: e.clientWidth, scroll: e.scrollWidth,
                right: Math.round(r.right), edge: Math.round(c.right)});
  }
  return cut;
}"""


PARTS_JS = f"""() => [...document.querySelectorAll('{APP} .lv-side .lv-chart > *')]
  .map((e) => [e.className, Math.round(e.getBoundingClientRect().top), Math.round(e.getBoundingClientRect().height)])"""


def box(locator) -> dict:
    return locator.evaluate(BOX_JS)


def status(page) -> str:
    return page.locator(f"{APP} .lv-explore-status").inner_text()


def wait_idle(page, timeout: float = STEP_TIMEOUT) -> None:
    """Until Generate is pressable again (no job runs)."""
    generate = page.locator(f"{APP} .lv-explore-bar button", has_text="Generate").first
    page.wait_for_function("b => !b.disabled", arg=generate.element_handle(), timeout=timeout * 1000)


def in_sight(locator, tries: int = 3) -> None:
    """Scroll `locator` into view. A reply from the kernel (the exact readout of a pin) draws the chart
    again, in the same place: an element found just before can be replaced while playwright waits for it
    to be stable, so it is looked up again (the layout is what the test measures, not the element's identity)."""
    for attempt in range(tries):
        try:
            locator.scroll_into_view_if_needed()
            return
        except Exception as error:
            if "not attached" not in str(error) or attempt == tries - 1:
                raise


def clicked_without_moving(page, what: str, locator, after=None, settle=None) -> dict:
    """Click `locator`; after `settle()` (what the click started has finished), the element at its place
    (`after`, default the same locator) and the notebook's scroll must be where they were (< MOVED px)."""
    in_sight(locator)
    next_frames(page)
    before = box(locator)
    parts = PARTS_JS
    layout_before = page.evaluate(parts)
    locator.click()
    if settle is not None:
        try:
            settle()
        except Exception as error:
            screen_shot(page, "explore-settle-failed.png")
            said = status(page)
            raise AssertionError(f"{what}: what the click started did not finish; the status says {said!r}") from error
    next_frames(page, 3)
    now = box(after if after is not None else locator)
    moved = {k: round(now[k] - before[k], 1) for k in ("x", "y", "scroll")}
    assert all(abs(v) < MOVED for v in moved.values()), (
        f"{what} moved what was clicked: {moved}; the column's parts before {layout_before}, "
        f"after {page.evaluate(parts)}")
    return moved


def inside(b: dict, area: dict) -> bool:
    return b["top"] >= area["top"] - 1 and b["bottom"] <= area["bottom"] + 1


def together(page, at: int) -> dict:
    """The temperature slider and the pinned token's chart, both inside the notebook's visible area."""
    slider = page.locator(f"{APP} .lv-side-range[data-setting='temperature']")
    chart = page.locator(f"{APP} .lv-chart[data-index='{at}']")
    chart.wait_for(state="visible", timeout=20_000)
    s, c = box(slider), box(chart)
    if not (inside(s, s["area"]) and inside(c, c["area"])):
        screen_shot(page, "explore-not-together.png")
    assert inside(s, s["area"]) and inside(c, c["area"]), (
        f"slider {s['top']:.0f}-{s['bottom']:.0f}, chart {c['top']:.0f}-{c['bottom']:.0f}, "
        f"visible {s['area']['top']:.0f}-{s['area']['bottom']:.0f}")
    return {"slider": s, "chart": c}


def still_together_when_scrolled(page, at: int, by: int) -> None:
    """The notebook scrolled down by `by` px (the text moves up under them): the slider and the chart
    stick to the top of the visible area, together; then scrolled back."""
    scroller = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"
    page.locator(scroller).evaluate(f"e => e.scrollBy(0, {by})")
    next_frames(page, 3)
    try:
        together(page, at)
    finally:
        page.locator(scroller).evaluate(f"e => e.scrollBy(0, -{by})")
        next_frames(page, 3)


def scroll_to_text(page) -> None:
    """As a person scrolls once: the view (its text and the column beside it) at the top of the notebook's area."""
    body = page.locator(f"{APP} .lv-root")
    body.evaluate("e => e.scrollIntoView({block: 'start'})")
    next_frames(page, 3)


def readout(page) -> dict:
    return page.locator(f"{APP} .lv-side-readout").evaluate("e => ({...e.dataset, text: e.textContent})")


def test_the_explorer_on_one_screen_at_projector_and_large_sizes(browser, lab_server):
    write_notebook(lab_server, "screen.ipynb", [APP_CELL, REFERENCE_CELL, PINNED_CELL, TYPED_CELL, STATE_CELL])
    with projector_page(browser, lab_server, "screen.ipynb") as page:
        page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(page, 0)
        wait_for_output(page, lab_server, 0, ".lv-explore .lv-side-range", MODEL_TIMEOUT)
        app = page.locator(APP)

        # Before Generate: few controls, no label cut.
        controls = app.evaluate(CONTROLS_JS)
        assert controls["count"] <= 10, controls
        assert not controls["cut"], controls
        for name in ("temperature", "top-p", "min-p", "Generate", "Next token", "Stop"):
            assert any(name in n for n in controls["names"]), (name, controls)
        screen_shot(page, "explore-projector-start.png")
        run_cell(page, 1)
        wait_cell_done(page, 1, timeout=MODEL_TIMEOUT)
        assert "ready" in output_text(page, 1)

        app.locator("textarea").fill(PROMPT)
        app.locator(".lv-explore-bar button", has_text="Generate").click()
        wait_status(page, "Generated")
        n = app.locator(".lv-root .lv-token").count()
        assert n > 10

        # Pin a token: nothing moves; the slider and its chart share the screen.
        scroll_to_text(page)
        at = app.locator(".lv-token:not(.lv-prompt)").first.evaluate("e => Number(e.dataset.index)") + 1
        token = app.locator(f".lv-token[data-index='{at}']")
        clicked_without_moving(page, "pin", token)
        together(page, at)
        still_together_when_scrolled(page, at, 100)
        page.wait_for_function("e => e.dataset.state === 'exact'", arg=app.locator(".lv-side-readout").element_handle(),
                               timeout=MODEL_TIMEOUT * 1000)
        first = readout(page)
        ref = printed(page, 2, "REF")
        assert ref["at"] == at and abs(float(first["sampled"]) - ref["p"]) < 1e-6, (first, ref)

        # Move the temperature: the pinned token's p changes on the same screen, to the independent value.
        scroll_to_text(page)
        slider = app.locator(".lv-side-range[data-setting='temperature']")
        slider.fill("1.5")
        page.wait_for_function("e => e.dataset.state === 'exact' && e.textContent.includes('T = 1.50')",
                               arg=app.locator(".lv-side-readout").element_handle(), timeout=60_000)
        hot = readout(page)
        ref_hot = printed(page, 2, "REF")
        assert ref_hot["T"] == 1.5 and abs(float(hot["sampled"]) - ref_hot["p"]) < 1e-6, (hot, ref_hot)
        assert abs(float(hot["sampled"]) - float(first["sampled"])) > 1e-3
        scroll_to_text(page)
        together(page, at)
        screen_shot(page, "explore-projector-pinned.png")
        assert not app.evaluate(CUT_JS), app.evaluate(CUT_JS)
        with_dark(page, lambda: (scroll_to_text(page), together(page, at),
                                 screen_shot(page, "explore-projector-dark.png")))

        # Release (a second click on the token), then pin again: nothing moves.
        clicked_without_moving(page, "release", token)
        clicked_without_moving(page, "pin again", token)
        # (the pin asks the kernel for its exact readout again; the chart is drawn again when it comes)
        page.wait_for_function(f"() => document.querySelector('{APP} .lv-side-readout')?.dataset.state === 'exact'",
                               timeout=MODEL_TIMEOUT * 1000)

        # Branch: a click on the second alternative's bar; the row in its place stays put.
        row = app.locator(f".lv-chart[data-index='{at}'] .lv-alt-row:not(.lv-extra)").nth(1)
        clicked_without_moving(page, "branch", row, settle=lambda: wait_nodes(page, 2, STEP_TIMEOUT))

        # Next token: the choices in the chart's place; a choice appends; nothing moves.
        next_button = app.locator(".lv-explore-bar button", has_text="Next token")
        choices = app.locator(".lv-next .lv-next-choice")
        clicked_without_moving(page, "Next token", next_button,
                               settle=lambda: (choices.first.wait_for(state="visible", timeout=STEP_TIMEOUT * 1000),
                                               wait_idle(page)))
        assert choices.count() == 5
        chosen_text = choices.nth(1).locator(".lv-alt-token").first.text_content()
        clicked_without_moving(page, "a choice", choices.nth(1), after=choices.nth(1),
                               settle=lambda: (wait_status(page, "Appended"), wait_idle(page)))
        state = printed(page, 4, "STATE")
        shown = app.locator(".lv-root .lv-text .lv-token")
        assert shown.count() == state["shown"], (shown.count(), state)
        assert state["last"].strip() in chosen_text, (chosen_text, state)  # (the chip marks the spaces)

        # "type a token": its p, as the independent softmax gives it.
        typed = app.locator(".lv-next-typed-input")
        typed.fill(" Jupiter")
        typed.press("Enter")
        answer = app.locator(".lv-next-typed-answer")
        # (by selector: the answer comes as a trait, and the chart is drawn again with it, a new element)
        page.wait_for_function(f"() => Number(document.querySelector('{APP} .lv-next-typed-answer')?.dataset.p) > 0",
                               timeout=STEP_TIMEOUT * 1000)
        ref_typed = printed(page, 3, "REF")
        assert len(ref_typed["ids"]) == 1
        assert abs(float(answer.evaluate("e => e.dataset.p")) - ref_typed["p"]) < 1e-6
        screen_shot(page, "explore-projector-next.png")
        assert not app.evaluate(CUT_JS), app.evaluate(CUT_JS)

        # Compare: in the tree's place below the view; the button stays where it was.
        compare = app.locator(".lv-tree-panel button", has_text="Compare")
        clicked_without_moving(page, "Compare", compare,
                               settle=lambda: app.locator(".lvc-root").wait_for(state="visible", timeout=60_000))

        # The same app on a 1400x900 screen, light and dark.
        page.set_viewport_size(LARGE)
        next_frames(page, 3)
        scroll_to_text(page)
        if not app.locator(f".lv-token.lv-pinned[data-index='{at}']").count():
            clicked_without_moving(page, "pin at 1400x900", token)
        together(page, at)
        screen_shot(page, "explore-large.png")
        with_dark(page, lambda: (scroll_to_text(page), together(page, at), screen_shot(page, "explore-large-dark.png")))
        assert (ARTIFACTS / "explore-large.png").is_file()


def with_dark(page, check) -> None:
    set_theme(page, dark=True)
    try:
        next_frames(page, 3)
        check()
    finally:
        set_theme(page, dark=False)


def wait_status(page, start: str, timeout: float = MODEL_TIMEOUT) -> str:
    """Until the status line starts with `start`; an error there fails at once, saying it."""
    deadline = time.monotonic() + timeout
    while not (said := status(page)).startswith(start):
        assert page.locator(f"{APP} .lv-explore-error").count() == 0, f"the app failed: {said}"
        assert time.monotonic() < deadline, f"no {start!r} after {timeout:.0f} s: the status says {said!r}"
        time.sleep(0.2)  # (polling the condition above)
    return said


def wait_nodes(page, count: int, timeout: float = MODEL_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while page.locator(f"{APP} .lv-tree-row").count() < count:
        assert time.monotonic() < deadline, f"no {count} branches after {timeout:.0f} s: {status(page)}"
        time.sleep(0.2)  # (polling the condition above)
    wait_idle(page)
