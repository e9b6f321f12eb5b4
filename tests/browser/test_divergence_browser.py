"""The divergence view (issue 44) in a real JupyterLab and chromium, as a person uses it: the default model
against itself loaded in bfloat16, one text. Hovering a flipped token shows the base's and the candidate's
alternatives side by side in one token order; the two columns' numbers are checked against the record's
own arrays (printed by the kernel: the record's numbers are checked against float64 logits elsewhere).
"next flip" walks the flips (Python's `selected` follows); the view fits a projector screen, light and dark.
"""

from __future__ import annotations

import math
import re

import pytest

from browser.lab import (
    MODEL_TIMEOUT,
    cell,
    dark_theme,
    next_frames,
    open_notebook,
    printed,
    projector_page,
    python_prints,
    run_cell,
    save_screenshot,
    screen_shot,
    wait_for_output,
    write_notebook,
)
from logprob_viz.views.whitespace import shown

pytestmark = pytest.mark.browser

TEXT = "The quick brown fox jumps over the lazy dog. Then it ran into the forest, where <b>nobody</b> could find it."

VIEW_CELL = f"""\
import json, math
import numpy as np
import logprob_viz as lv
d = lv.divergence(lv.load(), lv.load(dtype="bfloat16"), {TEXT!r}, cutoff=None)
v = d.view()
v"""

# Per flip: the expected rows of the hover table, from the record's arrays (not the view's payload).
REF_CELL = """\
a = d.arrays
def rows(i):
    base = {int(t): float(lp) for t, lp in zip(a["base_alt_ids"][i], a["base_alt_logprobs"][i]) if t >= 0}
    cand = {int(t): float(lp) for t, lp in zip(a["cand_alt_ids"][i], a["cand_alt_logprobs"][i]) if t >= 0}
    y = int(d.token_ids[i])
    base[y], cand[y] = float(a["base_logprob"][i]), float(a["cand_logprob"][i])
    return [[d.vocab[t], base.get(t), cand.get(t)] for t in dict.fromkeys([*base, *cand])]
s = d.summary()
print("REF " + json.dumps({"flips": d.flips.tolist(), "rows": {int(i): rows(i) for i in d.flips},
      "tokens": d.tokens, "mean_kld": s["mean_kld"], "same_top": s["same_top"], "ppl_ratio": s["ppl_ratio"],
      "scored": s["tokens"], "kld": {int(i): float(a["kld_low"][i]) for i in d.flips},
      "delta_p": {int(i): float(a["delta_p"][i]) for i in d.flips}}))"""


def _percent(text: str) -> float | None:
    """A shown probability ("25.0%", "<0.1%") as a fraction; None for a bound or unknown ("≤1.0%", "?")."""
    if text.startswith("\u2264") or text == "?":
        return None
    return 0.0005 if text == "<0.1%" else float(text.rstrip("%")) / 100


SHOWS_INDEX = "([el, i]) => el.dataset.index === String(i)"  # the panel shows position i


def _check_hover(root, page, i: int, ref: dict) -> None:
    root.locator(f".lvd-tok[data-index='{i}']").hover()
    page.wait_for_function(SHOWS_INDEX, arg=[root.locator(".lvd-panel").element_handle(), i])
    want = ref["rows"][str(i)]
    panel = root.locator(".lvd-panel")
    assert panel.locator(".lvd-alt-text").all_text_contents() == [shown(t) for t, _, _ in want]
    base, cand, dps = (panel.locator(sel).all_text_contents() for sel in (".lvd-p-base", ".lvd-p-cand", ".lvd-dp"))
    for (name, b, c), pb, pc, dp in zip(want, base, cand, dps, strict=True):
        for lp, got in ((b, pb), (c, pc)):
            if lp is None:
                assert got.startswith("\u2264"), (name, got)  # not listed by that side: a bound, not a value
            elif math.exp(lp) >= 0.001:
                assert _percent(got) == pytest.approx(math.exp(lp), abs=0.0006), (name, got, lp)
        if b is not None and c is not None:
            d = float(dp.replace("\u2212", "-").rstrip("%")) / 100
            assert d == pytest.approx(math.exp(c) - math.exp(b), abs=0.00006), (name, dp)
        else:
            assert dp == "?"
    # the title: this token's KL (exact here: one number) and Δp
    title = panel.locator(".lvd-panel-title").text_content()
    kl = float(re.search(r"KL ([0-9.e-]+) nats", title).group(1))
    assert kl == pytest.approx(ref["kld"][str(i)], rel=1e-3) and "flip" in title


