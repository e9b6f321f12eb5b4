"""The answers notebook's views on the class's one screen (issue 49, items 9 and 10): on a projector
(853x480 CSS px, dark, the file browser hidden) and at 1400x900 (light).

- The choices view cuts no text: every option, percent and mark ("gold", "predicted", "flag") on one
  line inside the view; the review above them whole, wrapped between words, never inside one. Its
  percents are the softmax of each option's logprob sum, written here from the traces' own logprobs.
- The reliability diagram is as wide as its output area, no wider: its last bar and the "1" tick on
  screen. Its bars' heights are each bin's accuracy, binned here from the same probabilities.
- The slide SVG (`to_svg(pinned=...)`) keeps its % column: every text inside the picture, the picture
  inside the output area; the percents are exp of the trace's alternatives' logprobs.
- "why?" is not drawn where no runner can answer it (the choices view's tokens, a view of a trace with
  no runner); where a runner is, at the first token it is drawn plainly unavailable, the reason on hover.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET

import pytest

from browser.lab import (
    MODEL_TIMEOUT,
    cell,
    next_frames,
    projector_page,
    run_cell,
    screen_shot,
    set_theme,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)
from browser.one_screen import WORDS_JS

pytestmark = pytest.mark.browser

LARGE = {"width": 1400, "height": 900}
REVIEWS = [
    ("Boring, predictable and far too long.", 1),
    ("A warm, funny film the whole family will enjoy, and a score that the children were humming for "
     "weeks after we had seen it twice at the cinema.", 0),
    ("The dialogue was wooden and the jokes fell flat.", 1),
    ("Clever, tense and surprisingly touching.", 0),
    ("It is not perfect, but I enjoyed every minute.", 0),
    ("Not funny, not scary, not worth it.", 1),
]
OPTIONS = [" positive", " negative"]
BINS = 10

CHOICES_CELL = f"""\
import json, pathlib
import logprob_viz as lv
from IPython.display import SVG
runner = lv.load()
REVIEWS = {REVIEWS!r}
ch = runner.choose(["Review: " + r + "\\nSentiment:" for r, _ in REVIEWS], {OPTIONS!r},
                   gold=[g for _, g in REVIEWS], progress=False)
