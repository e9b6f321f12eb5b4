"""One RL rollout's view (`rollouts.view(i, vocab=)`, issue 44) in a real JupyterLab and chromium: the
default model samples (the engine, side a) and the same model in bfloat16 rescores the tokens (the
trainer, side b). Hovering each token outside the clip band shows both sides' logprob and p, Δ, the
ratio and k1, k2, k3; each is checked against a float64 loop over the two raw logprob lists, written
in the kernel (not the record's arrays). "next outside" walks the outside tokens (Python's `selected`
follows). 1400x900 light, and a projector (853x480) dark. A token text that is markup stays text.
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

CLIP = 1.005
TRAP = '<img src=x onerror="window.__pwned=1">'

VIEW_CELL = f"""\
import json, math
import logprob_viz as lv
engine, trainer = lv.load(), lv.load(dtype="bfloat16")
ids, lp_a, lp_b = [], [], []
for n, prompt in enumerate(["Once upon a time", "The capital of France is"]):
    t = engine.generate(prompt, max_new_tokens=24, temperature=1.0, seed=n)
    s = trainer.score(prompt_ids=list(t.token_ids))
    ids.append([int(x) for x in t.token_ids[t.prompt_len:]])
    lp_a.append([float(x) for x in t.logprobs[t.prompt_len:]])
    lp_b.append([float(x) for x in s.logprobs[t.prompt_len:]])
vocab = [engine.tokenizer.decode([i]) for i in range(len(engine.tokenizer))]
vocab[ids[1][0]] = {TRAP!r}  # a token text that is markup: shown as text
r = lv.Divergence.from_logprobs(ids, lp_a, lp_b, rewards=[0.0, 1.0], clip={CLIP})
v = r.view(1, vocab=vocab, labels=["engine", "trainer"])
v"""

# From the two raw lists alone: each token's numbers and the rollout's figures, float64.
REF_CELL = f"""\
a, b = lp_a[1], lp_b[1]
d = [y - x for x, y in zip(a, b)]
out = [j for j, x in enumerate(d) if not 1 / {CLIP} <= math.exp(x) <= {CLIP}]
print("REF " + json.dumps({{"tokens": [vocab[t] for t in ids[1]], "a": a, "b": b, "delta": d, "outside": out,
      "mean_abs": sum(abs(x) for x in d) / len(d), "max_abs": max(abs(x) for x in d),
      "share": len(out) / len(d), "k3": sum(math.exp(x) - 1 - x for x in d) / len(d)}}))"""

SHOWS_INDEX = "([el, i]) => el.dataset.index === String(i)"


def _number(text: str) -> float:
    return float(text.replace("\u2212", "-").replace("+", ""))


def _check_token(root, i: int, ref: dict) -> None:
    """The panel's numbers for token i against the reference lists (float32 on the wire, 4 digits shown)."""
    value = {k: root.locator(f".lvd-num[data-key='{k}'] .lvd-num-value").text_content()
             for k in ("a", "b", "delta", "ratio", "k1", "k2", "k3")}
    for side in ("a", "b"):
        lp, p = re.fullmatch(r"logprob (\S+) \u00b7 p (\S+)%", value[side]).groups()
        assert float(lp) == pytest.approx(ref[side][i], abs=0.0006), (i, side, value[side])
        if p == "<0.1":  # below a tenth of a percent, the logprob above gives the figure
            assert math.exp(ref[side][i]) < 0.0005, (i, side, value[side])
        else:
            assert float(p) / 100 == pytest.approx(math.exp(ref[side][i]), abs=0.0006), (i, side, value[side])
    delta = ref["delta"][i]
    want = {"delta": delta, "ratio": math.exp(delta), "k1": -delta, "k2": delta * delta / 2,
            "k3": math.expm1(delta) - delta}
    for key, expected in want.items():
        assert _number(value[key]) == pytest.approx(expected, rel=2e-3, abs=1e-12), (i, key, value[key])
    title = root.locator(".lvd-panel-title").text_content()
    assert ("outside" in title) == (i in ref["outside"]), title


