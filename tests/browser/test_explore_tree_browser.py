"""The explorer's tree in a real JupyterLab + chromium, as a class sees it (issue 18, items 1, 5,
6, 7, 9 and the keys): a branch of a T=0.8 root shows the root's sampled-from numbers before the
fork; one numbering for a token everywhere; the tree drawn (switch, explored alternatives marked,
fork tooltips); stepping by hand grows one branch of completion tokens; a new Generate keeps the
earlier tree and the view does not move. Numbers are checked against the kernel's own arrays,
formatted here (percentages, a perplexity computed in the test). Screenshots: normal, a 1280x720
screen at 150 % (853x480 CSS pixels) and the dark theme.
"""

from __future__ import annotations

import json
import math
import time

import pytest

from browser.lab import (
    ARTIFACTS,
    MODEL_TIMEOUT,
    dark_theme,
    next_frames,
    open_notebook,
    output_text,
    prompt_of,
    run_cell,
    show_more,
    tall_screenshot,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

PROMPT = "A robot may not injure a human being"
APP = ".jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore"
FORK_TITLE = "fork: a branch of the tree takes another token here"

APP_CELL = """\
from logprob_viz.views.explorer import explore
app = explore(max_new_tokens=8, top_logprobs=5, temperature=0.8, seed=0)
app"""

STATE_CELL = """\
import json
nodes = [] if app.tree is None else app.tree.nodes
print("STATE " + json.dumps({
    "running": app.running, "error": app.last_error, "trees": len(app.history.trees),
    "current": None if app.current is None else [i for i, n in enumerate(nodes) if n is app.current][0],
    "labels": app.branches.labels,
    "nodes": [{"ids": n.token_ids.tolist(), "tokens": list(n.tokens), "prompt_len": n.prompt_len,
               "logprobs": n.logprobs.tolist(), "forced": n.meta.get("forced", []),
               "top_ids": n.top_ids.tolist(),
               "processed_top": None if n.processed_top_logprobs is None else n.processed_top_logprobs.tolist(),
               "processed": None if n.processed_logprobs is None else n.processed_logprobs.tolist()}
              for n in nodes],
}))"""

PAGE_JS = """() => {
  const app = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore');
  if (!app) return null;
  const button = (label) => [...app.querySelectorAll('button')].find((b) => b.textContent.trim() === label);
  return {
    tokens: [...app.querySelectorAll('.lv-root .lv-token')].map((e) => e.textContent),
    idle: !button('Generate').disabled && button('Stop').disabled,
    status: (app.querySelector('.lv-explore-status') || {}).textContent || '',
    header: (app.querySelector('.lv-root .lv-header') || {}).textContent || '',
    rows: [...app.querySelectorAll('.lv-tree-row')].map((b) => b.textContent.replace(/\\u00a0/g, ' ').trim()),
    current: [...app.querySelectorAll('.lv-tree-row')].findIndex((b) => b.classList.contains('lv-tree-current')),
    title: (app.querySelector('.lv-tree-title') || {}).textContent || '',
    viewTop: app.querySelector('.lv-root') ? app.querySelector('.lv-root').getBoundingClientRect().top : null,
  };
}"""


def page_state(page) -> dict:
    return page.evaluate(PAGE_JS)


def wait_until(page, condition, what: str, timeout: float = MODEL_TIMEOUT) -> dict:
    deadline = time.monotonic() + timeout
    state = page_state(page)
    while not (state and condition(state)):
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {timeout:.0f} s; the app shows: {state}")
        time.sleep(0.1)  # (polling the condition above)
        state = page_state(page)
    return state


def kernel_state(page) -> dict:
    run_cell(page, 1)
    wait_cell_done(page, 1, timeout=120)
    text = output_text(page, 1)
    line = next((ln for ln in text.splitlines() if ln.startswith("STATE ")), None)
    assert line, f"the state cell printed no state:\n{text[-3000:]}"
    return json.loads(line[len("STATE ") :])


def percent(p: float) -> str:
    """A probability as the view writes it (toolkit/format.js formatPercent), written again here."""
    if p is None or math.isnan(p):
        return "?"
    pct = p * 100
    return "0%" if pct == 0 else "<0.1%" if pct < 0.05 else f"{pct:.1f}%"


def chart(page, i: int) -> dict:
    """What the chart of token i shows: where, the sampled-from column per row, and its stats."""
    el = page.locator(f"{APP} .lv-chart[data-index='{i}']")
    el.wait_for(state="visible", timeout=20_000)
    return el.evaluate("""c => ({
      where: c.querySelector('.lv-chart-where').textContent,
      stats: c.querySelector('.lv-chart-stats').textContent,
      rows: [...c.querySelectorAll('.lv-alt-row:not(.lv-extra)')].map((r) => ({
        token: r.querySelector('.lv-alt-token').textContent,
        sampled: (r.querySelector('.lv-alt-prob-processed') || {}).textContent,
        title: r.title, explored: r.classList.contains('lv-explored'),
        branch: r.querySelector('.lv-alt-bar').dataset.branch || null})),
      other: (c.querySelector('.lv-alt-other .lv-alt-prob-processed') || {}).textContent,
      note: (c.querySelector('.lv-pin-note') || {}).textContent || '',
    })""")


def screenshots(page, name: str) -> None:
    """The app at its normal size, then as a 1280x720 screen at 150 % shows it (853x480 CSS pixels)."""
    tall_screenshot(page, f"{name}.png", APP, height=2000)
    size = page.viewport_size
    page.set_viewport_size({"width": 853, "height": 480})
    try:
        next_frames(page)
        page.locator(f"{APP} .lv-tree-panel").evaluate("el => el.scrollIntoView({block: 'start'})")
        next_frames(page)
        page.screenshot(path=str(ARTIFACTS / f"{name}-projector.png"))  # the screen, as the class sees it
    finally:
        page.set_viewport_size(size)


def dark_screenshot(page, name: str) -> None:
    with dark_theme(page, page.locator(f"{APP} .lv-root"), prop="color"):
        tall_screenshot(page, f"{name}-dark.png", APP, height=2000)


def test_the_tree_as_a_class_sees_it(page, lab_server):
    write_notebook(lab_server, "tree.ipynb", [APP_CELL, STATE_CELL])
    open_notebook(page, lab_server, "tree.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-explore textarea", MODEL_TIMEOUT)
    keys = page.locator(f"{APP} button").filter(has_text="?").first  # the keys are behind "?"
    keys.click()
    popover = page.locator(f"{APP} .lv-explore-pop", has_text="Ctrl+Enter")
    popover.wait_for(state="visible", timeout=10_000)
    keys.click()
    popover.wait_for(state="hidden", timeout=10_000)

    # Ctrl+Enter in the prompt generates (a T=0.8 sample).
    cells = page.locator(".jp-NotebookPanel:visible .jp-Cell")
    page.locator(f"{APP} textarea").fill(PROMPT)
    before = cells.count()
    page.locator(f"{APP} textarea").press("Control+Enter")
    wait_until(page, lambda s: s["idle"] and s["status"].startswith("Generated"), "Ctrl+Enter generating")
    assert cells.count() == before and prompt_of(page, 0) == "[1]:"  # not also the notebook's run-cell
    kernel = kernel_state(page)
    assert kernel["error"] is None and len(kernel["nodes"]) == 1
    root = kernel["nodes"][0]
    pl = root["prompt_len"]

    # Branch by a click on the third alternative of a pinned token.
    at = pl + 4
    page.locator(f"{APP} .lv-token[data-index='{at}']").click()
    bar = page.locator(f"{APP} .lv-chart[data-index='{at}'] .lv-alt-row:not(.lv-extra)").nth(2)
    bar.wait_for(state="visible", timeout=20_000)
    assert bar.evaluate("r => r.title").startswith("click to branch with")  # says what a click does
    bar.click()
    shown = wait_until(page, lambda s: s["idle"] and len(s["rows"]) == 2, "the branch")
    kernel = kernel_state(page)
    node = kernel["nodes"][1]
    assert kernel["current"] == 1 and node["ids"][:at] == root["ids"][:at]

    # 1. Before the fork the branch shows the root's sampled-from numbers (not 0 % / ? / other 100 %).
    for i in (pl + 1, pl + 3):
        page.locator(f"{APP} .lv-token[data-index='{i}']").hover()
        seen = chart(page, i)
        k = sum(1 for lp in root["processed_top"][i] if lp is not None and lp > -1e30)
        want = [percent(math.exp(lp)) for lp in root["processed_top"][i][:k]]
        assert [r["sampled"] for r in seen["rows"]] == want, (i, seen)
        assert percent(math.exp(root["processed"][i])) in seen["stats"] and "sampled p" in seen["stats"]
        assert seen["other"] == percent(max(0.0, 1 - sum(math.exp(lp) for lp in root["processed_top"][i][:k])))
        assert seen["other"] != "100.0%"

    # 9. One numbering: the status line, the outline and the chart say token at + 1 for position at;
    # the forced token is completion, chosen by hand; perplexities say over which tokens.
    assert f"from token {at + 1} " in shown["status"]
    assert f"token {at + 1} " in shown["rows"][1]
    page.locator(f"{APP} .lv-token[data-index='{at}']").hover()
    m = len(node["ids"])
    assert chart(page, at)["where"] == f"token {at + 1} of {m} · completion · chosen by hand"
    ppl = math.exp(-sum(node["logprobs"][pl:]) / (m - pl))
    assert f"ppl {ppl:.2f} over tokens {pl + 1}–{m}" in shown["rows"][1]
    assert page_state(page)["header"].startswith(f"{m} tokens ({pl} prompt, {m - pl} completion)")

    # 7. The tree drawn: click the root's row; the explored alternative is marked in its chart, with
    # the branch's number; the fork has a tooltip; the status follows the switch.
    page.locator(f"{APP} .lv-tree-row").nth(0).click()
    wait_until(page, lambda s: s["current"] == 0 and s["tokens"] == root["tokens"]
               and s["status"].startswith("Showing #0 root"), "switching to the root, the status line following")
    fork = page.locator(f"{APP} .lv-token[data-index='{at}']")
    assert "lv-fork" in fork.get_attribute("class") and fork.get_attribute("title") == FORK_TITLE
    fork.click()
    seen = chart(page, at)
    assert [r["branch"] for r in seen["rows"]] == [None, None, "#1", None, None][: len(seen["rows"])]
    assert seen["rows"][2]["title"].startswith("branch #1 takes") and "click a bar to branch" in seen["note"]
    plain = page.locator(f"{APP} .lv-chart[data-index='{at}'] .lv-alt-row:not(.lv-extra)").nth(3)
    before = plain.evaluate("r => getComputedStyle(r).backgroundColor")
    plain.hover()
    assert plain.evaluate("r => getComputedStyle(r).backgroundColor") != before  # a hover state
    screenshots(page, "explore-tree")
    dark_screenshot(page, "explore-tree")
    # a click on the explored alternative shows its branch; nothing is made again
    page.locator(f"{APP} .lv-chart[data-index='{at}'] .lv-alt-row:not(.lv-extra)").nth(2).click()
    wait_until(page, lambda s: s["current"] == 1 and len(s["rows"]) == 2, "showing branch #1")

    # 5. Stepping by hand (n, then choose three tokens): one branch grows by three completion tokens.
    page.locator(f"{APP} .lv-root .lv-header").click()  # focus in the app, nothing else
    page.keyboard.press("n")
    for step in range(3):
        choice = page.locator(f"{APP} .lv-next .lv-next-choice").nth(1)  # the chart's second row
        choice.wait_for(state="visible", timeout=MODEL_TIMEOUT * 1000)
        wait_until(page, lambda s: s["idle"], "the next-token distribution")
        choice.click()
        wait_until(page, lambda s, k=step: s["idle"] and len(s["tokens"]) == m + k + 1, "the chosen token")
    stepped = page_state(page)
    kernel = kernel_state(page)
    grown = kernel["nodes"][1]
    assert len(kernel["nodes"]) == 2 and len(stepped["rows"]) == 2 and kernel["current"] == 1
    assert grown["ids"][:m] == node["ids"] and len(grown["ids"]) == m + 3 and grown["prompt_len"] == pl
    assert grown["forced"] == [at, m, m + 1, m + 2]
    counts = f"({pl} prompt, {m + 3 - pl} completion)"
    assert counts in stepped["status"] and stepped["header"].startswith(f"{m + 3} tokens {counts}")
    page.locator(f"{APP} .lv-token[data-index='{m + 2}']").hover()
    assert chart(page, m + 2)["where"].endswith("completion · chosen by hand")
    # u undoes the last token
    page.locator(f"{APP} .lv-root .lv-header").click()
    page.keyboard.press("u")
    wait_until(page, lambda s: s["idle"] and len(s["tokens"]) == m + 2, "undo")

    # 6. Generate on a new prompt: the earlier tree stays (earlier tree), and the view does not move.
    # (Esc releases the pin first, so the pinned token's panel below the view closes)
    page.locator(f"{APP} .lv-root").press("Escape")
    panel = page.locator(f"{APP} .lv-tree-panel")
    page.locator(f"{APP} textarea").fill("The capital of France is")
    top, height = page_state(page)["viewTop"], panel.evaluate("el => el.getBoundingClientRect().height")
    page.locator(f"{APP} textarea").press("Control+Enter")
    tops, heights, deadline = [], [], time.monotonic() + MODEL_TIMEOUT
    while "Tree 2 of 2" not in page_state(page)["title"] and time.monotonic() < deadline:
        tops.append(page_state(page)["viewTop"])  # while it streams
        heights.append(panel.evaluate("el => el.getBoundingClientRect().height"))
        time.sleep(0.05)  # (sampling the position)
    new = wait_until(page, lambda s: s["idle"] and "Tree 2 of 2" in s["title"], "the new tree")
    tops.append(new["viewTop"])
    heights.append(panel.evaluate("el => el.getBoundingClientRect().height"))
    # the tree panel below the view keeps its height, or hides while the new tree has no branch
    assert set(heights) <= {height, 0}, (height, heights)
    assert max(abs(t - top) for t in tops) < 1, (top, tops)
    assert len(new["rows"]) == 1 and kernel_state(page)["trees"] == 2
    show_more(page, APP, True)  # (the trees' tools are behind "more")
    page.locator(f"{APP} button", has_text="earlier tree").click()
    old = wait_until(page, lambda s: "Tree 1 of 2" in s["title"] and s["tokens"] == grown["tokens"][:-1],
                     "the earlier tree, on the node last shown there")
    assert len(old["rows"]) == 2 and old["current"] == 1
    assert not page.page_errors, page.page_errors

    # Esc in the prompt stops a generation; what was generated stays (a tree of its own).
    box = page.locator(f"{APP} .widget-inline-hbox", has_text="max new tokens").locator("input")
    box.fill("300")
    box.press("Enter")
    show_more(page, APP, False)
    page.locator(f"{APP} textarea").press("Control+Enter")
    wait_until(page, lambda s: not s["idle"] and "Generating" in s["status"], "a long generation streaming")
    page.locator(f"{APP} textarea").press("Escape")
    stopped = wait_until(page, lambda s: s["idle"] and "Tree 3 of 3" in s["title"], "Esc stopping it", timeout=120)
    assert "stopped" in stopped["status"]
    assert not page.page_errors, page.page_errors
