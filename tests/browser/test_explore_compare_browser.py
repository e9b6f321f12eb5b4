"""The explorer's Compare in a real JupyterLab and chromium, as a person uses it: generate, branch with
the `b` key on a pinned token, press Compare, keep branching. The comparison opens in sight, in place:
right under the Compare button (the tree's place, below the view), with the button and the page
where they were (< 2 px), so nothing the person looks at is pushed; it shows every branch as it is
made (#0-#5), and its numbers equal sums
written here over the branches the kernel wrote to disk. Screenshots: normal, dark, 1280x720 at 150 %.
"""

from __future__ import annotations

import json
import math
import time
import warnings

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from browser.lab import (
    ARTIFACTS,
    HAND_MADE_TIMEOUT,
    MODEL_TIMEOUT,
    cell,
    next_frames,
    open_notebook,
    python_prints,
    run_cell,
    save_screenshot,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

APP_CELL = """\
from logprob_viz.views.explorer import explore
app = explore("A robot may not injure a human being", max_new_tokens=6, top_logprobs=5)
app"""
DUMP_CELL = """\
import json, pathlib
pathlib.Path("tree.json").write_text(json.dumps([n.to_dict() for n in app.tree.nodes]))
print("DUMPED", len(app.tree.nodes))"""
AGAIN_CELL = "app  # the same app again (a second page)"

APP = ".jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore"
COMPARE = f"{APP} .lv-explore-compare .lvc-root"


def status(page) -> str:
    return page.locator(f"{APP} .lv-explore-status").text_content() or ""


def wait_status(page, text: str, timeout: float = MODEL_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while text not in status(page):
        if time.monotonic() > deadline:
            pytest.fail(f"the status line never said {text!r}; it says {status(page)!r}")
        time.sleep(0.2)  # (polling the status line)


def branch_with_b(page, number: int) -> None:
    """Pin the third token from the end of the text on show, press b; wait for branch #number."""
    tokens = page.locator(f"{APP} .lv-root .lv-token")
    at = tokens.count() - 3
    page.locator(f"{APP} .lv-root .lv-token[data-index='{at}']").click()
    page.keyboard.press("b")
    wait_status(page, f"Branch #{number} ")


def own_bits_per_byte(traces) -> list[tuple[float, int, int]]:
    """Per trace: bits per byte, tokens and bytes from the last byte where every trace has a token boundary
    inside their common byte prefix on (tokens with a known logprob), summed here."""
    rows = [([bytes.fromhex(h) for h in t["token_bytes"]], [float(x) for x in t["logprobs"]]) for t in traces]
    texts = [b"".join(r[0]) for r in rows]
    prefix = 0
    while all(prefix < len(t) for t in texts) and len({t[prefix] for t in texts}) == 1:
        prefix += 1
    bounds = []
    for token_bytes, _ in rows:
        at, own = 0, {0}
        for b in token_bytes:
            at += len(b)
            own.add(at)
        bounds.append(own)
    shared = max(c for c in set.intersection(*bounds) if c <= prefix)
    out = []
    for token_bytes, lps in rows:
        bits, tokens, n_bytes, at = 0.0, 0, 0, 0
        for b, lp in zip(token_bytes, lps, strict=True):
            if at >= shared and not math.isnan(lp):
                bits, tokens, n_bytes = bits - lp / math.log(2), tokens + 1, n_bytes + len(b)
            at += len(b)
        out.append((bits / n_bytes, tokens, n_bytes))
    return out


# The element's place, the notebook's scroll and the bottom of its visible area (the scroller's box).
BOX_JS = """e => {
  const r = e.getBoundingClientRect();
  const scroller = e.closest('.jp-NotebookPanel').querySelector('.jp-WindowedPanel-outer');
  return {y: r.top, bottom: r.bottom, scroll: scroller.scrollTop, area_bottom: scroller.getBoundingClientRect().bottom};
}"""


def test_compare_opens_in_sight_and_shows_every_new_branch(page, lab_server):
    write_notebook(lab_server, "explore-compare.ipynb", [APP_CELL, DUMP_CELL, AGAIN_CELL])
    open_notebook(page, lab_server, "explore-compare.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-explore", HAND_MADE_TIMEOUT)
    page.locator(f"{APP} button", has_text="Generate").first.click()
    wait_status(page, "Generated")
    branch_with_b(page, 1)

    # The person scrolls down to the tree (its head at the top of the notebook), then presses Compare.
    button = page.locator(f"{APP} .lv-tree-panel button", has_text="Compare").first
    button.evaluate("e => e.scrollIntoView({block: 'start'})")
    next_frames(page, 2)
    before = button.evaluate(BOX_JS)
    button.click()
    compared = page.locator(COMPARE)
    compared.locator(".lvc-header").wait_for(timeout=60_000)
    next_frames(page, 3)
    after = button.evaluate(BOX_JS)
    assert all(abs(after[k] - before[k]) < 2 for k in ("y", "scroll")), (before, after)  # nothing moved
    # in sight: it starts right under the button, with most of the screen below it to show it
    top = compared.evaluate("e => e.getBoundingClientRect().top")
    assert after["bottom"] <= top < after["bottom"] + 80 and top < after["area_bottom"] - 200, (top, after)
    assert compared.locator(".lvc-row-label").all_text_contents() == ["#0", "#1"]

    for number in range(2, 6):  # branches #2-#5 while the comparison is open: it follows
        branch_with_b(page, number)
        page.wait_for_function(
            "([sel, n]) => document.querySelectorAll(sel + ' .lvc-row').length === n",
            arg=[COMPARE, number + 1], timeout=60_000)
    assert compared.locator(".lvc-row-label").all_text_contents() == [f"#{i}" for i in range(6)]
    assert "Comparing #0–#5 (every branch)" in page.locator(f"{APP} .lv-explore-compare").text_content()

    python_prints(page, lab_server, 1, "DUMPED 6")
    own = own_bits_per_byte(json.loads((lab_server.root / "tree.json").read_text()))
    for r, (bpb, tokens, n_bytes) in enumerate(own):
        row = compared.locator(f".lvc-header-row[data-row='{r}']")
        assert row.locator(".lvc-bpb.lvc-own").text_content() == f"{bpb:.4f}", r
        assert row.locator(".lvc-over.lvc-own").text_content() == f"{tokens} tokens, {n_bytes} bytes", r
    hover_tail(page, compared, 5)
    said = compared.locator(".lvc-panel .lvc-col[data-row='5'] .lvc-own-sum").text_content()
    assert said.startswith(f"{own[5][0]:.4f} bits/byte") and f"{own[5][1]} tokens, {own[5][2]} bytes" in said
    no = page.get_by_role("button", name="No", exact=True)  # JupyterLab's "news?" toast
    if no.count():
        no.first.click()
    next_frames(page)
    page.screenshot(path=str(ARTIFACTS / "explore-compare.png"))
    dark(page, compared)
    projector(page, lab_server)
    assert not page.page_errors, page.page_errors


TAIL_SHOWN_JS = """([sel, row]) => {
  const p = document.querySelector(sel + ' .lvc-panel');
  return !!p && p.dataset.span === 'tail' && p.dataset.row === String(row);
}"""
WHERE_JS = """([sel, x, y]) => {
  const root = document.querySelector(sel), at = document.elementFromPoint(x, y);
  return {panel: {...root.querySelector('.lvc-panel').dataset}, same_view: !!root.lvMarked,
          under: at && `${at.className}: ${(at.textContent || '').slice(0, 20)}`};
}"""


def hover_tail(page, compared, row: int, tries: int = 3) -> None:
    """Hover the first token of `row`'s own continuation until the panel shows it, as a person moves
    the pointer onto it again. In two of three whole runs of stop 36/37 (two processes) one hover was
    not shown within 10 s, which never happened with this file alone, even under load; so a miss is
    reported as a warning (in CI's log) with what the panel showed, what was under the pointer and
    whether the view had been rebuilt meanwhile, and the test fails only if every hover is missed."""
    token = compared.locator(f".lvc-tail[data-row='{row}'] .lvc-tok").first
    misses = []
    for _ in range(tries):
        compared.evaluate("e => { e.lvMarked = true; }")
        page.mouse.move(0, 0)  # (off the view first: the next hover is a new mouseover)
        token.hover()
        box = token.bounding_box()
        try:
            page.wait_for_function(TAIL_SHOWN_JS, arg=[COMPARE, row], timeout=10_000)
        except PlaywrightTimeout:
            where = page.evaluate(WHERE_JS, [COMPARE, box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
            misses.append(f"the token was at {box}, is at {token.bounding_box()}; {where}")
            continue
        if misses:
            warnings.warn(f"hovering row {row}'s continuation was missed {len(misses)} time(s): {misses}", stacklevel=2)
        return
    pytest.fail(f"the panel never showed row {row}'s continuation in {tries} hovers: {misses}")


def dark(page, compared) -> None:
    light = compared.evaluate("el => getComputedStyle(el).color")
    try:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        page.wait_for_function("([el, light]) => getComputedStyle(el).color !== light",
                               arg=[compared.element_handle(), light], timeout=30_000)
        save_screenshot(page, "explore-compare-dark.png", COMPARE)
    finally:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)


def projector(page, lab_server) -> None:
    """A 1280x720 screen at 150 % zoom: 853x480 CSS pixels at device scale 1.5, the same app again."""
    context = page.context.browser.new_context(viewport={"width": 853, "height": 480}, device_scale_factor=1.5)
    small = context.new_page()
    try:
        open_notebook(small, lab_server, "explore-compare.ipynb")
        run_cell(small, 2)
        wait_for_output(small, lab_server, 2, ".lv-explore-compare .lvc-root .lvc-header", HAND_MADE_TIMEOUT)
        compared = cell(small, 2).locator(".lv-explore-compare .lvc-root")
        no = small.get_by_role("button", name="No", exact=True)
        if no.count():
            no.first.click()
        assert compared.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "nothing overflows sideways"
        compared.locator(".lvc-header").scroll_into_view_if_needed()
        small.screenshot(path=str(ARTIFACTS / "explore-compare-150.png"))
    finally:
        context.close()
