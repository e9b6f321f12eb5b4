"""The LogprobView in front of a class (issue 18, items 8 and 10), in a real JupyterLab + chromium.

What a teacher does: opens a view, picks "projector size" in its legend, switches JupyterLab to its
dark theme with the view on screen, pins a token the model did not expect, shows a long paragraph,
exports it. Each claim is measured in the page: sizes against the normal size, the chart's box
against the hovered token's and the screen's, the contrast of the least likely token's colour
(WCAG, computed here) against the background, the strip's bars against the trace's surprisals.
Screenshots (tests/artifacts/): normal, projector (1280x720 at 150 %: 853x480 CSS px), dark.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from browser.cells import FEATURES_CELL
from browser.lab import (
    HAND_MADE_TIMEOUT,
    MODEL_TIMEOUT,
    PROJECTOR,
    cell,
    dark_theme,
    next_frames,
    open_notebook,
    projector_page,
    python_prints,
    run_cell,
    save_screenshot,
    screen_shot,
    wait_cell_done,
    wait_for_output,
    wait_widgets_restored,
    write_notebook,
)

pytestmark = pytest.mark.browser

ROBOT_CELL = """\
import json, pathlib
import logprob_viz as lv
t = lv.generate("A robot may not injure a human being", max_new_tokens=48, top_logprobs=5)
pathlib.Path("look.json").write_text(json.dumps(t.to_dict()))
v = lv.LogprobView(t)
v"""
SIZE_CELL = "print('size is', v.size)"
ROOT = ".jp-NotebookPanel:visible .lv-root"
SCALE = 1.25  # the projector size (js/toolkit/theme.css)

# Every size a class has to read, by what holds it: (selector, CSS property).
SIZES = {
    "token": (".lv-token", "fontSize"),
    "header": (".lv-header", "fontSize"),
    "legend ticks": (".lv-legend-ticks span", "fontSize"),
    "prompt pill": (".lv-part-label", "fontSize"),
    "legend bar": (".lv-legend-bar", "height"),
    "strip": (".lv-strip", "height"),
    "chart placeholder": (".lv-panel .lv-chart-empty", "fontSize"),
}


def sizes(root) -> dict[str, float]:
    return {name: root.locator(sel).first.evaluate(f"el => parseFloat(getComputedStyle(el).{prop})")
            for name, (sel, prop) in SIZES.items()}


def rgb_of(css: str) -> tuple[float, float, float]:
    parts = css[css.index("(") + 1: css.index(")")].replace("/", " ").replace(",", " ").split()
    return tuple(float(x) for x in parts[:3])


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two CSS rgb() colours (written here, not the view's code)."""
    def lum(css):
        lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb_of(css)]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((lum(a), lum(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def background(root, i: int) -> str:
    return root.locator(f".lv-token[data-index='{i}']").evaluate("el => getComputedStyle(el).backgroundColor")


def strip_heights(root) -> list[float]:
    """The painted height (CSS px) of every pixel column of the strip's canvas."""
    return root.locator(".lv-strip-canvas").evaluate("""c => {
        const ctx = c.getContext('2d'), {width, height} = c, data = ctx.getImageData(0, 0, width, height).data;
        const dpr = width / c.clientWidth, out = [];
        for (let x = 0; x < width; x += Math.max(1, Math.round(dpr))) {
          let painted = 0;
          for (let y = 0; y < height; y++) if (data[(y * width + x) * 4 + 3] > 0) painted++;
          out.push(painted / dpr);
        }
        return out;
    }""")


def check_strip_follows_the_trace(root, logprobs: list) -> None:
    """Each token's bar is as high as its surprisal says (the strip's rule: max(2, min(1, s/10) * H))."""
    heights = strip_heights(root)
    height = root.locator(".lv-strip").evaluate("el => el.clientHeight")
    n, width = len(logprobs), len(heights)
    assert n < width, "one bin per token here"
    for i, lp in enumerate(logprobs):
        if lp is None:
            continue
        want = max(2.0, min(1.0, -lp / 10) * height)
        got = heights[int((i + 0.5) * width / n)]
        assert abs(got - want) <= 1.5, f"token {i}: bar {got:.1f} px, its surprisal {-lp:.2f} says {want:.1f}"
    assert len({round(h) for h in heights}) > 2, "the strip is one solid bar"


def strip_color_at(root, i: int, n: int) -> str:
    """The colour of token i's bar in the strip (its bottom row of pixels), as CSS rgb()."""
    return root.locator(".lv-strip-canvas").evaluate("""(c, [i, n]) => {
        const x = Math.floor((i + 0.5) * c.width / n), d = c.getContext('2d').getImageData(x, c.height - 1, 1, 1).data;
        return `rgb(${d[0]}, ${d[1]}, ${d[2]})`;
    }""", [i, n])


def known_logprobs(trace: dict) -> list:
    """The chosen tokens' logprobs, None where unknown (to_dict writes NaN as "nan")."""
    return [None if math.isnan(float(x)) else float(x) for x in trace["logprobs"]]


def test_dark_theme_live_and_the_projector_size_a_class_can_read(page, lab_server, browser):
    write_notebook(lab_server, "look.ipynb", [ROBOT_CELL, SIZE_CELL])
    open_notebook(page, lab_server, "look.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-panel.lv-sized", MODEL_TIMEOUT)
    trace = json.loads((lab_server.root / "look.json").read_text())
    root = page.locator(ROOT).first
    logprobs = known_logprobs(trace)
    least = min((i for i, lp in enumerate(logprobs) if lp is not None), key=lambda i: logprobs[i])
    next_frames(page)
    save_screenshot(page, "look-normal.png")
    light_bg = root.evaluate("el => getComputedStyle(el).backgroundColor")
    light_least = background(root, least)
    assert contrast(light_least, light_bg) >= 3, "the least likely token stands out on the light background"
    check_strip_follows_the_trace(root, logprobs)

    # JupyterLab's dark theme, switched live with the view on screen.
    with dark_theme(page, root):
        page.wait_for_function("([el, was]) => getComputedStyle(el).backgroundColor !== was",
                               arg=[root.locator(f".lv-token[data-index='{least}']").element_handle(), light_least],
                               timeout=10_000)
        next_frames(page)
        dark_bg = root.evaluate("el => getComputedStyle(el).backgroundColor")
        dark_least = background(root, least)
        ratio = contrast(dark_least, dark_bg)
        assert ratio >= 3, f"the least likely token ({dark_least}) melts into the background {dark_bg}: {ratio:.2f}"
        likeliest = max((i for i, lp in enumerate(logprobs) if lp is not None), key=lambda i: logprobs[i])
        assert contrast(dark_least, dark_bg) > contrast(background(root, likeliest), dark_bg), \
            "on the dark background too, the unlikely tokens are the ones that stand out"
        check_strip_follows_the_trace(root, logprobs)  # not a solid bar after the switch
        strip_bg = root.locator(".lv-strip").evaluate("el => getComputedStyle(el).backgroundColor")
        bar = strip_color_at(root, least, len(logprobs))
        assert contrast(bar, strip_bg) >= 3, f"the most surprising token's bar {bar} on the strip's {strip_bg}"
        save_screenshot(page, "look-dark.png")
    page.wait_for_function("([el, was]) => getComputedStyle(el).backgroundColor === was",
                           arg=[root.locator(f".lv-token[data-index='{least}']").element_handle(), light_least],
                           timeout=10_000)
    check_strip_follows_the_trace(root, logprobs)

    # The projector: a 1280x720 screen at 150 %; the teacher picks "projector size" in the legend.
    with projector_page(browser, lab_server, "look.ipynb") as small:
        # A teacher presenting hides JupyterLab's file browser (View > Show Left Sidebar, Ctrl+B): at
        # 853 CSS px it takes 40 % of the width, where no view could show text and chart side by side.
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(small, 0)  # the same kernel: the model is loaded
        wait_for_output(small, lab_server, 0, ".lv-root .lv-panel.lv-sized", MODEL_TIMEOUT)
        view = small.locator(ROOT).first
        view.scroll_into_view_if_needed()
        normal = sizes(view)
        screen_shot(small, "look-projector-normal-size.png")
        view.locator("select.lv-size").select_option("projector")
        small.wait_for_function("el => el.classList.contains('lv-size-projector')", arg=view.element_handle())
        next_frames(small)
        big = sizes(view)
        for name in SIZES:
            assert big[name] == pytest.approx(normal[name] * SCALE, rel=0.04), f"{name}: {normal[name]} -> {big[name]}"
        header, fg = (view.locator(".lv-header").evaluate("el => getComputedStyle(el).color"),
                      view.evaluate("el => getComputedStyle(el).color"))
        assert header == fg, "the header at full contrast, not 54 % opaque"
        python_prints(small, lab_server, 1, "size is projector")
        # as a teacher scrolls once to the view grown to projector size: its top at the notebook's top
        view.evaluate("e => e.scrollIntoView({block: 'start'})")
        next_frames(small)
        check_chart_beside_hovered_token(small, view, trace)
        screen_shot(small, "look-projector.png")
    assert not page.page_errors, page.page_errors


def check_chart_beside_hovered_token(small, view, trace) -> None:
    """Hover a completion token on screen: its chart is beside the text, on screen, level with it."""
    view.locator(".lv-text").scroll_into_view_if_needed()
    i = trace["prompt_len"] + 12
    token = view.locator(f".lv-token[data-index='{i}']")
    token.hover()
    view.locator(f".lv-chart[data-index='{i}']").wait_for(timeout=10_000)
    next_frames(small)
    box = {name: view.locator(sel).first.bounding_box() for name, sel in
           (("text", ".lv-text"), ("panel", ".lv-panel"), ("token", f".lv-token[data-index='{i}']"))}
    text, panel, tok = box["text"], box["panel"], box["token"]
    assert panel["x"] >= text["x"] + text["width"] - 1, f"the chart is not beside the text: {box}"
    assert panel["x"] + panel["width"] <= PROJECTOR["width"], f"the chart runs off the screen's right: {panel}"
    assert panel["y"] < tok["y"] + tok["height"] and panel["y"] + panel["height"] > tok["y"], \
        f"the chart is not level with the hovered token: {box}"
    title = view.locator(".lv-panel .lv-chart-title").bounding_box()
    assert 0 <= title["y"] and title["y"] + title["height"] <= PROJECTOR["height"], f"the title is off screen: {title}"
    assert view.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "nothing overflows sideways"


K0_CELL = """\
import numpy as np
t0 = lv.Trace(tokens=["The", " cat", " sat", " down"], logprobs=[np.nan, -1.25, -4.5, -0.5], ranks=[0, 2, 40, 1],
              prompt_len=1)
v0 = lv.LogprobView(t0)
v0"""


def check_chart_fits(view, i: int) -> None:
    view.locator(f".lv-panel .lv-chart[data-index='{i}']").wait_for(timeout=10_000)
    fits = view.locator(".lv-panel").evaluate("""el => {
        const panel = el.getBoundingClientRect();
        const last = el.querySelector('.lv-chart').lastElementChild.getBoundingClientRect();
        return {scroll: el.scrollHeight, client: el.clientHeight, last: last.bottom, panel: panel.bottom};
    }""")
    assert fits["scroll"] <= fits["client"] + 1 and fits["last"] <= fits["panel"], f"token {i}'s chart is cut: {fits}"


def test_a_pinned_token_outside_the_top_k_shows_its_whole_chart_and_top_logprobs_0_says_so(page, lab_server):
    write_notebook(lab_server, "outside.ipynb", [FEATURES_CELL, "v.size = 'projector'", K0_CELL])
    open_notebook(page, lab_server, "outside.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-panel.lv-sized", HAND_MADE_TIMEOUT)
    trace = json.loads((lab_server.root / "features.json").read_text())
    view = cell(page, 0).locator(".lv-root")
    outside = [i for i, r in enumerate(trace["ranks"]) if r > 1]
    assert outside, "the hand-made trace has tokens outside its top 3"
    for size in ("normal", "projector"):
        if size == "projector":
            run_cell(page, 1)
            wait_cell_done(page, 1)
            page.wait_for_function("el => el.classList.contains('lv-size-projector')", arg=view.element_handle())
            next_frames(page, 3)
        for i in outside[:4]:
            view.locator(f".lv-token[data-index='{i}']").click()  # pinned: the pin note is the chart's footer
            check_chart_fits(view, i)
        view.locator(".lv-panel").scroll_into_view_if_needed()
        save_screenshot(page, f"outside-top-k-{size}.png")
        view.locator(f".lv-token[data-index='{outside[3]}']").click()  # (released)

    run_cell(page, 2)
    wait_for_output(page, lab_server, 2, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
    k0 = cell(page, 2).locator(".lv-root")
    k0.locator(".lv-token[data-index='2']").hover()
    chart = k0.locator(".lv-chart[data-index='2']")
    chart.wait_for(timeout=10_000)
    said = chart.inner_text()
    assert "top 0" not in said.lower(), said
    assert "rank 40" in said and "top_logprobs=0" in said, said
    save_screenshot(page, "top-logprobs-0.png", ".jp-NotebookPanel:visible .jp-Cell:nth-child(3) .lv-root")
    assert not page.page_errors, page.page_errors


PARAGRAPH_CELL = """\
import numpy as np
import logprob_viz as lv
words = [(" word%d" % i) if i % 40 != 39 else "." for i in range(2600)]   # one paragraph, no newline
lp = np.log(np.linspace(0.05, 0.95, len(words))).astype(np.float32)
long = lv.Trace(tokens=words, logprobs=lp, ranks=np.ones(len(words), int))
print(long.to_html("paragraph.html"))
long"""

LINE_BREAKS_JS = """root => {
    // Every line break between two tokens that is not the text wrapping (the next token would have fit).
    const text = root.querySelector('.lv-text'), right = text.getBoundingClientRect().right - 16;
    const spans = [...text.querySelectorAll('.lv-token')], breaks = [];
    for (let i = 1; i < spans.length; i++) {
      const a = spans[i - 1].getClientRects(), b = spans[i].getClientRects()[0];
      const last = a[a.length - 1];
      if (b.top > last.bottom - 2 && last.right + b.width < right) breaks.push([i, spans[i - 1].textContent]);
    }
    return breaks;
}"""


def test_a_long_paragraph_has_no_line_break_the_text_does_not_have(page, lab_server):
    write_notebook(lab_server, "paragraph.ipynb", [PARAGRAPH_CELL])
    open_notebook(page, lab_server, "paragraph.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
    view = page.locator(ROOT).first
    page.wait_for_function("el => el.querySelectorAll('.lv-token').length === 2600 "
                           "&& !el.querySelector('.lv-header').classList.contains('lv-loading')",
                           arg=view.element_handle(), timeout=60_000)
    for blk in view.locator(".lv-block").element_handles():
        blk.evaluate("el => el.classList.remove('lv-offscreen')")  # (measured: laid out now)
    breaks = view.evaluate(LINE_BREAKS_JS)
    # The old view broke the line every 300 tokens, mid-sentence; a block may end only at a sentence's end.
    assert all(before == "." for _, before in breaks), f"a line break mid-sentence: {breaks}"
    assert all(i >= 1500 for i, _ in breaks), f"line breaks in the first 1,500 tokens: {breaks}"
    assert "paragraph.html" in cell(page, 0).locator(".jp-OutputArea").inner_text()
    save_screenshot(page, "paragraph.png")

    # The exported page: the same text, the same rule.
    exported = page.context.new_page()
    try:
        exported.goto(f"{lab_server.url}/files/paragraph.html")
        exported.locator(".lv-root .lv-token").nth(2599).wait_for(state="attached", timeout=60_000)
        for blk in exported.locator(".lv-block").element_handles():
            blk.evaluate("el => el.classList.remove('lv-offscreen')")
        breaks = exported.locator(".lv-root").first.evaluate(LINE_BREAKS_JS)
        assert all(before == "." for _, before in breaks), f"the export breaks mid-sentence: {breaks}"
    finally:
        exported.close()
    assert not page.page_errors, page.page_errors


NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("0*.ipynb"))


def test_lessons_do_not_open_modified(page, lab_server):
    assert LESSONS, "the lessons are in notebooks/"
    dirty = {}
    for name in LESSONS:
        shutil.copy(NOTEBOOKS / name, lab_server.root / name)
        open_notebook(page, lab_server, name)  # (waits for the kernel: its info is what changes metadata)
        wait_widgets_restored(page)
        next_frames(page, 3)
        dirty[name] = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")
    assert not any(dirty.values()), f"opened as modified: {[n for n, d in dirty.items() if d]}"


def test_lesson_2_shows_temperature_as_a_picture(page, lab_server):
    """Its temperature cell: three views, the drawn token pinned, the chart's model and sampled-from bars."""
    name = "02_sampling.ipynb"
    shutil.copy(NOTEBOOKS / name, lab_server.root / name)
    cells = json.loads((NOTEBOOKS / name).read_text())["cells"]
    setup, temperature = (i for i, c in enumerate(cells) if c["cell_type"] == "code" and (
        "lv.load()" in "".join(c["source"]) or "for temperature in" in "".join(c["source"])))
    open_notebook(page, lab_server, name)
    run_cell(page, setup)
    wait_cell_done(page, setup, timeout=MODEL_TIMEOUT)
    run_cell(page, temperature)
    wait_cell_done(page, temperature, timeout=MODEL_TIMEOUT)
    views = cell(page, temperature).locator(".lv-root")
    views.nth(2).locator(".lv-panel .lv-chart").wait_for(timeout=60_000)
    assert views.count() == 3
    printed = [line for line in cell(page, temperature).locator(".jp-OutputArea").inner_text().splitlines()
               if line.startswith("T=")]
    for j, temp in enumerate((0.5, 1.0, 1.5)):
        chart = views.nth(j).locator(".lv-panel .lv-chart")
        heads = chart.locator(".lv-alt-head span").all_inner_texts()
        assert ("sampled from" in [h.strip().lower() for h in heads]) == (temp != 1.0), (temp, heads)
        assert printed[j].startswith(f"T={temp}:")
        # The chart's first bar is the printed favourite's model probability.
        favourite = printed[j].split(": ", 1)[1].split("->")[0]  # "' dog' 23%" (the numbers rounded to %)
        first = chart.locator(".lv-alt-row").first
        assert first.locator(".lv-alt-token").inner_text().replace("\u00b7", " ") in favourite
    cell(page, temperature).scroll_into_view_if_needed()
    save_screenshot(page, "lesson-02-temperature.png", f".jp-NotebookPanel:visible .jp-Cell >> nth={temperature}")
    assert not page.page_errors, page.page_errors
