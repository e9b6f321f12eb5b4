""""why?" in the LogprobView, in a real JupyterLab + chromium, on the real default model.

The notebook scores a text, makes a view with the runner, and writes to why.json what an
independent `runner.attribute` call gives (not the view's): the test pins " Neptune", clicks the
"why?" of the " Jupiter" row, and reads each earlier token's score from the page (its
`data-attribution`). A second method gives the rank agreement, checked against the test's own
Spearman. The text never moves (the pinned token's position is measured before and after each
step); a hostile token in the attributed text is shown, never run; a busy kernel gives a wait,
then "no answer", then the late answer. Screenshots: normal, dark, 1280x720 at 150 %.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from browser.lab import (
    MODEL_TIMEOUT,
    cell,
    dark_screenshot,
    open_notebook,
    projector_page,
    run_cell,
    save_screenshot,
    screen_shot,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

PROMPT = ("Q: <script>alert(1)</script> What is the largest planet in the solar system?\n"
          "A: The largest planet in the solar system is")

SETUP_CELL = f"""\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
t = runner.score({PROMPT!r} + " Neptune", top_logprobs=5)
at = t.tokens.index(" Neptune")
jupiter = runner.tokenizer(" Jupiter", add_special_tokens=False)["input_ids"][0]
ref = {{m: runner.attribute(t, at=at, contrast=jupiter, method=m).scores.tolist()
        for m in ("gradient_x_input", "occlusion")}}
pathlib.Path("why.json").write_text(json.dumps({{"at": at, "tokens": t.tokens, "ref": ref}}))
v = lv.LogprobView(t, runner=runner)
v"""
AGAIN_CELL = "v"
BUSY_CELL = "import time\nv.why_timeout_s = 2\ntime.sleep(10)\nprint('slept')"


def position(root, i: int) -> tuple[float, float]:
    """Token i's place in the view's text box (the page may scroll: that is not the text moving)."""
    return tuple(root.locator(f".lv-token[data-index='{i}']").evaluate(
        "el => { const r = el.getBoundingClientRect(), box = el.closest('.lv-text').getBoundingClientRect();"
        " return [r.left - box.left, r.top - box.top]; }"))


def spearman(a, b) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))  # ranks (no ties in these scores)
    return float(np.corrcoef(ra, rb)[0, 1])


def close(shown, expected) -> None:
    """The page's scores (float32 on the wire) equal the kernel's own float64 ones."""
    np.testing.assert_allclose(shown, expected, rtol=1e-5, atol=1e-6 * np.abs(expected).max())


def shown_scores(root, n: int) -> list[float]:
    values = root.locator(".lv-token[data-attribution]").evaluate_all(
        "els => els.map(e => [+e.dataset.index, +e.dataset.attribution])")
    return [v for _, v in sorted(values)][:n] if len(values) == n else values


def jupiter_row(root):
    return root.locator(".lv-chart .lv-alt-row").filter(has_text="Jupiter").first


@pytest.fixture
def why_notebook(lab_server):
    (lab_server.root / "why.json").unlink(missing_ok=True)
    write_notebook(lab_server, "why.ipynb", [SETUP_CELL, AGAIN_CELL, BUSY_CELL])
    return "why.ipynb"


def test_why_colours_the_earlier_text_by_the_kernels_scores_without_moving_it(page, browser, lab_server, why_notebook):
    open_notebook(page, lab_server, why_notebook)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-panel.lv-sized", MODEL_TIMEOUT)
    got = json.loads((lab_server.root / "why.json").read_text())
    at, ref = got["at"], got["ref"]
    root = cell(page, 0).locator(".lv-root")
    start = position(root, at)

    root.locator(f".lv-token[data-index='{at}']").click()
    root.locator(".lv-why .lv-why-ask").wait_for(timeout=10_000)
    assert position(root, at) == start, "pinning moved the text"
    assert "w why?" in root.locator(".lv-pin-note").inner_text()
    jupiter_row(root).hover()
    jupiter_row(root).locator(".lv-why-row").click()
    root.locator(".lv-why-legend").wait_for(timeout=120_000)
    assert position(root, at) == start, "the answer moved the text"
    scores = shown_scores(root, at)
    close(scores, ref["gradient_x_input"])
    legend = root.locator(".lv-why-legend").inner_text()
    assert "Jupiter" in legend and "Neptune" in legend
    # The hostile token of the prompt is coloured too, and shown as text.
    script = [i for i, tok in enumerate(got["tokens"][:at]) if "script" in tok]
    assert script and root.locator(f".lv-token[data-index='{script[0]}']").get_attribute("data-attribution")
    assert root.locator("script, img, iframe").count() == 0

    # A second method, the same question (`w` with the Jupiter row under the pointer).
    root.locator(".lv-why-method").select_option("occlusion")
    jupiter_row(root).locator(".lv-alt-token").click()
    page.keyboard.press("w")
    agree = root.locator(".lv-why-agree")
    agree.wait_for(timeout=120_000)
    rho = float(agree.get_attribute("data-rho"))
    assert abs(rho - spearman(ref["gradient_x_input"], ref["occlusion"])) < 1e-6
    assert (root.locator(".lv-why-disagree").count() == 1) == (rho < 0.5)
    close(shown_scores(root, at), ref["occlusion"])
    assert position(root, at) == start
    news = page.get_by_role("button", name="No", exact=True)  # JupyterLab's "news?" toast covers the view
    if news.count():
        news.first.click()
    root.scroll_into_view_if_needed()
    save_screenshot(page, "why.png")
    dark_screenshot(page, root, "why-dark.png", prop="color")
    projector_screenshot(browser, lab_server)

    # Esc: the probability colours are back, the text where it was.
    root.locator(".lv-header").click()  # focus in the view
    page.keyboard.press("Escape")
    root.locator(".lv-token[data-attribution]").first.wait_for(state="detached", timeout=10_000)
    assert root.locator(".lv-why-legend").count() == 0
    assert position(root, at) == start
    assert not page.page_errors, page.page_errors


def test_a_busy_kernel_gives_a_wait_then_no_answer_then_the_late_answer(page, lab_server, why_notebook):
    open_notebook(page, lab_server, why_notebook)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-panel.lv-sized", MODEL_TIMEOUT)
    at = json.loads((lab_server.root / "why.json").read_text())["at"]
    root = cell(page, 0).locator(".lv-root")
    run_cell(page, 2)  # the kernel sets a 2 s timeout, then sleeps 10 s: the request waits behind it
    page.wait_for_timeout(300)  # (the trait change reaches the page before the click)
    root.locator(f".lv-token[data-index='{at - 2}']").click()
    page.keyboard.press("w")
    root.locator(".lv-why-wait, .lv-why-late").first.wait_for(timeout=10_000)
    assert "asking the kernel" in root.locator(".lv-why-status").inner_text() or root.locator(".lv-why-late").count()
    late = root.locator(".lv-why-late")
    late.wait_for(timeout=20_000)
    assert "no answer from the kernel after" in late.inner_text()
    wait_cell_done(page, 2, timeout=60)
    root.locator(".lv-why-legend").wait_for(timeout=120_000)
    assert late.count() == 0
    assert root.locator(".lv-token[data-attribution]").count() == at - 2
    assert not page.page_errors, page.page_errors


def projector_screenshot(browser, lab_server) -> None:
    """A 1280x720 screen at 150 % zoom (853x480 CSS pixels at device scale 1.5): the same view again."""
    with projector_page(browser, lab_server, "why.ipynb") as small:
        run_cell(small, 1)
        wait_for_output(small, lab_server, 1, ".lv-root .lv-why-legend", 120)
        root = cell(small, 1).locator(".lv-root")
        assert root.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), "nothing overflows sideways"
        root.scroll_into_view_if_needed()
        screen_shot(small, "why-projector-screen.png")
        root.locator(".lv-why-legend").scroll_into_view_if_needed()
        screen_shot(small, "why-projector.png")


DECIDED_CELL = """\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
lens = runner.lens("The capital of France is Paris. <b>The</b> capital of Germany is Berlin.", top_logprobs=3)
pathlib.Path("decided.json").write_text(json.dumps({"ranks": lens.ranks.tolist(), "layers": lens.layers.tolist(),
    "final_ranks": lens.trace.ranks.tolist()}))