def test_hover_next_outside_and_pictures(page, lab_server):
    page.set_viewport_size({"width": 1400, "height": 900})
    write_notebook(lab_server, "rollout.ipynb", [VIEW_CELL, REF_CELL, "print('selected', v.selected)"])
    open_notebook(page, lab_server, "rollout.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvd-root .lvd-tok", MODEL_TIMEOUT)
    ref = printed(page, 1, "REF")
    outside = ref["outside"]
    assert 2 <= len(outside) < len(ref["delta"]), f"bf16 should move some tokens out of the band, not all: {outside}"
    root = cell(page, 0).locator(".lvd-root")
    # each token as text, its whitespace marked (a newline also breaks the line)
    assert root.locator(".lvd-tok").all_text_contents() == [shown(t) + "\n" * t.count("\n") for t in ref["tokens"]]
    assert root.locator(".lvd-text img").count() == 0  # the markup token is text
    stat = {k: root.locator(f".lvd-stat[data-stat='{k}'] .lvd-stat-value").text_content()
            for k in ("mean_abs_delta", "max_abs_delta", "share_outside", "mean_k3", "reward")}
    assert _number(stat["mean_abs_delta"]) == pytest.approx(ref["mean_abs"], rel=1e-3)
    assert _number(stat["max_abs_delta"]) == pytest.approx(ref["max_abs"], rel=1e-3)
    assert _number(stat["mean_k3"]) == pytest.approx(ref["k3"], rel=1e-3)
    assert stat["share_outside"] == f"{100 * ref['share']:.1f}% ({len(outside)} of {len(ref['delta'])})"
    assert stat["reward"] == "1"
    marked = root.locator(".lvd-tok.lvd-flip").evaluate_all("els => els.map(e => Number(e.dataset.index))")
    assert sorted(marked) == outside

    panel = root.locator(".lvd-panel")
    for i in sorted({*outside, 0, len(ref["delta"]) - 1}):
        root.locator(f".lvd-tok[data-index='{i}']").hover()
        page.wait_for_function(SHOWS_INDEX, arg=[panel.element_handle(), i])
        _check_token(root, i, ref)
    save_screenshot(page, "rollout_hover.png", ".lvd-root:visible")

    page.mouse.move(0, 0)
    for want in [*outside, outside[0]]:
        root.locator("button.lvd-next").click()
        page.wait_for_function(SHOWS_INDEX, arg=[panel.element_handle(), want])
        assert root.locator(".lvd-tok.lvd-current").get_attribute("data-index") == str(want)
        _check_token(root, want, ref)
    python_prints(page, lab_server, 2, f"selected {outside[0]}")
    assert page.page_errors == []
    assert page.evaluate("window.__pwned") is None


WIDE_JS = ("el => [...el.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1"
           " && getComputedStyle(e).overflowX !== 'visible').map(e => e.className)")


def test_fits_a_projector_screen_dark(browser, lab_server):
    write_notebook(lab_server, "rollout-small.ipynb", [VIEW_CELL, REF_CELL, 'v.size = "projector"'])
    with projector_page(browser, lab_server, "rollout-small.ipynb") as small:
        small.evaluate("() => { const s = window.jupyterapp.shell; if (!s.leftCollapsed) s.collapseLeft(); }")
        run_cell(small, 0)
        wait_for_output(small, lab_server, 0, ".lvd-root .lvd-tok", MODEL_TIMEOUT)
        ref = printed(small, 1, "REF")
        root = cell(small, 0).locator(".lvd-root").first
        root.scroll_into_view_if_needed()
        with dark_theme(small, root):
            root.locator("button.lvd-next").click()  # the first outside token, kept in the panel
            first = ref["outside"][0]
            small.wait_for_function(SHOWS_INDEX, arg=[root.locator(".lvd-panel").element_handle(), first])
            _check_token(root, first, ref)
            small.mouse.move(0, 0)
            next_frames(small)
            box = root.bounding_box()
            assert box["width"] <= 853 and box["height"] <= 480, box
            assert not root.evaluate(WIDE_JS), "parts that scroll sideways at 853 px"
            screen_shot(small, "rollout_projector_dark.png")
            run_cell(small, 2)
            small.wait_for_function("el => el.classList.contains('lv-size-projector')", arg=root.element_handle())
            next_frames(small)
            assert not root.evaluate(WIDE_JS), "parts that scroll sideways at the projector size"
            root.evaluate("e => e.scrollIntoView({block: 'start'})")
            next_frames(small)
            screen_shot(small, "rollout_projector_size_dark.png")