def test_hover_next_flip_and_pictures(page, lab_server, browser):
    write_notebook(lab_server, "divergence.ipynb", [VIEW_CELL, REF_CELL, "print('selected', v.selected)"])
    open_notebook(page, lab_server, "divergence.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvd-root .lvd-tok", MODEL_TIMEOUT)
    ref = printed(page, 1, "REF")
    flips = ref["flips"]
    assert len(flips) >= 2, f"this text should flip at least twice between fp32 and bf16: {flips}"
    root = cell(page, 0).locator(".lvd-root")
    # the text is the tokens, as text (the <b> of the text is not an element)
    assert root.locator(".lvd-tok").all_text_contents() == [shown(t) for t in ref["tokens"]]
    assert root.locator(".lvd-text b").count() == 0
    # the header: the summary's figures
    stat = {k: root.locator(f".lvd-stat[data-stat='{k}'] .lvd-stat-value").text_content()
            for k in ("mean_kld", "same_top", "ppl_ratio", "flips")}
    assert float(stat["mean_kld"].split()[0]) == pytest.approx(ref["mean_kld"], rel=1e-3)
    assert stat["same_top"] == f"{100 * ref['same_top']:.1f}%"
    assert stat["flips"] == f"{len(flips)} of {ref['scored']}"
    assert float(stat["ppl_ratio"]) == pytest.approx(ref["ppl_ratio"], abs=1e-4)
    marked = root.locator(".lvd-tok.lvd-flip").evaluate_all("els => els.map(e => Number(e.dataset.index))")
    assert sorted(marked) == flips

    for i in flips:
        _check_hover(root, page, i, ref)
    save_screenshot(page, "divergence_hover.png", ".lvd-root:visible")

    # next flip walks them in order, wrapping round; Python's selected follows
    page.mouse.move(0, 0)
    for want in [*flips, flips[0]]:
        root.locator("button.lvd-next").click()
        page.wait_for_function(SHOWS_INDEX, arg=[root.locator(".lvd-panel").element_handle(), want])
        assert root.locator(".lvd-tok.lvd-current").get_attribute("data-index") == str(want)
    python_prints(page, lab_server, 2, f"selected {flips[0]}")

    # |Δp| colouring: the select switches the trait, the legend and the tokens' colours
    classes = "els => els.map(e => e.className)"
    by_kl = root.locator(".lvd-tok").evaluate_all(classes)
    root.locator("select.lvd-mode").select_option("delta_p")
    legend = root.locator(".lvd-legend").element_handle()
    page.wait_for_function("el => el.textContent.includes('|\u0394p|')", arg=legend)
    assert root.locator(".lvd-tok").evaluate_all(classes) != by_kl
    root.locator("select.lvd-mode").select_option("kld")
    with dark_theme(page, root):
        next_frames(page)
        save_screenshot(page, "divergence_dark.png", ".lvd-root:visible")
    assert page.page_errors == []
    assert page.evaluate("window.__pwned") is None


WIDE_JS = ("el => [...el.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1"
           " && getComputedStyle(e).overflowX !== 'visible').map(e => e.className)")


