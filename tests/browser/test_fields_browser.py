"""The fields view in a real JupyterLab + chromium, on a JSON the real default model writes.

The notebook generates a person as JSON (greedy) and writes the trace's `to_dict()` to
fields.json; the test finds each value in the trace's own bytes, computes where its content
begins and its probability (the product over the tokens that cover it) from those arrays, and
checks what the panel shows. Clicking a value pins its first content token in the LogprobView
below, Python sees it, and nothing on the page moves (< 2 px). "What else?" lists the values the
model would have written after each alternative. A value holding markup stays text. Screenshots:
normal size, a 1280x720 screen at 150 % (light and dark), the dark theme (tests/artifacts/fields[-_]*.png).
Each p is the value's own (from its first character), the same number "What else?" lists; a string whose
opening quote is a token of its own shows its p with the quote in the tooltip and the detail.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from browser.cells import HOSTILE_IMG
from browser.expected import expected_percent
from browser.lab import (
    MODEL_TIMEOUT,
    dark_theme,
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

PERSON = [{"role": "user", "content": "Give a JSON object with name, age and city of a person."}]
FIELDS_CELL = f"""\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
t = runner.generate(messages={PERSON!r}, max_new_tokens=60, top_logprobs=5, progress=False)
pathlib.Path("fields.json").write_text(json.dumps(t.to_dict()))
v = t.fields().view(runner=runner)
v"""
STATE_CELL = "print('state', v.panel.selected, v.logprob_view.selected)"
HOSTILE_CELL = f"lv.score(json.dumps({{'html': {HOSTILE_IMG!r}, 'n': 1}})).fields().view()"
ROOT = ".jp-NotebookPanel:visible .jp-OutputArea-output .lvf-root"
BOX = ".jp-NotebookPanel:visible .jp-OutputArea-output .widget-vbox"


def expected_values(trace: dict) -> list[dict]:
    """Each leaf of the completion's JSON: its text, where its content begins and its probability,
    from the trace's own bytes and logprobs (the values are found in order in the bytes)."""
    data = [bytes(b) for b in _token_bytes(trace)]
    ends = np.cumsum([len(b) for b in data])
    starts = ends - np.array([len(b) for b in data])
    joined = b"".join(data)
    completion = joined[int(starts[trace["prompt_len"]]):]
    parsed = json.loads(completion[completion.index(b"{"):completion.rindex(b"}") + 1])
    logprobs = [float(x) for x in trace["logprobs"]]
    out, pos = [], int(starts[trace["prompt_len"]])
    for key, value in parsed.items():
        text = json.dumps(value).encode()
        b0 = joined.index(text, joined.index(json.dumps(key).encode(), pos) + len(key) + 2)
        b1 = b0 + len(text)
        first = int(np.searchsorted(ends, b0, side="right"))
        last = int(np.searchsorted(ends, b1 - 1, side="right"))
        at = int(np.searchsorted(ends, b0 + (1 if isinstance(value, str) else 0), side="right"))
        # p: the value from its first content token to its last (what "What else?" lists); with the
        # opening quote: from the token holding the quote
        out.append({"path": key, "value": text.decode(), "at": at, "first": first, "last": last,
                    "logprob": math.fsum(logprobs[at:last + 1]), "with_quote": math.fsum(logprobs[first:last + 1])})
        pos = b1
    return out


def _token_bytes(trace: dict) -> list:
    from logprob_viz import Trace

    return Trace.from_dict(trace).token_bytes


@pytest.fixture
def fields_notebook(lab_server):
    (lab_server.root / "fields.json").unlink(missing_ok=True)
    write_notebook(lab_server, "fields.ipynb", [FIELDS_CELL, STATE_CELL, HOSTILE_CELL, "v"])
    return "fields.ipynb"


