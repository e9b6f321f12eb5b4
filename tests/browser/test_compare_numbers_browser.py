"""The compare view's numbers in a real JupyterLab and chromium, as a person reads them: two branches of
the default model, two prompts that share only their first token, and small differences on the a − b scale.

Every number on the page is checked against a sum written here over the traces the kernel wrote to
disk (−Σ log2 p over the tokens of each row's own continuation, over its bytes), not against
logprob_viz's own output. Screenshots (tests/artifacts/): normal size, a 1280x720 screen at 150 %
(853x480 CSS pixels at device scale 1.5), the dark theme.
"""

from __future__ import annotations

import json
import math
import re
import subprocess

import pytest

from browser.expected import expected_marks
from browser.lab import (
    ARTIFACTS,
    HAND_MADE_TIMEOUT,
    MODEL_TIMEOUT,
    cell,
    open_notebook,
    run_cell,
    save_screenshot,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

BRANCHES_CELL = """\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
root = runner.generate("A robot may not injure a human being", max_new_tokens=12, top_logprobs=3)
tree = lv.Tree(root, runner=runner)
at = root.prompt_len + 3
alt = next(int(i) for i in root.top_ids[at] if i >= 0 and i != root.token_ids[at])
branch = tree.branch(at=at, token=alt, max_new_tokens=12, progress=False)
pathlib.Path("branches.json").write_text(json.dumps([root.to_dict(), branch.to_dict()]))
v = lv.compare([root, branch], labels=["#0", "#1"]).view()
v"""

PROMPTS_CELL = """\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
a = runner.score("The cat sat down on the mat.", top_logprobs=3)
c = runner.score("The dog ran off into the night.", top_logprobs=3)
pathlib.Path("prompts.json").write_text(json.dumps([a.to_dict(), c.to_dict()]))
w = lv.compare([a, c], labels=["cat", "dog"]).view()
w"""

OFFSETS = [0.0, 0.15, -0.2, 0.3, -0.1, 0.25, -0.3, 0.12, -0.18, 0.22, -0.05, 0.35]
SMALL_DIFF_CELL = f"""\
import numpy as np
import logprob_viz as lv
toks = [f" w{{i}}" for i in range(12)]
lp_a = -np.linspace(0.5, 2.0, 12)
lp_b = lp_a + np.array({OFFSETS!r})
x = lv.compare([lv.Trace(tokens=toks, logprobs=lp_a), lv.Trace(tokens=toks, logprobs=lp_b)], labels=["a", "b"])
x.view(color_mode="difference")"""


def rows_of(path) -> list[tuple[list[bytes], list[float], list[str]]]:
    """Each trace the kernel wrote: its token bytes, logprobs (NaN where unknown) and token texts."""
    out = []
    for t in json.loads(path.read_text()):
        out.append(([bytes.fromhex(h) for h in t["token_bytes"]], [float(x) for x in t["logprobs"]], t["tokens"]))
    return out


def shared_bytes(rows) -> int:
    """The last byte offset, within the common byte prefix, where every row has a token boundary."""
    texts = [b"".join(r[0]) for r in rows]
    prefix = 0
    while all(prefix < len(t) for t in texts) and len({t[prefix] for t in texts}) == 1:
        prefix += 1
    bounds = []
    for token_bytes, _, _ in rows:
        at, own = 0, {0}
        for b in token_bytes:
            at += len(b)
            own.add(at)
        bounds.append(own)
    return max(c for c in set.intersection(*bounds) if c <= prefix)


def own_part(row, shared: int) -> tuple[float, int, int]:
    """−Σ log2 p, tokens and bytes over the row's tokens from byte `shared` on whose logprob is known."""
    bits, tokens, n_bytes, at = 0.0, 0, 0, 0
    for b, lp in zip(row[0], row[1], strict=True):
        if at >= shared and not math.isnan(lp):
            bits, tokens, n_bytes = bits - lp / math.log(2), tokens + 1, n_bytes + len(b)
        at += len(b)
    return bits, tokens, n_bytes


def header_cells(root, r: int, part: str) -> tuple[str, str, str]:
    row = root.locator(f".lvc-header-row[data-row='{r}']")
    return tuple(row.locator(f".lvc-{name}.lvc-{part}").text_content() for name in ("bpb", "ppl", "over"))


def hover_continuation(page, root, r: int) -> None:
    """Hover the first token of row r's own continuation; wait for the panel to show that row's numbers."""
    root.locator(f".lvc-tail[data-row='{r}'] .lvc-tok").first.hover()
    page.wait_for_function(f"el => el.dataset.span === 'tail' && el.dataset.row === '{r}'",
                           arg=root.locator(".lvc-panel").element_handle(), timeout=10_000)


def rgb(css: str) -> tuple[int, int, int] | None:
    m = re.match(r"rgba?\((\d+), (\d+), (\d+)(, ([\d.]+))?\)", css)
    if not m or (m.group(5) is not None and float(m.group(5)) == 0):
        return None  # transparent
    return tuple(int(x) for x in m.groups()[:3])


def test_two_branches_show_their_own_continuations_numbers(page, lab_server):
    write_notebook(lab_server, "branches.ipynb", [BRANCHES_CELL, "v  # the same view again (a second page)"])
    open_notebook(page, lab_server, "branches.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvc-root .lvc-header", MODEL_TIMEOUT)
    root = cell(page, 0).locator(".lvc-root")
    rows = rows_of(lab_server.root / "branches.json")
    shared = shared_bytes(rows)
    # the aligned part is the shared prefix: one model, one text, so the same number in both rows,
    # over the prefix's bytes but its first token's (no logprob: nothing comes before it)
    assert math.isnan(rows[0][1][0]) and math.isnan(rows[1][1][0])
    aligned_bits, at = 0.0, 0
    for b, lp in zip(rows[0][0], rows[0][1], strict=True):
        if at < shared and not math.isnan(lp):
            aligned_bits -= lp / math.log(2)
        at += len(b)
    expected_aligned = f"{aligned_bits / (shared - len(rows[0][0][0])):.4f}"
    assert [header_cells(root, r, "aligned")[0] for r in (0, 1)] == [expected_aligned] * 2
    own = []
    for r, row in enumerate(rows):
        bits, tokens, n_bytes = own_part(row, shared)
        own.append((bits / n_bytes, 2 ** (bits / tokens), tokens, n_bytes))
        bpb, ppl, over = header_cells(root, r, "own")
        assert (bpb, ppl, over) == (f"{bits / n_bytes:.4f}", f"{2 ** (bits / tokens):.2f}",
                                    f"{tokens} tokens, {n_bytes} bytes"), r
    assert own[0][0] != own[1][0]  # the branches differ where they differ
    assert f"bytes after the first {shared})" in root.locator(".lvc-header").text_content()
    assert "?" not in root.locator(".lvc-header").text_content()

    # hovering a continuation shows its numbers (and the other row's beside them), and the token hovered
    hover_continuation(page, root, 1)
    panel = root.locator(".lvc-panel")
    for r in (0, 1):
        said = panel.locator(f".lvc-col[data-row='{r}'] .lvc-own-sum").text_content()
        assert said.startswith(f"{own[r][0]:.4f} bits/byte · perplexity {own[r][1]:.2f}"), said
        assert f"over {own[r][2]} tokens, {own[r][3]} bytes" in said
    at, tail_from = 0, None
    for i, b in enumerate(rows[1][0]):
        if at >= shared and tail_from is None:
            tail_from = i
        at += len(b)
    assert panel.locator(".lvc-col-hovered .lvc-token-text").text_content() == expected_marks(rows[1][2][tail_from])
    assert root.locator(".lvc-tail[data-row='1']").evaluate("e => e.classList.contains('lvc-hl-tail')")
    save_screenshot(page, "compare-branches.png", ".lvc-root:visible")

    # the fork glyph is one Debian chromium's fonts have (U+2442, before, was a missing-glyph box)
    fork = root.locator(".lvc-tail[data-row='1'] .lvc-fork").text_content()
    glyph = fork[0]
    assert glyph == "\u21b3" and fork.endswith("own continuation:")
    fonts = subprocess.run(["fc-list", f":charset={ord(glyph):x}", "family"], capture_output=True, text=True)
    assert "DejaVu Sans" in fonts.stdout, fonts.stdout

    # difference mode: the prefix is 0 and the view says so; the continuations keep their colours
    root.locator("select.lvc-mode").select_option("difference")
    page.wait_for_function("el => el.classList.contains('lvc-mode-diff')", arg=root.element_handle())
    assert "give the same logprob on every aligned span" in root.locator(".lvc-diff-note").text_content()
    tail = root.locator(".lvc-tail[data-row='1'] .lvc-tok")
    colours = {rgb(tail.nth(i).evaluate("e => getComputedStyle(e).backgroundColor")) for i in range(tail.count())}
    assert None not in colours and len(colours) > 1, colours
    dark_and_projector(page, root, lab_server)
    assert page.page_errors == []


def dark_and_projector(page, root, lab_server) -> None:
    light = root.evaluate("el => getComputedStyle(el).color")
    try:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
        page.wait_for_function("([el, light]) => getComputedStyle(el).color !== light",
                               arg=[root.element_handle(), light], timeout=30_000)
        hover_continuation(page, root, 0)
        save_screenshot(page, "compare-branches-dark.png", ".lvc-root:visible")
    finally:
        page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'", timeout=30_000)
    context = page.context.browser.new_context(viewport={"width": 853, "height": 480}, device_scale_factor=1.5)
    small = context.new_page()
    try:
        open_notebook(small, lab_server, "branches.ipynb")  # the same kernel
        run_cell(small, 1)  # its view again, in this page
        wait_for_output(small, lab_server, 1, ".lvc-root .lvc-header", HAND_MADE_TIMEOUT)
        small_root = cell(small, 1).locator(".lvc-root")
        no = small.get_by_role("button", name="No", exact=True)  # JupyterLab's "news?" toast
        if no.count():
            no.first.click()
        small.screenshot(path=str(ARTIFACTS / "compare-branches-150.png"))
        wide = small_root.evaluate("""el => { const box = el.querySelector('.lvc-header-box');
            return [el.scrollWidth, el.clientWidth, box.scrollWidth, box.clientWidth, getComputedStyle(box).overflowX,
              getComputedStyle(box).width, ...[...el.querySelectorAll('*')].filter((e) => !e.closest('.lvc-header-box')
              && e.getBoundingClientRect().right > el.getBoundingClientRect().right + 1)
            .slice(0, 5).map((e) => e.className + ' ' + Math.round(e.getBoundingClientRect().width))]; }""")
        assert small_root.evaluate("el => el.scrollWidth <= el.clientWidth + 1"), f"nothing overflows sideways: {wide}"
        small_root.locator(".lvc-tail[data-row='1']").scroll_into_view_if_needed()
        hover_continuation(small, small_root, 1)
        small.screenshot(path=str(ARTIFACTS / "compare-branches-150.png"))
    finally:
        context.close()


def test_two_prompts_say_why_nothing_aligned_and_score_their_continuations(page, lab_server):
    write_notebook(lab_server, "prompts.ipynb", [PROMPTS_CELL])
    open_notebook(page, lab_server, "prompts.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvc-root .lvc-header", MODEL_TIMEOUT)
    root = cell(page, 0).locator(".lvc-root")
    rows = rows_of(lab_server.root / "prompts.json")
    shared = shared_bytes(rows)
    assert shared == len(b"The")
    header = root.locator(".lvc-header").text_content()
    assert "?" not in header
    for r in (0, 1):
        bpb, ppl, over = header_cells(root, r, "aligned")
        assert (bpb, ppl, over) == ("\u2013", "\u2013", "nothing to compare")
        assert "nothing aligned can be compared" in root.locator(
            f".lvc-header-row[data-row='{r}'] .lvc-bpb.lvc-aligned").get_attribute("title")
        bits, tokens, n_bytes = own_part(rows[r], shared)
        assert header_cells(root, r, "own") == (f"{bits / n_bytes:.4f}", f"{2 ** (bits / tokens):.2f}",
                                                f"{tokens} tokens, {n_bytes} bytes")
    caption = root.locator(".lvc-caption").text_content().lower()
    assert "nothing aligned can be compared" in caption and "over='own'" in caption
    hover_continuation(page, root, 0)
    bits, tokens, n_bytes = own_part(rows[0], shared)
    said = root.locator(".lvc-panel .lvc-col[data-row='0'] .lvc-own-sum").text_content()
    assert said.startswith(f"{bits / n_bytes:.4f} bits/byte") and f"{tokens} tokens, {n_bytes} bytes" in said
    save_screenshot(page, "compare-prompts.png", ".lvc-root:visible")
    assert page.page_errors == []


def test_small_differences_are_not_drawn_grey(page, lab_server):
    write_notebook(lab_server, "small-diff.ipynb", [SMALL_DIFF_CELL])
    open_notebook(page, lab_server, "small-diff.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvc-root.lvc-mode-diff", HAND_MADE_TIMEOUT)
    root = cell(page, 0).locator(".lvc-root")
    neutral = (247, 247, 247)  # the scale's middle: no difference
    far = []
    for s, offset in enumerate(OFFSETS):
        d = 0.0 - offset + 0.0  # logprob(a) − logprob(b) (not -0.0), span s is token s (one tokenizer)
        el = root.locator(f".lvc-row[data-row='0'] .lvc-span[data-span='{s}']")
        assert el.get_attribute("data-diff") == f"{d:.4f}"
        colour = rgb(el.evaluate("e => getComputedStyle(e).backgroundColor"))
        distance = max(abs(a - b) for a, b in zip(colour, neutral, strict=True))
        if abs(d) >= 0.15:
            far.append(distance)
            side = colour[0] > colour[2] if d > 0 else colour[2] > colour[0]  # orange: a likelier; purple: b
            assert side, (s, d, colour)
    assert min(far) >= 25, far  # at the old fixed ±4 nats these were all the neutral grey
    assert "0.50 nats" in root.locator(".lvc-legend").text_content()  # the scale follows the data
    save_screenshot(page, "compare-small-differences.png", ".lvc-root:visible")
    assert page.page_errors == []
