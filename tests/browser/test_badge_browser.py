"""lv.audit's badge in the trace view, used as a person would, in a real JupyterLab + chromium on the
real default model: a served body (built in the kernel from the model's own greedy generation, three
tokens' values moved by hand) is audited; the view's badge says "3 tokens disagree", and each click
on it pins the next disagreeing token (the chart shows it, Python's `selected` follows), wrapping.
Also: a raw body's badge and "logprobs as the model gave them", and a trace without logprobs says
"the provider returned no logprobs". Pictures at normal size, on a projector and in the dark theme."""

from __future__ import annotations

import pytest

from browser.lab import (
    ARTIFACTS,
    MODEL_TIMEOUT,
    cell,
    dark_screenshot,
    next_frames,
    open_notebook,
    projector_page,
    python_prints,
    run_cell,
    save_screenshot,
    screen_shot,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

ALTERED = [2, 6, 9]  # the tokens whose served value the kernel moves (down by 0.4 nats)

CELLS = [
    f"""\
import math
import logprob_viz as lv
runner = lv.load()
PROMPT = "A robot may not injure a human being"
g = runner.generate(PROMPT, max_new_tokens=12, top_logprobs=5)
p = g.prompt_len

def body(moved=()):
    # a Completions body of the generated tokens, as a server would send them; `moved`: 0.4 nats lower there
    toks = list(g.tokens[p:])
    values = [float(g.logprobs[p + i]) + (-0.4 if i in moved else 0.0) for i in range(len(toks))]
    tops = [dict(zip(g.top_tokens[p + i], map(float, g.top_logprobs[p + i][:len(g.top_tokens[p + i])])))
            for i in range(len(toks))]
    for i in range(len(toks)):
        tops[i][toks[i]] = values[i]
    return {{"id": "cmpl-badge", "object": "text_completion", "model": "smollm2", "choices": [{{
        "index": 0, "text": "".join(toks), "finish_reason": "length",
        "logprobs": {{"tokens": toks, "token_logprobs": values, "top_logprobs": tops}}}}]}}

t = lv.read(body(moved={ALTERED!r}))
a = lv.audit(t, runner, prompt=PROMPT)
v = lv.LogprobView(t)
v""",
    'print(f"selected={v.selected}; kind={a.kind}; positions={[q[\'index\'] for q in a.positions]}")',
    """\
raw = lv.read(body())
lv.audit(raw, runner, prompt=PROMPT)
lv.LogprobView(raw)""",
    'lv.LogprobView(lv.Trace(tokens=[" The", " answer", " is", " 42"], logprobs=[math.nan] * 4))',
]


def pinned(root) -> int:
    return int(root.locator(".lv-token.lv-pinned").get_attribute("data-index"))


def test_the_badge_steps_through_the_disagreeing_tokens(page, lab_server, browser):
    write_notebook(lab_server, "badge.ipynb", CELLS)
    open_notebook(page, lab_server, "badge.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-badge", MODEL_TIMEOUT)
    python_prints(page, lab_server, 1, f"kind=mismatch; positions={ALTERED}")  # the audit itself
    root = cell(page, 0).locator(".lv-root")
    badge = root.locator(".lv-badge")
    assert badge.text_content() == "3 tokens disagree"
    assert "lv.audit: 3 of 12 tokens disagree" in badge.get_attribute("title")
    for step, want in enumerate([*ALTERED, ALTERED[0]]):  # the fourth click wraps to the first
        badge.click()
        page.wait_for_function("([root, i]) => root.querySelector('.lv-token.lv-pinned')?.dataset.index === String(i)",
                               arg=[root.element_handle(), want], timeout=10_000)
        assert badge.text_content() == f"3 tokens disagree \u00b7 {step % 3 + 1}/3 \u25b8"
        python_prints(page, lab_server, 1, f"selected={want};")
        assert pinned(root) == want
    badge.click()  # back on the second disagreeing token for the pictures: its chart beside the text
    page.wait_for_function("root => root.querySelector('.lv-token.lv-pinned')?.dataset.index === '6'",
                           arg=root.element_handle(), timeout=10_000)
    next_frames(page)
    save_screenshot(page, "badge_mismatch.png", ".lv-root:visible")
    dark_screenshot(page, root, "badge_mismatch_dark.png")

    run_cell(page, 2)
    wait_for_output(page, lab_server, 2, ".lv-root .lv-badge", 180)
    raw = cell(page, 2).locator(".lv-root")
    assert raw.locator(".lv-badge").text_content() == "raw"
    assert raw.locator(".lv-numbers").text_content() == "logprobs as the model gave them"
    run_cell(page, 3)
    wait_for_output(page, lab_server, 3, ".lv-root .lv-no-logprobs", 180)
    none = cell(page, 3).locator(".lv-root")
    assert none.locator(".lv-no-logprobs").text_content() == "the provider returned no logprobs"
    assert none.locator(".lv-token").count() == 4  # the text still shows
    assert none.locator(".lv-jump").is_hidden()  # no least-confident token to jump to
    next_frames(page)
    raw.screenshot(path=str(ARTIFACTS / "badge_raw.png"), animations="disabled")
    none.screenshot(path=str(ARTIFACTS / "badge_no_logprobs.png"), animations="disabled")

    with projector_page(browser, lab_server, "badge.ipynb") as small:
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(small, 0)
        wait_for_output(small, lab_server, 0, ".lv-root .lv-badge", MODEL_TIMEOUT)
        big = cell(small, 0).locator(".lv-root")
        big.locator(".lv-badge").click()
        small.wait_for_function("root => root.querySelector('.lv-token.lv-pinned')?.dataset.index === '2'",
                                arg=big.element_handle(), timeout=10_000)
        big.locator(".lv-served").evaluate("el => el.scrollIntoView({block: 'start'})")
        next_frames(small)
        box = big.locator(".lv-badge").bounding_box()
        assert box and box["x"] + box["width"] <= 853, "the badge runs off a projector's screen"
        screen_shot(small, "badge_projector.png")


def test_an_audit_after_the_view_is_shown_draws_its_badge_there(page, lab_server):
    """The view is on show first, with no badge; a later cell audits its trace: the badge appears in
    that view's output (no second display), the token pinned meanwhile stays pinned, and the text is
    not drawn again (its token elements are the same ones: only the served line is new)."""
    shown_first = CELLS[0].replace("a = lv.audit(t, runner, prompt=PROMPT)\n", "")
    assert shown_first != CELLS[0]
    audit_cell = "a = lv.audit(t, runner, prompt=PROMPT)\nprint(a.kind)"
    write_notebook(lab_server, "badge_later.ipynb", [shown_first, audit_cell])
    open_notebook(page, lab_server, "badge_later.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-token", MODEL_TIMEOUT)
    root = cell(page, 0).locator(".lv-root")
    assert root.locator(".lv-badge").count() == 0
    root.locator(".lv-token[data-index='4']").click()
    page.wait_for_function("root => root.querySelector('.lv-token.lv-pinned')?.dataset.index === '4'",
                           arg=root.element_handle(), timeout=10_000)
    root.locator(".lv-token[data-index='0']").evaluate("e => { e.lvProbe = true; }")  # a mark a redraw would lose
    python_prints(page, lab_server, 1, "mismatch", timeout=180)
    badge = cell(page, 0).locator(".lv-root .lv-badge")
    badge.wait_for(state="visible", timeout=60_000)
    assert badge.text_content() == "3 tokens disagree"
    assert pinned(cell(page, 0).locator(".lv-root")) == 4
    assert root.locator(".lv-token[data-index='0']").evaluate("e => e.lvProbe === true"), "the text was drawn again"
    next_frames(page)
    save_screenshot(page, "badge_after_display.png", ".lv-root:visible")
