"""One visible-whitespace mapping, in a real JupyterLab + chromium, on the real default model.

The same trace (a tab, spaces, a blank token of one space, newlines, a blank newline token) is
shown by the LogprobView, the CompareView's panel, the LensView's token axis and the explorer's
branch-here label; each must mark each token's whitespace the same way: the marks restated in
`browser.expected` (space ·, tab →, newline ↵), read from what the page draws (for the
LogprobView, the CSS glyph of each whitespace span, or for a token " word" or of spaces only, the
dots its background draws: that each is drawn where its space is, test_widget_browser checks).
"""

from __future__ import annotations

import json

import pytest

from browser.expected import expected_marks
from browser.lab import ARTIFACTS, MODEL_TIMEOUT, cell, open_notebook, run_cell, wait_for_output, write_notebook

pytestmark = pytest.mark.browser

TEXT = "Tabs\tand spaces  here.\n\nA new line"

CELLS = [
    f"""\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
t = runner.score({TEXT!r}, top_logprobs=5)
pathlib.Path("marks.json").write_text(json.dumps(t.tokens))
t.view()""",
    'lv.compare([t, t], labels=["a", "b"]).view()',
    f"runner.lens({TEXT!r}, top_logprobs=3)",
    """\
app = lv.explore(runner=runner)
app.tree = lv.Tree(t, runner=runner)
app.switch(app.tree.nodes[0])
app""",
]

# What the LogprobView draws for token i: its text, each whitespace span as its CSS glyph; a token
# whose background draws its spaces' dots (lv-dot-lead: the leading one, lv-dot-all: each) as "·".
LOGPROB_VIEW_JS = """el => {
  const dots = getComputedStyle(el).backgroundImage.startsWith('radial-gradient');
  if (el.classList.contains('lv-dot-lead') && dots) return el.textContent.replace(/^ /, '\u00b7');
  if (el.classList.contains('lv-dot-all') && dots) return el.textContent.replace(/ /g, '\u00b7');
  return Array.from(el.childNodes, (n) =>
    n.nodeType === Node.TEXT_NODE ? n.textContent
    : n.classList.contains('lv-ws') ? getComputedStyle(n, '::before').content.replace(/^"|"$/g, '')
    : n.textContent).join('');
}"""
VIEWS = [".lv-root .lv-token", ".lvc-root .lvc-tok", ".lvl-root .lvl-token", ".lv-explore .lv-token"]


def test_every_view_marks_the_same_whitespace_the_same_way(page, lab_server):
    write_notebook(lab_server, "marks.ipynb", CELLS)
    open_notebook(page, lab_server, "marks.ipynb")
    for i, selector in enumerate(VIEWS):
        run_cell(page, i)
        wait_for_output(page, lab_server, i, selector, MODEL_TIMEOUT if i == 0 else 180)
    tokens = json.loads((lab_server.root / "marks.json").read_text())
    marked = [i for i, tok in enumerate(tokens) if tok != tok.strip() or tok == ""]
    blank = {"\t", " ", "\n"}
    assert blank <= {tokens[i] for i in marked}, f"the text must hold a tab, a blank space, a newline: {tokens}"
    expected = {i: expected_marks(tokens[i]) for i in marked}

    logprob = cell(page, 0).locator(".lv-root")
    shown = {i: logprob.locator(f".lv-token[data-index='{i}']").evaluate(LOGPROB_VIEW_JS) for i in marked}
    assert shown == expected, "LogprobView"
    classes = [logprob.locator(f".lv-token[data-index='{i}']").get_attribute("class") for i in marked]
    kinds = {c for c in ("lv-dot-lead", "lv-dot-all") for cls in classes if c in cls}
    assert kinds == {"lv-dot-lead", "lv-dot-all"}, "both ways of drawing a space's dot must be on the page"

    compare = cell(page, 1).locator(".lvc-root")
    in_panel = {}
    for i in marked:  # spans are tokens here (the same trace twice): hovering one lists its token
        compare.locator(f".lvc-row[data-row='0'] .lvc-tok[data-index='{i}']").dispatch_event("mouseover")
        in_panel[i] = compare.locator(".lvc-col[data-row='0'] .lvc-token-text").all_text_contents()
    assert in_panel == {i: [want] for i, want in expected.items()}, "CompareView"

    lens = cell(page, 2).locator(".lvl-root")
    axis = {i: lens.locator(f".lvl-token[data-index='{i}']").text_content() for i in marked}
    assert axis == expected, "LensView"

    app = cell(page, 3).locator(".lv-explore")
    labels = {}
    for i in marked:  # pinning a token (a click) tells the kernel, which labels the branch-here controls
        app.locator(f".lv-token[data-index='{i}']").dispatch_event("click")
        where = app.locator(".widget-html-content", has_text=f"at token {i + 1} (")  # numbered from 1, as the chart
        where.wait_for(state="attached", timeout=30_000)  # (the branch-here controls are behind "more")
        text = where.text_content()
        labels[i] = text[text.index("(") + 1 : text.rindex(")")]
    assert labels == expected, "the explorer's branch label"

    ARTIFACTS.mkdir(parents=True, exist_ok=True)  # a picture of each view, to look at
    for name, root in [("logprob", logprob), ("compare", compare), ("lens", lens), ("explorer", app)]:
        root.scroll_into_view_if_needed()
        root.screenshot(path=str(ARTIFACTS / f"whitespace-marks-{name}.png"), animations="disabled")