def _boxes(page) -> dict:
    return page.evaluate("""sel => {
      const scroller = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer');
      const at = (q) => {
        const r = document.querySelector(q).getBoundingClientRect();
        return [r.top, r.left];
      };
      return {scroll: scroller ? scroller.scrollTop : null, panel: at(sel + ' .lvf-root'),
              list: at(sel + ' .lvf-list'), view: at(sel + ' .lv-root')};
    }""", ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output")


def test_values_coloured_by_probability_click_pins_the_first_token_without_moving_the_page(
        page, browser, lab_server, fields_notebook):
    open_notebook(page, lab_server, fields_notebook)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvf-root .lvf-row", MODEL_TIMEOUT)
    trace = json.loads((lab_server.root / "fields.json").read_text())
    want = expected_values(trace)
    root = page.locator(ROOT)
    rows = root.locator(".lvf-row").evaluate_all(
        "els => els.map(e => [e.querySelector('.lvf-path').textContent, e.querySelector('.lvf-value').textContent,"
        " e.querySelector('.lvf-p').textContent, !!e.querySelector('.lvf-badge')])")
    least = min(range(len(want)), key=lambda i: want[i]["logprob"])
    assert rows == [[w["path"], w["value"], expected_percent(w["logprob"]), i == least] for i, w in enumerate(want)]
    assert root.locator(".lvf-least .lvf-path").text_content() == want[least]["path"]
    # the head names what p is; a string whose opening quote is a token of its own shows p with the quote too
    assert root.locator(".lvf-legend").text_content() == "p: the value from its first character"
    titles = root.locator(".lvf-row .lvf-p").evaluate_all("els => els.map(e => e.title)")
    quoted = [i for i, w in enumerate(want) if w["at"] > w["first"]]
    assert quoted, want  # the default model writes ' "' as a token of its own before "John Smith"
    for i, (w, title) in enumerate(zip(want, titles, strict=True)):
        n = w["last"] - w["at"] + 1
        over = f"token {w['at'] + 1}" if n == 1 else f"tokens {w['at'] + 1}\u2013{w['last'] + 1} ({n})"
        assert title.startswith(f"p of the value: the product over {over}, from its first character"), title
        assert title.endswith(f"(token {w['first'] + 1}): {expected_percent(w['with_quote'])}") == (i in quoted)
    # each chip is coloured (a background from the palette), its text readable on it
    colours = root.locator(".lvf-value").evaluate_all("els => els.map(e => getComputedStyle(e).backgroundColor)")
    assert all(c.startswith("rgb(") for c in colours) and len(set(colours)) > 1

    # Click a value: its first content token is pinned below, Python knows, nothing moves.
    target = next(i for i, w in enumerate(want) if w["path"] == "age")
    before = _boxes(page)
    root.locator(f".lvf-row[data-row='{target}'] .lvf-value").click()
    page.locator(".jp-NotebookPanel:visible .lv-root .lv-token.lv-pinned").wait_for(timeout=30_000)
    next_frames(page)
    after = _boxes(page)
    for name in ("panel", "list", "view"):
        assert max(abs(a - b) for a, b in zip(after[name], before[name], strict=True)) < 2, (name, before, after)
    assert after["scroll"] == before["scroll"]
    tokens = trace["tokens"]
    pinned = page.locator(".jp-NotebookPanel:visible .lv-root .lv-token.lv-pinned")
    assert pinned.count() == 1 and pinned.text_content() == tokens[want[target]["at"]]
    assert root.locator(".lvf-row.lvf-selected").get_attribute("data-row") == str(target)
    python_prints(page, lab_server, 1, f"state {target} {want[target]['at']}")
    save_screenshot(page, "fields-view.png", BOX)

    # What else would it have put here: a value per alternative, the written one among them.
    root.locator(".lvf-what-else").click()
    root.locator(".lvf-else-row").first.wait_for(timeout=MODEL_TIMEOUT * 1000)
    items = root.locator(".lvf-else-row").evaluate_all(
        "els => els.map(e => [e.querySelector('.lvf-chip').textContent, e.classList.contains('lvf-chosen')])")
    assert 2 <= len(items) <= 5 and [v for v, chosen in items if chosen] == [want[target]["value"]]
    assert all(json.loads(v) is not None for v, _ in items)  # whole values (numbers here)
    assert f"from token {want[target]['at'] + 1} " in root.locator(".lvf-over").text_content()
    save_screenshot(page, "fields-what-else.png", BOX)
    with dark_theme(page, root):
        save_screenshot(page, "fields-dark.png", BOX)

    # A string with its quote apart: the detail shows both p, and "What else?" lists the same p as the list.
    name = quoted[0]
    root.locator(f".lvf-row[data-row='{name}'] .lvf-value").click()
    root.locator(f".lvf-row.lvf-selected[data-row='{name}']").wait_for(timeout=30_000)
    lines = root.locator(".lvf-detail .lvf-line").all_text_contents()
    assert lines[0].startswith(f"p\u00a0{expected_percent(want[name]['logprob'])} ")  # (no line break inside)
    assert lines[2] == (f"with its opening quote (token {want[name]['first'] + 1}): "
                        f"p\u00a0{expected_percent(want[name]['with_quote'])}")
    root.locator(".lvf-what-else").click()
    root.locator(".lvf-else-row").first.wait_for(timeout=MODEL_TIMEOUT * 1000)
    chosen = root.locator(".lvf-else-row.lvf-chosen")
    assert chosen.locator(".lvf-chip").text_content() == want[name]["value"]
    listed = root.locator(f".lvf-row[data-row='{name}'] .lvf-p").text_content()
    assert chosen.locator(".lvf-p").text_content() == listed == expected_percent(want[name]["logprob"])
    save_screenshot(page, "fields_quote.png", BOX)

    # A value that holds markup is text in the page, never run.
    run_cell(page, 2)
    wait_for_output(page, lab_server, 2, ".lvf-root .lvf-row", 120)
    assert page.locator(".jp-NotebookPanel:visible .lvf-root img").count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert json.dumps(HOSTILE_IMG) in page.locator(".jp-NotebookPanel:visible .lvf-root .lvf-value").all_text_contents()

    with projector_page(browser, lab_server, fields_notebook) as small:
        run_cell(small, 3)
        small.locator(ROOT).locator(".lvf-row").first.wait_for(timeout=60_000)
        small.locator(ROOT).scroll_into_view_if_needed()
        screen_shot(small, "fields-150.png")
        with dark_theme(small, small.locator(ROOT)):
            screen_shot(small, "fields_853x480_dark.png")
    assert not page.page_errors, page.page_errors