lv.LogprobView(lens.trace, lens=lens, color_mode="decided")"""


def test_the_decided_mode_colours_each_token_by_the_layer_it_stays_the_top_guess_from(page, lab_server):
    (lab_server.root / "decided.json").unlink(missing_ok=True)
    write_notebook(lab_server, "decided.ipynb", [DECIDED_CELL])
    open_notebook(page, lab_server, "decided.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-panel.lv-sized", MODEL_TIMEOUT)
    got = json.loads((lab_server.root / "decided.json").read_text())
    ranks, layers = np.array(got["ranks"]), got["layers"]
    n = ranks.shape[1]
    # Independent: the first layer from which the token is the top guess at every later layer and at the output.
    decided = [-1] * n
    for i in range(1, n):
        for row in range(len(layers)):
            if (ranks[row:, i] == 1).all() and got["final_ranks"][i] == 1:
                decided[i] = layers[row]
                break
    root = cell(page, 0).locator(".lv-root")
    colours = root.locator(".lv-token").evaluate_all(
        "els => els.map(e => [+e.dataset.index, getComputedStyle(e).backgroundColor])")
    colour = dict(colours)
    assert colour[next(i for i in range(1, n) if decided[i] == -1)] == "rgb(213, 94, 0)"  # "never", its own colour
    assert all(colour[i] == "rgb(213, 94, 0)" for i in range(1, n) if decided[i] == -1)
    by_layer = {}
    for i in range(1, n):
        if decided[i] >= 0:
            by_layer.setdefault(decided[i], set()).add(colour[i])
    assert all(len(c) == 1 for c in by_layer.values()), by_layer  # one colour per layer
    assert len({next(iter(c)) for c in by_layer.values()}) == len(by_layer)  # and a different one for each
    assert "never" in root.locator(".lv-legend").inner_text()
    assert root.locator(".lv-mode").input_value() == "decided"
    assert root.locator("b, script").count() == 0
    save_screenshot(page, "why-decided.png")
    assert not page.page_errors, page.page_errors
