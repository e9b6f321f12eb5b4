"""The explorer's one screen says one thing (issue 49), on a projector (853x480 CSS px, dark, the
file browser hidden) and at 1400x900 (light):

- After the temperature slider moved, the pinned token's chart shows in its second column ("at
  sliders") the very numbers of the readout and of the pinned table below (token by token), and the
  chosen token's is the one an independent float64 softmax of the default model gives at that
  temperature. A chart of a token that nothing sampled under these sliders (a hovered prompt token)
  has no such column: no 0 % rows and no "other 100 %" made from -inf / NaN; a hovered generated
  token's column is headed "sampled from" (what it was drawn from), never "at sliders".
- No element holding a token's name, a column heading, a slider's label or a part of the legend
  wraps inside itself, overflows, or reaches past the box that clips it; no two labels on a line touch.
- A branch started by a click in the chart leaves the clicked row where it was, and says how it goes
  in the sticky column, where the click was, on screen while the text is scrolled into view, every
  line of it (not clipped).
- Next token's chart has an "other" row: 1 - the listed tokens' p, as the reference model gives it.
- Compare opens over the tree's outline in a bounded box: nothing below it moves.
"""

from __future__ import annotations

import time

import pytest

from browser.lab import (
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
from browser.one_screen import APP_CELL, CHART_COLUMN_JS, NAMES_JS, REFERENCE_CELL, TOUCHING_JS

pytestmark = pytest.mark.browser

PROMPT = "The largest planet in the solar system is"
APP = ".jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore"
LARGE = {"width": 1400, "height": 900}
STEP_TIMEOUT = 240  # s: one job after the model is loaded, on 2 shared cores

# The independent number: the default model loaded again with plain transformers, a float64
# softmax of its logits divided by the temperature (the sliders' top-p and min-p stay off here).
PINNED_CELL = """\
t, at, T = app.current, app.view.selected, app.controls.temperature.value
with torch.inference_mode():
    logits = reference(torch.tensor([t.token_ids[:at].tolist()])).logits[0, -1].double()
p = torch.softmax(logits / T, dim=-1)
print("REF " + json.dumps({"at": at, "T": T, "top_p": app.controls.top_p.value, "min_p": app.controls.min_p.value,
                           "p": float(p[int(t.token_ids[at])])}))"""


# Next token's "other": 1 - the listed choices' p, from the reference model's softmax after the same text.
OTHER_CELL = """\
ids = app.state.base.token_ids.tolist()
with torch.inference_mode():
    p = torch.softmax(reference(torch.tensor([ids])).logits[0, -1].double(), dim=-1)
listed = [int(option[0]) for option in app.view.next_step["options"]]
print("OTHER " + json.dumps({"listed": listed, "other": float(1 - p[listed].sum())}))"""


def status_text(page) -> str:
    return page.locator(f"{APP} .lv-explore-status").inner_text()


def wait_status(page, start: str, timeout: float = MODEL_TIMEOUT) -> str:
    deadline = time.monotonic() + timeout
    while not (said := status_text(page)).startswith(start):
        assert page.locator(f"{APP} .lv-explore-error").count() == 0, f"the app failed: {said}"
        assert time.monotonic() < deadline, f"no {start!r} after {timeout:.0f} s: the status says {said!r}"
        time.sleep(0.2)  # (polling the condition above)
    return said


def scroll_to_text(page) -> None:
    page.locator(f"{APP} .lv-root").evaluate("e => e.scrollIntoView({block: 'start'})")
    next_frames(page, 3)


def readout(page) -> dict:
    return page.locator(f"{APP} .lv-side-readout").evaluate("e => ({...e.dataset, text: e.textContent})")


def pinned_table(page) -> dict:
    """The pinned table below the view: {token id: p under the settings} (its data, unrounded)."""
    return page.locator(f"{APP} .lv-explore-pinned tr[data-token-id]").evaluate_all(
        "rows => Object.fromEntries(rows.map((r) => [r.dataset.tokenId, Number(r.dataset.pNew)]))")


def chart_column(page, at: int) -> dict | None:
    return page.locator(f"{APP} .lv-side .lv-chart[data-index='{at}']").evaluate(CHART_COLUMN_JS)


def nothing_cut(page, where: str) -> None:
    """No name, heading or label wraps, overflows or is clipped; none touches the next (a picture if one does)."""
    app = page.locator(APP)
    bad, close = app.evaluate(NAMES_JS), app.evaluate(TOUCHING_JS)
    if bad or close:
        screen_shot(page, f"one-screen-cut-{where}.png")
    assert not bad, f"{where}: names or labels cut: {bad}"
    assert not close, f"{where}: labels that touch: {close}"



def column_follows_the_sliders(page, at: int, ref: dict) -> dict:
    """The chart's column at the pinned token: the readout's numbers, the pinned table's, the reference's."""
    page.wait_for_function(
        f"() => document.querySelector(\"{APP} .lv-side .lv-chart[data-index='{at}'] .lv-alts-processed\")",
        timeout=60_000)
    column = chart_column(page, at)
    said, table = readout(page), pinned_table(page)
    assert column is not None and "at sliders" in column["head"], column
    assert any(row["p"] == float(said["sampled"]) for row in column["rows"].values()), (column, said)
    for token_id, p in table.items():  # every row the table has, the chart has with the same p
        assert column["rows"][token_id]["p"] == p, (token_id, column["rows"].get(token_id), p)
    assert abs(float(said["sampled"]) - ref["p"]) < 1e-6, (said, ref)  # and it is the independent softmax's
    return column


# The side status's box, its scroll, and the notebook's visible area (the scroller's box).
STATUS_JS = """e => {
  const r = e.getBoundingClientRect();
  const s = e.closest('.jp-NotebookPanel').querySelector('.jp-WindowedPanel-outer').getBoundingClientRect();
  return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, text: e.textContent, hidden: e.hidden,
          clipped: e.scrollHeight > e.clientHeight + 1, area: {top: s.top, bottom: s.bottom}};
}"""


def side_status_on_screen(page, start: str, timeout: float) -> dict:
    """Until the column's status says `start`...; then it must lie inside the notebook's visible area, whole."""
    side = page.locator(f"{APP} .lv-side-status")
    deadline = time.monotonic() + timeout
    while True:
        got = side.evaluate(STATUS_JS)
        if not got["hidden"] and got["text"].startswith(start):
            break
        assert page.locator(f"{APP} .lv-explore-error").count() == 0, f"the app failed: {status_text(page)}"
        assert time.monotonic() < deadline, f"the column's status never said {start!r}: {got}"
        time.sleep(0.1)  # (polling the condition above)
    area = got["area"]
    assert area["top"] - 1 <= got["top"] and got["bottom"] <= area["bottom"] + 1, f"status off screen: {got}"
    assert not got["clipped"], f"the status clips its lines: {got}"
    return got


def test_the_class_screen_says_one_thing(browser, lab_server):
    write_notebook(lab_server, "one_screen.ipynb", [APP_CELL, REFERENCE_CELL, PINNED_CELL, OTHER_CELL])
    with projector_page(browser, lab_server, "one_screen.ipynb") as page:
        page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        set_theme(page, dark=True)
        run_cell(page, 0)
        wait_for_output(page, lab_server, 0, ".lv-explore .lv-side-range", MODEL_TIMEOUT)
        nothing_cut(page, "projector-start")
        run_cell(page, 1)
        wait_cell_done(page, 1, timeout=MODEL_TIMEOUT)
        assert "ready" in output_text(page, 1)
        app = page.locator(APP)
        app.locator("textarea").fill(PROMPT)
        app.locator(".lv-explore-bar button", has_text="Generate").click()
        wait_status(page, "Generated")

        # Pin the second generated token; the temperature slider to 0.50.
        scroll_to_text(page)
        at = app.locator(".lv-token:not(.lv-prompt)").first.evaluate("e => Number(e.dataset.index)") + 1
        app.locator(f".lv-token[data-index='{at}']").click()
        app.locator(".lv-side-range[data-setting='temperature']").fill("0.5")
        page.wait_for_function("e => e.dataset.state === 'exact' && e.textContent.includes('T = 0.50')",
                               arg=app.locator(".lv-side-readout").element_handle(), timeout=STEP_TIMEOUT * 1000)
        ref = printed(page, 2, "REF")
        assert ref["at"] == at and ref["T"] == 0.5 and ref["top_p"] == 1 and ref["min_p"] == 0, ref
        scroll_to_text(page)
        screen_shot(page, "one-screen-projector-dark-pinned.png")
        column = column_follows_the_sliders(page, at, ref)
        assert column["other"] not in ("100%", "100.0%"), column
        nothing_cut(page, "projector-dark-pinned")

        # A prompt token, hovered: nothing was sampled there under these sliders, so no second column.
        app.locator(".lv-token.lv-prompt").nth(2).hover()
        page.wait_for_function(f"() => document.querySelector(\"{APP} .lv-side .lv-chart\")?.dataset.index === '2'")
        assert chart_column(page, 2) is None
        screen_shot(page, "one-screen-projector-dark-prompt-hover.png")
        nothing_cut(page, "projector-dark-prompt-hover")
        # A generated token, hovered (not the one the sliders speak of): what it was sampled from,
        # headed so, not "at sliders".
        app.locator(f".lv-token[data-index='{at - 1}']").hover()
        shown = f"() => document.querySelector(\"{APP} .lv-side .lv-chart\")?.dataset.index === '{at - 1}'"
        page.wait_for_function(shown)
        hovered = chart_column(page, at - 1)
        assert hovered is not None and "sampled from" in hovered["head"], hovered
        assert "at sliders" not in hovered["head"], hovered

        # A branch from a click in the chart, the text scrolled into view: how it goes shows in the column,
        # on screen, while it runs (with its seconds) and when it is done.
        scroll_to_text(page)
        app.locator(".lv-side-readout").hover()  # (off the text: the chart shows the pinned token again)
        rows = app.locator(f".lv-side .lv-chart[data-index='{at}'] .lv-alt-row:not(.lv-extra)")
        clicked = next(j for j in range(rows.count()) if "lv-chosen" not in rows.nth(j).get_attribute("class"))
        top = "e => e.getBoundingClientRect().top + e.closest('.jp-WindowedPanel-outer').scrollTop"
        before = rows.nth(clicked).evaluate(top)
        rows.nth(clicked).click()
        side_status_on_screen(page, "Branch", 30)
        screen_shot(page, "one-screen-projector-dark-branching.png")
        done = side_status_on_screen(page, "Branch #1 from token", STEP_TIMEOUT)
        assert " s" in done["text"], done
        # the clicked alternative (now the fork's chosen token) is where it was: the chart kept its layout
        after = rows.nth(clicked).evaluate(top)
        assert abs(after - before) < 2 and "lv-chosen" in rows.nth(clicked).get_attribute("class"), (before, after)
        screen_shot(page, "one-screen-projector-dark-branched.png")
        nothing_cut(page, "projector-dark-branched")

        # Next token: its chart adds up to 1, with an "other" row (the lesson says probabilities do).
        app.locator(".lv-explore-bar button", has_text="Next token").click()
        other = app.locator(".lv-next .lv-next-other")
        other.wait_for(state="visible", timeout=STEP_TIMEOUT * 1000)
        ref_other = printed(page, 3, "OTHER")
        assert len(ref_other["listed"]) == 5, ref_other
        assert abs(float(other.get_attribute("data-p")) - ref_other["other"]) < 1e-5, (other.inner_text(), ref_other)
        scroll_to_text(page)
        screen_shot(page, "one-screen-projector-dark-next.png")
        nothing_cut(page, "projector-dark-next")
        app.locator(".lv-next-close").click()
        other.wait_for(state="hidden", timeout=30_000)

        # Compare: over the outline, in a bounded box; nothing below it (the pinned table) moves.
        below = app.locator(".lv-explore-pinned")
        where = "e => e.getBoundingClientRect().top + e.closest('.jp-WindowedPanel-outer').scrollTop"
        compare = app.locator(".lv-tree-panel button", has_text="Compare")
        compare.scroll_into_view_if_needed()
        next_frames(page, 2)
        before = (below.evaluate(where), compare.evaluate(where))
        compare.click()
        app.locator(".lvc-root").wait_for(state="visible", timeout=60_000)
        next_frames(page, 3)
        after = (below.evaluate(where), compare.evaluate(where))
        assert all(abs(a - b) < 2 for a, b in zip(before, after, strict=True)), (before, after)
        box = app.locator(".lv-explore-compare").evaluate("e => [e.getBoundingClientRect().height, window.innerHeight]")
        assert box[0] <= 0.7 * box[1] + 1, box
        screen_shot(page, "one-screen-projector-dark-compare.png")
        compare.click()  # (closes it)
        app.locator(".lvc-root").wait_for(state="hidden", timeout=30_000)

        # The same screen at 1400x900, light (the fork token pinned: its own reference).
        set_theme(page, dark=False)
        page.set_viewport_size(LARGE)
        next_frames(page, 3)
        scroll_to_text(page)
        ref = printed(page, 2, "REF")
        assert ref["at"] == at, ref
        app.locator(".lv-side-readout").hover()
        page.wait_for_function("e => e.dataset.state === 'exact'", arg=app.locator(".lv-side-readout").element_handle(),
                               timeout=STEP_TIMEOUT * 1000)
        column_follows_the_sliders(page, at, ref)
        screen_shot(page, "one-screen-large-light-pinned.png")
        nothing_cut(page, "large-light-pinned")
        set_theme(page, dark=True)
        scroll_to_text(page)
        screen_shot(page, "one-screen-large-dark-pinned.png")
        nothing_cut(page, "large-dark-pinned")
        set_theme(page, dark=False)
