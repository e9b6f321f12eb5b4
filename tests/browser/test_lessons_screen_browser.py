"""The lessons on the class's one screen (issue 49, item 11): on a projector (853x480 CSS px, dark, the
file browser hidden) and at 1400x900 (light).

- A view scrolled through keeps its chart panel in sight: its first line below the notebook's toolbar
  (JupyterLab's output area is a scroll container, so CSS sticky alone left the panel at the view's
  top, under the toolbar); the chart's p is exp of the token's logprob.
- Lesson 1 says over which tokens each perplexity is: the printed line gives the completion's and the
  header's (prompt included) with their token spans, the header's figure and span are the printed
  ones, and both equal an independent float64 computation from the model's logits.
- Lesson 7's last view (the lens's trace) calls the answer a completion as the first view does: the
  same split, the prompt's tokens counted here with the tokenizer.
- Lesson 8's chart title stays inside the chart and the screen, and its class score is the mean of
  log2(guesses) over the tokens the lesson's printed outcomes found; its slide SVG fits its output
  area with every text inside the picture.
"""

from __future__ import annotations

import json
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from browser.lab import (
    HAND_MADE_TIMEOUT,
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

pytestmark = pytest.mark.browser

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
LARGE = {"width": 1400, "height": 900}
SIZES = [("projector-dark", None, True), ("large-light", LARGE, False)]

LONG_CELL = """\
import numpy as np
import logprob_viz as lv
words = [f"word{i} " for i in range(400)]
n = len(words)
lp = -np.linspace(0.1, 3.0, n).astype(np.float32)
t = lv.Trace(tokens=words, logprobs=lp, ranks=np.ones(n, int), top_tokens=[[w] for w in words],
             top_logprobs=lp[:, None].copy(), prompt_len=3, meta={"model": "hand-made", "source": "test"})
t"""

# The panel, its chart's first line and the notebook's visible area, top and bottom.
PANEL_JS = """root => {
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.top, r.bottom]; };
  const scroller = root.closest('.jp-WindowedPanel-outer');
  const chart = root.querySelector('.lv-panel .lv-chart');
  return {area: box(scroller), panel: box(root.querySelector('.lv-panel')), first: box(chart.firstElementChild),
          root: box(root), text: chart.textContent};
}"""


def panel_in_sight(page, where: str, at: int) -> None:
    """Token `at` pinned and scrolled to, the view's top far above: the panel's first line is on screen."""
    root = cell(page, 0).locator(".lv-root").first
    token = root.locator(f".lv-token[data-index='{at}']")
    token.scroll_into_view_if_needed()
    token.click()
    # the notebook scrolled on until the view's top is 120 px above the visible area (its text still on screen)
    root.evaluate("""root => { const s = root.closest('.jp-WindowedPanel-outer');
      s.scrollTop += root.getBoundingClientRect().top - s.getBoundingClientRect().top + 120; }""")
    page.mouse.move(2, 300)  # (off the text: the panel shows the pinned token, not one under the pointer)
    root.locator(f".lv-panel .lv-chart[data-index='{at}']").wait_for(timeout=10_000)
    next_frames(page, 4)
    got = root.evaluate(PANEL_JS)
    screen_shot(page, f"lesson-sticky-{where}.png")
    top, bottom = got["area"]
    shown = min(got["root"][1], bottom) - top  # what of the view is on screen: room for its panel
    assert got["root"][0] < top - 100 and shown >= got["panel"][1] - got["panel"][0], f"{where}: not as meant: {got}"
    assert top - 1 <= got["panel"][0] and got["first"][1] <= bottom, f"{where}: the chart's first line is hidden: {got}"
    assert got["panel"][1] <= got["root"][1] + 1, f"{where}: the panel left its view: {got}"
    p = math.exp(-(0.1 + (3.0 - 0.1) * at / 399))
    assert f"p {100 * p:.1f}%" in got["text"], (where, got["text"][:200], p)


def test_a_scrolled_view_keeps_its_chart_panel_in_sight(browser, lab_server):
    write_notebook(lab_server, "long_view.ipynb", [LONG_CELL])
    with projector_page(browser, lab_server, "long_view.ipynb") as page:
        page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        set_theme(page, dark=True)
        run_cell(page, 0)
        wait_for_output(page, lab_server, 0, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
        panel_in_sight(page, "projector-dark", 300)
        set_theme(page, dark=False)
        page.set_viewport_size(LARGE)
        next_frames(page, 3)
        panel_in_sight(page, "large-light", 340)


def lesson(lab_server, name: str, extra: list[str]) -> list[int]:
    """The lesson as shipped, with `extra` code cells after it (the test's own computations); its code cells."""
    nb = json.loads((NOTEBOOKS / name).read_text())
    for k, src in enumerate(extra):
        nb["cells"].append({"cell_type": "code", "execution_count": None, "id": f"test-{k}", "metadata": {},
                            "outputs": [], "source": src})
    (lab_server.root / name).write_text(json.dumps(nb))
    return [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]


def run_all(page, code: list[int]) -> None:
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
    for i in code:
        wait_cell_done(page, i, timeout=MODEL_TIMEOUT)
    errors = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output[data-mime-type*='error']")
    assert errors.count() == 0, errors.first.inner_text()


def printed_text(page, index: int, tag: str = "") -> str:
    """What cell `index` printed, once its output holds `tag` (the notebook draws a cell's output when
    the cell comes near the screen: scrolled to first)."""
    out = cell(page, index).locator(".jp-OutputArea")
    out.scroll_into_view_if_needed()
    page.wait_for_function("([e, tag]) => e.textContent.includes(tag)", arg=[out.element_handle(), tag],
                           timeout=60_000)
    return out.text_content()


def reference(page, index: int) -> dict:
    """The JSON that cell `index` printed on its "REF " line."""
    return json.loads(re.search(r"REF (\{.*?\})", printed_text(page, index, "REF "))[1])


def each_size(page, check) -> None:
    """`check(where)` on the projector (dark) and at 1400x900 (light)."""
    for where, size, dark in SIZES:
        set_theme(page, dark=dark)
        if size:
            page.set_viewport_size(size)
        next_frames(page, 3)
        check(where)


# Lesson 1: the model's own float64 log-softmax, token by token, over the greedy trace's ids.
PERPLEXITY_CELL = """\
import json, torch
from transformers import AutoModelForCausalLM
from logprob_viz.sources.local.default_model import default_model_path
reference = AutoModelForCausalLM.from_pretrained(default_model_path(), dtype=torch.float32).eval()
ids = torch.tensor([greedy.token_ids.tolist()])
with torch.inference_mode():
    lp = torch.log_softmax(reference(ids).logits[0].double(), dim=-1)
chosen = [float(lp[i - 1, ids[0, i]]) for i in range(1, ids.shape[1])]  # token i, predicted after i - 1
after = chosen[greedy.prompt_len - 1:]
print("REF " + json.dumps({"all": math.exp(-sum(chosen) / len(chosen)),
                           "completion": math.exp(-sum(after) / len(after)),
                           "n": int(ids.shape[1]), "prompt_len": greedy.prompt_len}))"""


def test_lesson_1_says_over_which_tokens_each_perplexity_is(browser, lab_server):
    name = "01_next_token.ipynb"
    code = lesson(lab_server, name, [PERPLEXITY_CELL])
    with projector_page(browser, lab_server, name) as page:
        page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_all(page, code)
        ref = reference(page, code[-1])
        printed = printed_text(page, code[-2], "greedy")
        m = re.search(r"perplexity ([\d.]+) over the completion \(tokens (\d+)–(\d+)\); ([\d.]+) over tokens "
                      r"(\d+)–(\d+), prompt included", printed)
        assert m, printed
        completion, whole = float(m[1]), float(m[4])
        c0, c1, w0, w1 = (int(m[k]) for k in (2, 3, 5, 6))
        assert (c0, c1, w0, w1) == (ref["prompt_len"] + 1, ref["n"], 2, ref["n"]), (printed, ref)
        assert abs(completion - ref["completion"]) < 0.006 and abs(whole - ref["all"]) < 0.006, (printed, ref)
        header = cell(page, code[3]).locator(".lv-root .lv-header").first  # the greedy view ("Once upon a time")

        def check(where):
            header.evaluate("e => e.scrollIntoView({block: 'center'})")
            next_frames(page, 3)
            said = header.inner_text()
            screen_shot(page, f"lesson-01-{where}.png")
            assert f"perplexity {whole:.2f} over tokens {w0}\u2013{w1}" in said, (where, said, printed)
            box = header.evaluate("e => [e.scrollWidth, e.clientWidth]")
            assert box[0] <= box[1] + 1, (where, box)

        each_size(page, check)


# Lesson 7: the prompt's tokens, counted with the tokenizer alone.
PROMPT_CELL = """\
import json
n_prompt = len(runner.tokenizer("Q: What is the largest planet in the solar system?\\nA:")["input_ids"])
print("REF " + json.dumps({"prompt": n_prompt, "n": len(trace)}))"""


def test_lesson_7_calls_the_answer_a_completion_in_every_view(browser, lab_server):
    name = "07_why.ipynb"
    code = lesson(lab_server, name, [PROMPT_CELL])
    with projector_page(browser, lab_server, name) as page:
        page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_all(page, code)
        ref = reference(page, code[-1])
        split = f"{ref['n']} tokens ({ref['prompt']} prompt, {ref['n'] - ref['prompt']} completion)"
        first = cell(page, code[0]).locator(".lv-root .lv-header").first
        last = cell(page, code[-2]).locator(".lv-root .lv-header").first

        def check(where):
            for header in (first, last):
                header.scroll_into_view_if_needed()
                next_frames(page, 3)
                assert header.inner_text().startswith(split), (where, header.inner_text(), split)
            screen_shot(page, f"lesson-07-{where}.png")

        each_size(page, check)


TITLE_JS = """out => {
  const plot = out.matches('.js-plotly-plot') ? out : out.querySelector('.js-plotly-plot');  // (the output is the plot)
  const area = out.getBoundingClientRect();
  const svg = plot.querySelector('svg.main-svg').getBoundingClientRect();
  const title = plot.querySelector('.gtitle').getBoundingClientRect();
  return {area: [area.left, area.right], svg: [svg.left, svg.right], title: [title.left, title.right],
          text: plot.querySelector('.gtitle').textContent, window: window.innerWidth};
}"""

SVG_JS = """out => {
  const img = out.querySelector('img');
  const a = out.getBoundingClientRect();
  const s = img.getBoundingClientRect();
  return {area: [a.left, a.right], img: [s.left, s.right], svg: decodeURIComponent(img.src.split(',')[1])};
}"""


def svg_texts_inside(svg: str) -> None:
    """Every text of the picture within its width (monospace: 0.6 em a character)."""
    tree = ET.fromstring(svg)
    width = float(tree.get("width"))
    for g in tree.iter("{http://www.w3.org/2000/svg}g"):
        size = float(g.get("font-size") or tree.get("font-size"))
        for text in g.findall("{http://www.w3.org/2000/svg}text"):
            right = float(text.get("x")) + 0.6 * size * len(text.text or "")
            assert right <= width + 0.5, f"{text.text!r} ends at {right:.0f} px in a {width:.0f} px picture"


def test_lesson_8_chart_title_and_slide_fit(browser, lab_server):
    name = "08_guess.ipynb"
    code = lesson(lab_server, name, [])
    with projector_page(browser, lab_server, name) as page:
        page.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_all(page, code)
        # the class's guesses, as the lesson printed their outcomes: found in k guesses, or revealed
        found = [int(k) for k in re.findall(r"right, '.*?' in (\d+) guess", printed_text(page, code[1], "right"))]
        assert found, printed_text(page, code[1])
        score = sum(math.log2(k) for k in found) / len(found)
        chart = cell(page, code[4]).locator(".jp-OutputArea-output").first
        slide = cell(page, code[5]).locator(".jp-OutputArea-output").first

        def check(where):
            chart.scroll_into_view_if_needed()
            chart.locator(".gtitle").wait_for(state="attached", timeout=60_000)  # (plotly's renderer loads first)
            next_frames(page, 3)
            screen_shot(page, f"lesson-08-chart-{where}.png")
            got = chart.evaluate(TITLE_JS)
            left, right = got["area"]
            assert got["svg"][1] <= right + 1 and got["title"][1] <= min(got["svg"][1], got["window"]) + 1, (where, got)
            # (the title's lines join without a space in its text: compared without spaces)
            assert f"class{score:.2f}bits" in re.sub(r"\s", "", got["text"]), (where, got["text"], found)
            slide.scroll_into_view_if_needed()
            slide.locator("img").wait_for(timeout=60_000)
            next_frames(page, 3)
            screen_shot(page, f"lesson-08-svg-{where}.png")
            pic = slide.evaluate(SVG_JS)
            assert pic["img"][1] <= pic["area"][1] + 1, (where, pic["img"], pic["area"])
            svg_texts_inside(pic["svg"])

        each_size(page, check)