pathlib.Path("answers.json").write_text(json.dumps([[t.to_dict() for t in row] for row in ch.traces]))
v = ch.view(row=0, option=1)
v"""
DIAGRAM_CELL = f"d = ch.calibration(bins={BINS}).plot(widget=True)\nd"
SVG_CELL = """\
t = ch.traces[0][1]
svg = t.to_svg(pinned=t.prompt_len, width=640)  # (as lesson 8: a projector's area is 673 px)
pathlib.Path("slide.svg").write_text(svg)
SVG(svg)"""
WHY_CELL = "lv.LogprobView(t, runner=runner)"

OUT = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell:nth-child({}) .jp-OutputArea-output"
CHOICES = OUT.format(1) + " .lvch-root"

# Each element's box against the view's: [text, wrapped lines, overflows itself, right past the view]
CUT_JS = """([root, selector]) => {
  const r = root.getBoundingClientRect();
  return [...root.querySelectorAll(selector)].filter((e) => e.checkVisibility()).map((e) => {
    const range = document.createRange();
    range.selectNodeContents(e);
    const tops = new Set([...range.getClientRects()].filter((q) => q.width > 0.5).map((q) => Math.round(q.top)));
    const b = e.getBoundingClientRect();
    return [e.textContent, tops.size, e.scrollWidth > e.clientWidth + 1, b.right > r.right + 1 || b.left < r.left - 1,
            getComputedStyle(e).textOverflow];
  });
}"""


def expected(traces):
    """Per prompt: the options' probabilities (softmax of each trace's logprob sum after its prompt)."""
    out = []
    for row in traces:
        sums = [math.fsum(float(x) for x in t["logprobs"][t["prompt_len"]:]) for t in row]
        top = max(sums)
        e = [math.exp(s - top) for s in sums]
        out.append([x / math.fsum(e) for x in e])
    return out


def percent(p: float) -> str:
    """formatPercent of js/toolkit/format.js."""
    pct = p * 100
    return "0%" if pct == 0 else "<0.1%" if pct < 0.05 else f"{pct:.1f}%"


def choices_whole(page, where: str, probs) -> None:
    """Options, percents and marks on one line inside the view; the reviews whole, wrapped between words."""
    root = page.locator(CHOICES).first
    handle = root.element_handle()
    parts = page.evaluate(CUT_JS, [handle, ".lvch-option, .lvch-pct, .lvch-mark"])
    bad = [p for p in parts if p[1] > 1 or p[2] or p[3] or p[4] == "ellipsis"]
    assert parts and not bad, f"{where}: cut or wrapped [text, lines, overflows, outside, text-overflow]: {bad}"
    marks = [p[0] for p in parts if p[0] in ("gold", "predicted", "flag")]
    assert "gold" in marks, (where, marks)
    prompts = root.locator(".lvch-prompt")
    shown = prompts.all_inner_texts()
    assert shown == [f"Review: {r} Sentiment:" for r, _ in REVIEWS], (where, shown)
    broken = [prompts.nth(k).evaluate(WORDS_JS) for k in range(prompts.count())]
    assert not any(broken), f"{where}: words broken across lines: {broken}"
    lines = page.evaluate(CUT_JS, [handle, ".lvch-prompt"])
    assert max(p[1] for p in lines) > 1 or where.startswith("large"), lines  # (the long review does wrap)
    for r, row in enumerate(probs):
        for j, p in enumerate(row):
            bar = root.locator(f".lvch-bar[data-row='{r}'][data-option='{j}'] .lvch-pct")
            assert abs(float(bar.inner_text().rstrip("%")) - round(100 * p, 1)) <= 0.05 + 1e-9, (r, j, p)


DIAGRAM_JS = """out => {
  const plot = out.querySelector('.js-plotly-plot');
  const svg = plot.querySelector('svg.main-svg');
  const area = out.getBoundingClientRect();
  const box = svg.getBoundingClientRect();
  const ticks = [...plot.querySelectorAll('.xtick text')].map((t) => [t.textContent, t.getBoundingClientRect().right]);
  const bars = [...plot.querySelectorAll('.barlayer .trace:first-child .point path')]
    .map((p) => { const r = p.getBoundingClientRect(); return [r.left, r.right, r.height]; });
  return {area: [area.left, area.right], svg: [box.left, box.right], ticks, bars,
          window: window.innerWidth, yaxis: plot._fullLayout.yaxis._length, yrange: plot._fullLayout.yaxis.range};
}"""


def diagram_fits(page, where: str, probs) -> None:
    """The diagram inside its output area; the "1" tick and the last bin's bar inside it; bar heights = accuracy."""
    out = page.locator(OUT.format(2)).first
    # (the kernel sets the figure's width to its area's, measured in the page: a round trip)
    out.evaluate("""out => new Promise((done, fail) => {
      const t0 = performance.now();
      const look = () => {
        const svg = out.querySelector('.js-plotly-plot svg.main-svg');
        if (svg && Math.abs(svg.getBoundingClientRect().width - out.getBoundingClientRect().width) <= 1) return done();
        if (performance.now() - t0 > 30000) return fail(new Error('the diagram never took the width of its area'));
        requestAnimationFrame(look);
      };
      look();
    })""")
    got = out.evaluate(DIAGRAM_JS)
    left, right = got["area"]
    assert got["svg"][0] >= left - 1 and got["svg"][1] <= right + 1, f"{where}: diagram wider than its area: {got}"
    assert right <= got["window"], got
    one = [r for t, r in got["ticks"] if t == "1"]
    assert one and one[0] <= right + 1, f"{where}: the '1' tick is cut: {got}"
    confidence = [max(row) for row in probs]
    correct = [row.index(max(row)) == g for row, (_, g) in zip(probs, REVIEWS, strict=True)]
    bins = [min(int(c * BINS), BINS - 1) for c in confidence]
    assert len(got["bars"]) == BINS
    lo, hi = got["yrange"]
    for b, (bar_left, bar_right, height) in enumerate(got["bars"]):
        members = [k for k, x in enumerate(bins) if x == b]
        assert bar_right <= right + 1 and bar_left >= left - 1, (where, b, got)
        accuracy = sum(correct[k] for k in members) / len(members) if members else 0.0
        assert abs(height - accuracy / (hi - lo) * got["yaxis"]) < 1.5, (where, b, height, accuracy, got)


