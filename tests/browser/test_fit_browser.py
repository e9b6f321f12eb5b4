"""Names shown whole and text that wraps between tokens, at projector size (issue 26), in a real
JupyterLab + chromium, light and dark.

A hand-made trace (no model: its tokens and alternatives chosen to be long, " Neptune", " extraordinarily",
"·usi…" was what the chart showed) in a view of the "projector" size, on a 1280x720 screen at 150 %
(853x480 CSS px) with the file browser hidden. Measured on the page, not looked up in the code:

- every token of the text lies on one line (one client rect), its leading space with its word;
- the text box never overflows its width (scrollWidth <= clientWidth);
- with a token pinned, every alternative's name in the chart and every token in the overview list is
  whole: no overflow inside its box, and its text is the token's text (written to fit.json here);
- every button of the chart (the why? of each row) lies inside the chart's panel.
"""

from __future__ import annotations

import json
from contextlib import nullcontext

import pytest

from browser.lab import (
    HAND_MADE_TIMEOUT,
    cell,
    dark_theme,
    next_frames,
    projector_page,
    run_cell,
    save_screenshot,
    screen_shot,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

WORDS = ("Q: Which planet is the largest in the solar system, and which one is the farthest from the Sun?\n"
         "A: The largest planet is Jupiter; the farthest is Neptune, an extraordinarily cold world of ice "
         "and gas, using nothing but the light of a distant star. Astronomers immersed in the data agree.")

CELL = f"""\
import json, pathlib, re
import numpy as np
import logprob_viz as lv
words = re.findall(r"\\s?\\S+|\\n", {WORDS!r})
n, k = len(words), 5
rng = np.random.default_rng(3)
alts = [" Neptune", " Jupiter", " extraordinarily", " using", " immersive", " the", " Saturn", " a"]
top_tokens = [[words[i]] + [a for a in alts if a != words[i]][:k - 1] for i in range(n)]
p = np.sort(rng.dirichlet(np.ones(k + 1), n)[:, :k], axis=1)[:, ::-1]
top_lp = np.log(p).astype(np.float32)
t = lv.Trace(tokens=words, logprobs=top_lp[:, 0].copy(), ranks=np.ones(n, int), top_tokens=top_tokens,
             top_logprobs=top_lp, prompt_len=22, meta={{"model": "hand-made", "source": "test"}})
pathlib.Path("fit.json").write_text(json.dumps(t.to_dict()))
v = lv.LogprobView(t, size="projector", runner=lv.load())  # (a runner: the chart draws its why? buttons)
v"""

# Every token of the text: its rects (lines), and the text box's overflow.
TEXT_JS = """root => {
  const text = root.querySelector('.lv-text');
  const tokens = [...text.querySelectorAll('.lv-token')].map(s => ({
    index: Number(s.dataset.index), text: s.textContent, rects: s.getClientRects().length,
    long: s.classList.contains('lv-token-long')}));
  return {tokens, scrollWidth: text.scrollWidth, clientWidth: text.clientWidth};
}"""

# Every name in the chart and the overview list: its text, whether it overflows its own box; every button's
# rect against the panel's.
NAMES_JS = """root => {
  const panel = root.querySelector('.lv-panel');
  const names = [...panel.querySelectorAll('.lv-alt-token, .lv-chip')].filter(el => el.offsetParent)
    .map(el => ({text: el.textContent, scroll: el.scrollWidth, client: el.clientWidth,
                 other: !!el.closest('.lv-alt-other')}));
  const p = panel.getBoundingClientRect();
  const buttons = [...panel.querySelectorAll('button')].filter(b => b.offsetParent).map(b => {
    const r = b.getBoundingClientRect();
    return {text: b.textContent, rect: [r.left, r.right, r.top, r.bottom], panel: [p.left, p.right, p.top, p.bottom],
            inside: r.left >= p.left - 0.5 && r.right <= p.right + 0.5};
  });
  return {names, buttons, panelScroll: panel.scrollWidth, panelClient: panel.clientWidth};
}"""


def check_text(root, trace) -> None:
    got = root.evaluate(TEXT_JS)
    assert got["scrollWidth"] <= got["clientWidth"], f"the text overflows: {got['scrollWidth']} > {got['clientWidth']}"
    wrapped = [t for t in got["tokens"] if "\n" not in t["text"] and not t["long"]]
    assert len(wrapped) > 40
    split = [(t["index"], t["text"], t["rects"]) for t in wrapped if t["rects"] != 1]
    assert not split, f"tokens whose box lies on two lines: {split}"
    assert [t["text"] for t in got["tokens"]] == trace["tokens"]


def check_names(root, expected: list[str], buttons: bool = True) -> None:
    """Each expected name whole in the panel, nothing cut, no sideways scroll; with `buttons`, the panel's
    buttons ("why?") all inside it, else none drawn (a view with no runner draws no "why?")."""
    got = root.evaluate(NAMES_JS)
    cut = [(n["text"], n["scroll"], n["client"]) for n in got["names"] if n["scroll"] > n["client"]]
    assert not cut, f"names cut in the panel: {cut}"
    shown = [n["text"] for n in got["names"] if not n["other"]]
    for name in expected:
        assert name in shown, f"{name!r} is not shown whole in the panel: {shown}"
    outside = [(b["text"], b["rect"], b["panel"]) for b in got["buttons"] if not b["inside"]]
    if buttons:
        assert got["buttons"] and not outside, f"buttons outside the panel: {outside}"
    else:
        assert not got["buttons"], f"buttons drawn in a view that has no runner: {got['buttons']}"
    assert got["panelScroll"] <= got["panelClient"], "the panel scrolls sideways"


def test_names_whole_and_tokens_on_one_line_at_projector_size(page, lab_server, browser):
    (lab_server.root / "fit.json").unlink(missing_ok=True)
    write_notebook(lab_server, "fit.ipynb", [CELL])
    with projector_page(browser, lab_server, "fit.ipynb") as small:
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(small, 0)
        wait_for_output(small, lab_server, 0, ".lv-root .lv-panel.lv-sized", HAND_MADE_TIMEOUT)
        trace = json.loads((lab_server.root / "fit.json").read_text())
        root = cell(small, 0).locator(".lv-root").first
        assert "lv-size-projector" in root.get_attribute("class")
        root.scroll_into_view_if_needed()
        check_text(root, trace)
        # The overview: the least likely tokens, each whole.
        least = sorted(range(trace["prompt_len"], len(trace["tokens"])), key=lambda i: trace["logprobs"][i])[:5]
        check_names(root, [trace["tokens"][i] for i in least])

        # Pin a token whose alternatives have the longest names; its chart holds them whole, the why? inside.
        i = trace["tokens"].index(" farthest")
        root.locator(f".lv-token[data-index='{i}']").click()
        root.locator(f".lv-chart[data-index='{i}'] .lv-why-row").first.wait_for(timeout=30_000)
        next_frames(small)
        check_names(root, trace["top_tokens"][i])
        save_screenshot(small, "fit-projector.png")
        with dark_theme(small, root):
            next_frames(small)
            check_text(root, trace)
            check_names(root, trace["top_tokens"][i])
            save_screenshot(small, "fit-projector-dark.png")
        assert not small.evaluate("() => window.__pwned")


# Where the clicked group row is and the notebook's scroll (the group row's index in the table given).
GROUP_JS = """([root, row]) => {
  const nb = root.closest('.jp-NotebookPanel');
  const scroller = nb.querySelector('.jp-WindowedPanel-outer') || nb.querySelector('.jp-Notebook');
  const r = root.querySelectorAll('.lvx-index .lvx-data')[row].getBoundingClientRect();
  const below = nb.querySelectorAll('.jp-Cell')[1].getBoundingClientRect();
  return {row: [r.left, r.top], scroll: scroller.scrollTop, below: below.top};
}"""


def test_a_surprise_index_group_moves_nothing(page, lab_server):
    """A click on a group lists its occurrences in the room kept for them: the row clicked, the page's
    scroll and the cell below stay where they were (they moved 220 px when the list pushed them)."""
    from browser.test_corpus_browser import CORPUS_CELL, STATE_CELL, open_view  # (the corpus suite's texts)

    write_notebook(lab_server, "corpus-fit.ipynb", [CORPUS_CELL, STATE_CELL])
    root, _ = open_view(page, lab_server, "corpus-fit.ipynb")
    root.locator(".lvx-tab[data-tab='index']").click()
    index = root.locator(".lvx-index")
    index.locator(".lvx-data").nth(2).wait_for(timeout=10_000)
    index.scroll_into_view_if_needed()
    next_frames(page)
    for row in (2, 0):
        before = page.evaluate(GROUP_JS, [root.element_handle(), row])
        index.locator(".lvx-data").nth(row).click()
        page.wait_for_function("el => el.querySelector('.lvx-occ-title').textContent.includes('most surprising')",
                               arg=index.element_handle(), timeout=60_000)
        next_frames(page)
        after = page.evaluate(GROUP_JS, [root.element_handle(), row])
        for name in ("row", "scroll", "below"):
            was, now = (before[name], after[name]) if name != "row" else (before[name][1], after[name][1])
            assert abs(now - was) < 2, f"a click on group row {row} moved the {name}: {was} -> {now}"
    assert not page.page_errors, page.page_errors


LONG_NAMES = [" extraordinarily", " internationalization", "=" * 32, " Neptune"]
INDEX_CELL = f"""\
import numpy as np
import logprob_viz as lv
names = {LONG_NAMES!r}
rng = np.random.default_rng(5)
def trace(words):
    n = len(words)
    lp = np.log(rng.uniform(0.01, 0.9, n)).astype(np.float32)
    ranks = rng.integers(1, 30, n)
    return lv.Trace(tokens=words, logprobs=lp, ranks=ranks, prompt_len=1, meta={{"model": "hand-made"}})
corpus = lv.Corpus([trace(["A", *names, " and", " the", " end"]), trace(["B", " the", names[2], " end"])])
v = lv.CorpusView(corpus)
v"""

# Every group row in the index's body now: its name and whether it overflows its cell.
GROUP_NAMES_JS = """root => [...root.querySelectorAll('.lvx-index .lvx-data')].filter(r => r.offsetParent).map(r => {
  const c = r.querySelector('.lvx-col-group');
  return [c.textContent, c.scrollWidth <= c.clientWidth];
})"""


def test_the_index_shows_every_token_whole_at_projector_size(browser, lab_server):
    """At 853x480 CSS px, light and dark: the group column is as wide as its longest token; none is cut."""
    from browser.expected import expected_marks

    write_notebook(lab_server, "index-fit.ipynb", [INDEX_CELL])
    with projector_page(browser, lab_server, "index-fit.ipynb") as small:
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(small, 0)
        wait_for_output(small, lab_server, 0, ".lvx-root .lvx-tab", HAND_MADE_TIMEOUT)
        root = cell(small, 0).locator(".lvx-root").first
        root.locator(".lvx-tab[data-tab='index']").click()
        root.locator(".lvx-index .lvx-data").first.wait_for(timeout=10_000)
        root.scroll_into_view_if_needed()
        for dark in (False, True):
            with dark_theme(small, root) if dark else nullcontext():
                next_frames(small, 3)
                shown = dict(root.evaluate(GROUP_NAMES_JS))
                assert {expected_marks(t) for t in LONG_NAMES} <= set(shown), sorted(shown)
                cut = [name for name, whole in shown.items() if not whole]
                assert not cut, f"cut in the index ({'dark' if dark else 'light'}): {cut}"
                screen_shot(small, f"index-projector{'-dark' if dark else ''}.png")