def test_fits_a_projector_screen(page, lab_server, browser):
    write_notebook(lab_server, "divergence-small.ipynb", [VIEW_CELL, 'v.size = "projector"'])
    with projector_page(browser, lab_server, "divergence-small.ipynb") as small:
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(small, 0)
        wait_for_output(small, lab_server, 0, ".lvd-root .lvd-tok", MODEL_TIMEOUT)
        root = cell(small, 0).locator(".lvd-root").first
        root.scroll_into_view_if_needed()
        root.locator("button.lvd-next").click()  # the first flip, kept in the panel (a hover would leave)
        small.wait_for_function("el => el.dataset.index !== '-1'", arg=root.locator(".lvd-panel").element_handle())
        small.mouse.move(0, 0)
        next_frames(small)
        box = root.bounding_box()
        assert box["width"] <= 853 and box["height"] <= 480, box  # whole on the screen
        wide = root.evaluate(WIDE_JS)
        assert not wide, f"parts that scroll sideways at 853 px: {wide}"
        screen_shot(small, "divergence_projector.png")
        with dark_theme(small, root):
            next_frames(small)
            screen_shot(small, "divergence_projector_dark.png")
        # the view's own size for a class: every text 1.25 times, still nothing scrolling sideways
        token_px = "el => parseFloat(getComputedStyle(el.querySelector('.lvd-tok')).fontSize)"
        normal = root.evaluate(token_px)
        run_cell(small, 1)
        small.wait_for_function("el => el.classList.contains('lv-size-projector')", arg=root.element_handle())
        next_frames(small)
        assert root.evaluate(token_px) == pytest.approx(1.25 * normal, abs=0.01)
        assert not root.evaluate(WIDE_JS), "parts that scroll sideways at the projector size"
        root.evaluate("e => e.scrollIntoView({block: 'start'})")
        next_frames(small)
        screen_shot(small, "divergence_projector_size.png")


RANGE_CELL = f"""\
import json, math
import logprob_viz as lv
half = lv.load(dtype="bfloat16")
d = lv.divergence(lv.load(), half.score({TEXT!r}, top_logprobs=3), {TEXT!r}, cutoff=None)
i = max((j for j in range(len(d)) if d.kld_low[j] != d.kld_high[j] and not math.isnan(d.kld_low[j])),
        key=lambda j: d.kld_low[j])
print("REF " + json.dumps({{"i": i, "low": d.kld_low[i], "high": None if math.isinf(d.kld_high[i]) else d.kld_high[i],
      "mean": list(d.summary()["mean_kld"])}}))
d"""


def test_a_top_k_candidate_shows_ranges_never_one_number(page, lab_server):
    write_notebook(lab_server, "divergence-range.ipynb", [RANGE_CELL])
    open_notebook(page, lab_server, "divergence-range.ipynb")
    ref = printed(page, 0, "REF")
    root = cell(page, 0).locator(".lvd-root")
    root.locator(".lvd-tok").first.wait_for(timeout=60_000)
    mean = root.locator(".lvd-stat[data-stat='mean_kld'] .lvd-stat-value").text_content()
    low, high = re.fullmatch(r"\[([0-9.e-]+), (\S+)\] nats", mean).groups()
    assert float(low) == pytest.approx(ref["mean"][0], rel=1e-3)
    assert high == "\u221e" if math.isinf(ref["mean"][1]) else float(high) == pytest.approx(ref["mean"][1], rel=1e-3)
    i = ref["i"]
    tok = root.locator(f".lvd-tok[data-index='{i}']")
    assert "lvd-range" in tok.get_attribute("class")  # outlined dashed: its colour is the lower end
    tok.hover()
    page.wait_for_function(SHOWS_INDEX, arg=[root.locator(".lvd-panel").element_handle(), i])
    title = root.locator(".lvd-panel-title").text_content()
    got_low, got_high = re.search(r"KL \[([0-9.e-]+), (\S+)\] nats", title).groups()
    assert float(got_low) == pytest.approx(ref["low"], rel=1e-3)
    assert got_high == "\u221e" if ref["high"] is None else float(got_high) == pytest.approx(ref["high"], rel=1e-3)
    save_screenshot(page, "divergence_range.png", ".lvd-root:visible")
    assert page.page_errors == []
