""""why?" in the explorer (lv.explore), in a real JupyterLab + chromium, on the real default model.

A person types a prompt and presses Generate; pins a generated token; presses its "why?"
button; then, with an alternative of the chart under the pointer, presses `w` (why this token
rather than that one). After each answer, a cell asks the kernel's own `runner.attribute`
(independently of the view) for the same question on `app.current`, and the scores the page shows
on each earlier token (`data-attribution`) must equal them. Screenshots: normal, dark, and a
1280x720 screen at 150 %.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from browser.lab import (
    ARTIFACTS,
    MODEL_TIMEOUT,
    open_notebook,
    output_text,
    run_cell,
    save_screenshot,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

PROMPT = "Q: What is the largest planet in the solar system?\nA:"
NEW = 6  # greedy tokens: the app's default temperature 0

APP_CELL = f"""\
import logprob_viz as lv
app = lv.explore(max_new_tokens={NEW}, top_logprobs=5)
app"""

# The reference, from the kernel's runner, not from the view: the pinned token's attribution, and
# one per alternative of its chart (row j of the chart is top_ids[at][j]).
REF_CELL = """\
import json
t = app.current
at = t.prompt_len + 2
plain = app.runner.attribute(t, at=at).scores.tolist()
rows = {j: app.runner.attribute(t, at=at, contrast=int(i)).scores.tolist()
        for j, i in enumerate(t.top_ids[at]) if int(i) != int(t.token_ids[at])}
print("REF " + json.dumps({"at": at, "n": len(t), "tokens": list(t.tokens), "plain": plain, "rows": rows,
                           "alts": [app.runner.engine.text_of(int(i)) for i in t.top_ids[at]]}))"""

APP = ".jp-NotebookPanel:not(.lm-mod-hidden) .lv-explore"


def shown_scores(view) -> list[float]:
    """Each earlier token's score as the page holds it, in token order."""
    values = view.locator(".lv-token[data-attribution]").evaluate_all(
        "els => els.map(e => [+e.dataset.index, +e.dataset.attribution])")
    return [v for _, v in sorted(values)]


def close(shown, expected) -> None:
    """The page's scores (float32 on the wire) equal the kernel's own float64 ones."""
    assert len(shown) == len(expected), f"{len(shown)} tokens coloured, {len(expected)} scores in the kernel"
    np.testing.assert_allclose(shown, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


def reference(page) -> dict:
    run_cell(page, 1)
    wait_cell_done(page, 1, timeout=300)
    text = output_text(page, 1)
    line = next((ln for ln in text.splitlines() if ln.startswith("REF ")), None)
    assert line, f"the reference cell printed nothing:\n{text[-3000:]}"
    return json.loads(line[len("REF "):])


def wait_idle(page) -> None:
    """Until the generation has ended: Generate pressable again, Stop not, tokens shown."""
    page.wait_for_function(
        """sel => { const app = document.querySelector(sel); if (!app) return false;
           const b = (l) => [...app.querySelectorAll('button')].find((x) => x.textContent.trim() === l);
           return !b('Generate').disabled && b('Stop').disabled && !!app.querySelector('.lv-root .lv-token'); }""",
        arg=APP, timeout=MODEL_TIMEOUT * 1000)


def test_why_in_the_explorer_colours_the_earlier_text_by_the_kernels_attribution(page, browser, lab_server):
    write_notebook(lab_server, "why-explore.ipynb", [APP_CELL, REF_CELL, "app"])
    open_notebook(page, lab_server, "why-explore.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-explore textarea", MODEL_TIMEOUT)
    page.locator(f"{APP} textarea").fill(PROMPT)
    page.locator(f"{APP} button", has_text="Generate").first.click()
    page.locator(f"{APP} .lv-root .lv-token").first.wait_for(timeout=MODEL_TIMEOUT * 1000)
    wait_idle(page)
    ref = reference(page)
    at, n = ref["at"], ref["n"]
    view = page.locator(f"{APP} .lv-root")
    page.wait_for_function("([sel, n]) => document.querySelectorAll(sel).length === n",
                           arg=[f"{APP} .lv-root .lv-token", n], timeout=30_000)
    assert n == len(ref["tokens"]) and at < n

    # Pin a generated token and press "why?": the earlier text takes the kernel's scores.
    view.locator(f".lv-token[data-index='{at}']").click()
    view.locator(".lv-why .lv-why-ask").click()
    view.locator(".lv-why-legend").wait_for(timeout=180_000)
    close(shown_scores(view), ref["plain"])
    assert view.locator(f".lv-token[data-index='{at}']").get_attribute("data-attribution") is None

    # The contrast from the chart: the first alternative under the pointer, then `w`.
    j = min(int(k) for k in ref["rows"])
    row = view.locator(f".lv-chart[data-index='{at}'] .lv-alt-row:not(.lv-extra)").nth(j)
    view.locator(".lv-header").click()  # the keys go to the view (a click on the row would branch)
    row.hover()
    page.keyboard.press("w")
    legend = view.locator(".lv-why-legend")
    page.wait_for_function(  # the answer is in: the first token's score is no longer the plain question's
        "([el, plain]) => { const a = +el.dataset.attribution;"
        " return el.hasAttribute('data-attribution') && Math.abs(a - plain) > 1e-4 * Math.abs(plain) + 1e-7; }",
        arg=[view.locator(".lv-token[data-index='0']").element_handle(), ref["plain"][0]], timeout=180_000)
    close(shown_scores(view), ref["rows"][str(j)])
    assert ref["alts"][j].strip() in legend.inner_text() and ref["tokens"][at].strip() in legend.inner_text()
    # Asking did not branch: one tree node, the same text.
    assert page.locator(f"{APP} .lv-root .lv-token").count() == n
    assert view.locator("script, img, iframe").count() == 0

    no = page.locator(".Toastify button", has_text="No")  # JupyterLab's "news?" toast
    if no.count():
        no.first.click()
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": 2200})  # the whole app, nothing over it
    try:
        page.locator(APP).scroll_into_view_if_needed()
        save_screenshot(page, "why-explore.png", APP)
        dark_screenshot(page, view)
    finally:
        page.set_viewport_size(size)
    projector_screenshot(browser, lab_server)
    assert not page.page_errors, page.page_errors


def dark_screenshot(page, view) -> None:
    light = view.evaluate("el => getComputedStyle(el).color")
    try:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("([el, light]) => getComputedStyle(el).color !== light",
                               arg=[view.element_handle(), light], timeout=30_000)
        save_screenshot(page, "why-explore-dark.png", APP)
    finally:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)


def projector_screenshot(browser, lab_server) -> None:
    """A 1280x720 screen at 150 % zoom (853x480 CSS pixels at device scale 1.5): the same app again."""
    context = browser.new_context(viewport={"width": 853, "height": 480}, device_scale_factor=1.5)
    small = context.new_page()
    try:
        open_notebook(small, lab_server, "why-explore.ipynb")
        run_cell(small, 2)  # `app` again: the same widget, its attribution kept in the view's state
        wait_for_output(small, lab_server, 2, ".lv-explore .lv-why-legend", 120)
        view = small.locator(f"{APP} .lv-root")
        no = small.locator(".Toastify button", has_text="No")
        if no.count():
            no.first.click()
        view.locator(".lv-why-legend").scroll_into_view_if_needed()
        small.screenshot(path=str(ARTIFACTS / "why-explore-projector.png"))
    finally:
        context.close()