def svg_fits(page, lab_server, where: str) -> None:
    """Every text of the slide SVG inside its width (monospace: 0.6 em a cell); the picture inside its area;
    the chart's percents are exp of the pinned token's alternatives' logprobs."""
    svg = (lab_server.root / "slide.svg").read_text()
    tree = ET.fromstring(svg)
    width = float(tree.get("width"))
    size = float(tree.get("font-size"))
    ns = "{http://www.w3.org/2000/svg}"
    chart = next(g for g in tree.iter(ns + "g") if g.get("class") == "lv-chart")
    small = float(chart.get("font-size"))
    for text in chart.iter(ns + "text"):
        right = float(text.get("x")) + 0.6 * small * len(text.text or "")
        assert right <= width, f"{text.text!r} ends at {right:.0f} px in a {width:.0f} px picture"
    assert size > 0
    notes = [t.text for t in chart.iter(ns + "text") if re.fullmatch(r"[<\d.]+%.*", t.text or "")]
    trace = json.loads((lab_server.root / "answers.json").read_text())[0][1]
    at = trace["prompt_len"]
    wanted = [percent(math.exp(lp)) for lp in trace["top_logprobs"][at] if lp is not None and lp > -1e30]
    assert [n.split(" ")[0] for n in notes][: len(wanted)] == wanted, (notes, wanted)
    shown = page.locator(OUT.format(3)).first.evaluate(
        """out => { const a = out.getBoundingClientRect(); const e = out.querySelector('img, svg');
                   const s = e.getBoundingClientRect(); return [a.left, a.right, s.left, s.right, e.tagName]; }""")
    assert shown[2] >= shown[0] - 1 and shown[3] <= shown[1] + 1, f"{where}: the SVG is wider than its area: {shown}"


def why_unavailable(page, where: str) -> None:
    """The choices view's tokens (no runner): no "why?" at all. The runner's view at token 0: drawn
    unavailable, the reason on hover; at token 1: a button that asks."""
    below = page.locator(OUT.format(1)).locator(".lv-root").first
    below.locator(".lv-chart").first.wait_for(timeout=30_000)
    assert below.locator(".lv-why-ask, .lv-why-row").count() == 0, f"{where}: why? drawn with no runner"
    assert "why?" not in below.locator(".lv-panel").inner_text(), where
    view = page.locator(OUT.format(4)).locator(".lv-root").first
    view.locator(".lv-token[data-index='0']").click()
    ask = view.locator(".lv-chart[data-index='0'] .lv-why-ask")
    ask.wait_for(timeout=30_000)
    assert ask.get_attribute("aria-disabled") == "true", where
    assert ask.get_attribute("title").startswith("unavailable: the first token"), ask.get_attribute("title")
    style = ask.evaluate("e => [getComputedStyle(e).cursor, getComputedStyle(e).textDecorationLine]")
    assert style == ["not-allowed", "line-through"], (where, style)
    view.locator(".lv-token[data-index='1']").click()  # a token with tokens before it: a button that asks
    able = view.locator(".lv-chart[data-index='1'] .lv-why-ask")
    able.wait_for(timeout=30_000)
    assert able.get_attribute("aria-disabled") is None and "lv-why-disabled" not in able.get_attribute("class")


def look(page, lab_server, where: str, probs) -> None:
    page.locator(CHOICES).first.scroll_into_view_if_needed()
    next_frames(page, 3)
    screen_shot(page, f"answers-{where}-choices.png")
    choices_whole(page, where, probs)
    why_unavailable(page, where)
    page.locator(OUT.format(2)).first.scroll_into_view_if_needed()
    next_frames(page, 3)
    screen_shot(page, f"answers-{where}-diagram.png")
    diagram_fits(page, where, probs)
    page.locator(OUT.format(3)).first.scroll_into_view_if_needed()
    next_frames(page, 3)
    screen_shot(page, f"answers-{where}-svg.png")
    svg_fits(page, lab_server, where)


def test_answers_fit_the_class_screen(browser, lab_server):
    (lab_server.root / "answers.json").unlink(missing_ok=True)
    write_notebook(lab_server, "answers_screen.ipynb", [CHOICES_CELL, DIAGRAM_CELL, SVG_CELL, WHY_CELL])
    with projector_page(browser, lab_server, "answers_screen.ipynb") as page:
        page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        set_theme(page, dark=True)
        run_cell(page, 0)
        wait_for_output(page, lab_server, 0, ".lvch-root .lvch-bar", MODEL_TIMEOUT)
        for k in (1, 2, 3):
            run_cell(page, k)
            wait_cell_done(page, k, timeout=MODEL_TIMEOUT)
        wait_for_output(page, lab_server, 1, ".js-plotly-plot .barlayer", MODEL_TIMEOUT)
        wait_for_output(page, lab_server, 3, ".lv-root .lv-token", MODEL_TIMEOUT)
        probs = expected(json.loads((lab_server.root / "answers.json").read_text()))
        assert cell(page, 0).locator(".lvch-bar").count() == len(REVIEWS) * len(OPTIONS)
        look(page, lab_server, "projector-dark", probs)
        set_theme(page, dark=False)
        page.set_viewport_size(LARGE)
        next_frames(page, 3)
        look(page, lab_server, "large-light", probs)
