"""A view that grows while the kernel streams tokens into it, in a real JupyterLab and chromium.

A cell's loop assigns ever longer traces to a displayed `LogprobView` (as a stream of snapshots
does); the page must show tokens before the loop ends, end with the same text and marks as a
view built from the whole trace at once, and the notebook's saved widget state must hold every
token (the stream is folded into the state when it stops).
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

import wire
from browser.lab import (
    HAND_MADE_TIMEOUT,
    WIDGET_VIEW,
    open_notebook,
    python_prints,
    run_cell,
    save_screenshot,
    wait_cell_done,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

N = 3000
START = 10
SAVE_STATE = "@jupyter-widgets/jupyterlab-manager:saveWidgetState"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

# A trace of N tokens, K=4, with characters split across tokens (" 🤖" in three byte pieces) and
# hostile text, written to stream.json; the view starts with its first START tokens.
MAKE_CELL = f"""\
import json, pathlib, time
import numpy as np
import logprob_viz as lv
from logprob_viz.records.tokens import display_token
rng = np.random.default_rng(7)
pieces = [b" the", b" robot", b"\\n", b" \\xf0\\x9f", b"\\xa4", b"\\x96", b" <b>x</b>", b" caf\\xc3\\xa9", b"."]
raw = [pieces[j] for j in rng.integers(0, 3, {N})]
for i in range(40, {N} - 3, 97):  # a split character now and then, sometimes across an append
    raw[i:i + 3] = pieces[3:6]
raw[500] = pieces[6]
tokens = [display_token(b) for b in raw]
top = np.sort(rng.uniform(-6, -0.05, ({N}, 4)), axis=1)[:, ::-1].astype(np.float32)
full = lv.Trace(tokens=tokens, token_bytes=raw, token_ids=rng.integers(0, 500, {N}), logprobs=top[:, 0],
                ranks=np.ones({N}, int), entropy=rng.uniform(0, 3, {N}),
                top_tokens=[[t, " a", " b", " c"] for t in tokens], top_logprobs=top,
                top_ids=rng.integers(0, 500, ({N}, 4)), prompt_len=5, meta={{"model": "stream-test"}})
pathlib.Path("stream.json").write_text(json.dumps(full.to_dict()))
pathlib.Path("stream-done.txt").unlink(missing_ok=True)
v = lv.LogprobView(full[:{START}])
first_id = v._payload["id"]
v"""

STREAM_CELL = f"""\
for n in range({START} + 1, {N} + 1):
    v.trace = full[:n]  # a stream's next snapshot: only the new tokens cross
    time.sleep(0.003)
pathlib.Path("stream-done.txt").write_text("done")"""

WHOLE_CELL = "w = lv.LogprobView(full)\nw"
STATE_CELL = 'print("folded", v._payload["n"], v._payload["id"] == first_id)'

TOKENS_JS = """([n]) => {
  const roots = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .lv-root');
  return roots.length > n ? roots[n].querySelectorAll('.lv-token').length : -1;
}"""

VIEW_JS = """([n]) => {
  const root = document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .lv-root')[n];
  return {
    header: root.querySelector('.lv-header').textContent,
    tokens: Array.from(root.querySelectorAll('.lv-token'),
      (e) => [e.textContent, e.className.replace(/ ?lv-active/, ''), e.getAttribute('data-index'), e.title]),
    labels: Array.from(root.querySelectorAll('.lv-part-label'), (e) => e.textContent),
    height: root.getBoundingClientRect().height,
  };
}"""


def saved_payload(nb: dict, model_id: str) -> dict:
    """The view's `_payload` from the notebook's saved widget state, its buffers back in place."""
    return wire.from_saved_state(nb["metadata"]["widgets"][WIDGET_STATE]["state"][model_id])["_payload"]


def column(payload: dict, name: str) -> np.ndarray:
    return wire.array(payload["arrays"][name])


def test_a_view_grows_while_the_kernel_streams_and_ends_as_the_whole_trace(page, lab_server):
    for name in ("stream.json", "stream-done.txt"):
        (lab_server.root / name).unlink(missing_ok=True)
    write_notebook(lab_server, "stream.ipynb", [MAKE_CELL, STREAM_CELL, WHOLE_CELL, STATE_CELL])
    open_notebook(page, lab_server, "stream.ipynb")
    toggled = page.evaluate(f"() => window.jupyterapp.commands.isToggled('{SAVE_STATE}')")
    try:
        if not toggled:
            page.evaluate(f"async () => {{ await window.jupyterapp.commands.execute('{SAVE_STATE}'); }}")
        run_cell(page, 0)
        wait_for_output(page, lab_server, 0, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
        assert page.evaluate(TOKENS_JS, [0]) == START
        full = json.loads((lab_server.root / "stream.json").read_text())
        assert len(full["tokens"]) == N

        # The stream: the page shows more tokens while the loop is still running.
        done = lab_server.root / "stream-done.txt"
        run_cell(page, 1)
        seen = []  # (tokens in the DOM, whether the loop had ended before that count was read)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            ended = done.exists()
            seen.append((page.evaluate(TOKENS_JS, [0]), ended))
            if ended:
                break
            time.sleep(0.2)
        growing = [count for count, ended in seen if not ended and START < count < N]
        assert len(set(growing)) >= 2, f"the DOM did not grow while the loop ran: {seen}"
        wait_cell_done(page, 1, timeout=120)
        page.wait_for_function(f"() => ({TOKENS_JS})([0]) === {N}", timeout=60_000)

        # The same trace built at once: the same tokens, texts, classes (prompt, split pieces) and titles.
        run_cell(page, 2)
        wait_for_output(page, lab_server, 2, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
        page.wait_for_function(f"() => ({TOKENS_JS})([1]) === {N}", timeout=60_000)
        streamed, whole = page.evaluate(VIEW_JS, [0]), page.evaluate(VIEW_JS, [1])
        assert streamed["header"] == whole["header"] and f"{N} tokens (5 prompt" in streamed["header"]
        assert streamed["labels"] == whole["labels"] == ["prompt", "completion"]
        assert streamed["tokens"] == whole["tokens"]
        whole_text = b"".join(bytes.fromhex(b) for b in full["token_bytes"]).decode("utf-8")
        assert "".join(t[0] for t in streamed["tokens"]) == whole_text, "split characters show whole"
        assert sum("lv-split-end" in t[1] for t in streamed["tokens"]) >= 20

        # Hovering a streamed token shows its chart, and never changes the view's size.
        root = page.locator(".jp-NotebookPanel:visible .lv-root").first
        root.scroll_into_view_if_needed()
        root.locator(".lv-panel.lv-sized").wait_for(timeout=30_000)
        before = page.evaluate(VIEW_JS, [0])["height"]
        root.locator(".lv-token[data-index='7']").hover()
        root.locator(".lv-chart[data-index='7']").wait_for(timeout=10_000)
        assert page.evaluate(VIEW_JS, [0])["height"] == before
        save_screenshot(page, "stream.png")

        # Tokens stopped: the kernel folded the stream into the trait, under the same id.
        python_prints(page, lab_server, 3, f"folded {N} True")
        # ...and the notebook's saved widget state holds every token.
        page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
        path = lab_server.root / "stream.ipynb"
        nb = json.loads(path.read_text())
        deadline = time.monotonic() + 30
        while WIDGET_STATE not in nb["metadata"].get("widgets", {}):
            assert time.monotonic() < deadline, "JupyterLab did not save the widget state"
            time.sleep(0.5)
            nb = json.loads(path.read_text())
        outputs = [o for o in nb["cells"][0]["outputs"] if WIDGET_VIEW in o.get("data", {})]
        payload = saved_payload(nb, outputs[0]["data"][WIDGET_VIEW]["model_id"])
        assert payload["n"] == N and payload["prompt_len"] == 5
        blob, offsets = column(payload, "text").tobytes(), column(payload, "text_offsets")
        table = [blob[offsets[e] : offsets[e + 1]].decode("utf-8") for e in range(len(offsets) - 1)]
        assert [table[r - 1] for r in column(payload, "token_text")] == full["tokens"]
        np.testing.assert_array_equal(column(payload, "logprobs"), np.array(full["logprobs"], dtype=np.float32))
        assert not page.page_errors, page.page_errors
    finally:
        if not toggled and page.evaluate(f"() => window.jupyterapp.commands.isToggled('{SAVE_STATE}')"):
            page.evaluate(f"async () => {{ await window.jupyterapp.commands.execute('{SAVE_STATE}'); }}")


def server_like_trace(k: int = 20):
    """What a server gives: no entropy, the first token unscored, K alternatives, one token chosen outside them."""
    import logprob_viz as lv

    n = 6
    tokens = ["Once", " upon", " a", " time", ",", " there"]
    top = np.sort(np.random.default_rng(1).uniform(-9, -0.1, (n, k)), axis=1)[:, ::-1]
    top_tokens = [[f" alt{i}.{j}" for j in range(k)] for i in range(n)]
    for i in range(1, n):
        top_tokens[i][0] = tokens[i]
    top_tokens[0] = []
    top[0] = -np.inf
    logprobs = [np.nan] + [float(top[i, 0]) for i in range(1, n)]
    top_tokens[4] = [f" other{j}" for j in range(k)]  # "," chosen outside the top K
    logprobs[4] = -11.5
    return lv.Trace(tokens=tokens, logprobs=logprobs, ranks=[0, 1, 1, 1, 40, 1], top_tokens=top_tokens,
                    top_logprobs=top, prompt_len=1, meta={"source": "vllm"})


HEADER_JS = "() => document.querySelector('.lv-root .lv-header').textContent"
SIZE_JS = """() => { const r = document.querySelector('.lv-root').getBoundingClientRect();
  const p = document.querySelector('.lv-root .lv-panel');
  return [r.width, r.height, p.scrollHeight > p.clientHeight]; }"""


def test_the_header_leaves_out_what_the_source_did_not_give_and_hovering_keeps_the_size(page):
    import logprob_viz as lv
    from logprob_viz.views.page import to_html

    trace = server_like_trace()
    page.set_content(to_html(trace))
    page.locator(".lv-root .lv-token").first.wait_for(timeout=30_000)
    page.locator(".lv-root .lv-panel.lv-sized").wait_for(timeout=30_000)  # measured after the first frame
    header = page.evaluate(HEADER_JS)
    known = trace.logprobs[~np.isnan(trace.logprobs)].astype(np.float64)
    assert header.startswith("6 tokens (1 prompt, 5 completion) · perplexity ")
    assert f"mean logprob {known.mean():.3f}" in header and header.endswith("vllm")
    assert "entropy" not in header and "?" not in header, header
    # Every token, hovered then pinned (the tallest charts: K rows, the chosen token outside them,
    # the pin note): the widget keeps its size and the chart fits its panel.
    first = page.evaluate(SIZE_JS)
    assert first[2] is False
    tokens = page.locator(".lv-root .lv-token")
    for i in range(len(trace)):
        tokens.nth(i).hover()
        page.locator(f".lv-root .lv-chart[data-index='{i}']").wait_for(timeout=10_000)
        assert page.evaluate(SIZE_JS) == first, f"hovering token {i} changed the view's size"
        tokens.nth(i).click()
        page.locator(f".lv-root .lv-token.lv-pinned[data-index='{i}']").wait_for(timeout=10_000)
        assert page.evaluate(SIZE_JS) == first, f"pinning token {i} changed the view's size"
    tokens.nth(4).click()  # chosen outside the top K: K rows and its own
    page.locator(".lv-root .lv-chart[data-index='4'] .lv-alt-row.lv-extra").wait_for(timeout=10_000)
    assert page.locator(".lv-root .lv-chart .lv-alt-row").count() == 20 + 1
    assert page.evaluate(SIZE_JS) == first
    # Without any logprob, the header says only what it knows.
    bare = lv.Trace(tokens=["a", "b"], meta={"source": "test"})
    page.set_content(to_html(bare))
    page.locator(".lv-root .lv-token").first.wait_for(timeout=30_000)
    assert page.evaluate(HEADER_JS) == "2 tokens (0 prompt, 2 completion) · test"
    assert not page.page_errors, page.page_errors


BRANCH_CELL = """\
import traitlets
import logprob_viz as lv
class ForkedView(lv.LogprobView):  # as the explorer's view: fork points marked in the text
    forks = traitlets.List(traitlets.Int()).tag(sync=True)
t = lv.Trace(tokens=["A", " robot", " may", " not"], token_ids=[1, 2, 3, 4], logprobs=[float("nan"), -0.5, -1.0, -2.0],
             top_tokens=[[], [" robot", " cat"], [" may", " must", " can"], [" not", " never"]],
             top_logprobs=[[-99, -99, -99], [-0.5, -1.2, -99], [-1.0, -1.3, -2.2], [-2.0, -2.5, -99]],
             top_ids=[[-1, -1, -1], [2, 20, -1], [3, 30, 31], [4, 40, -1]], prompt_len=1)
asked = []
v = ForkedView(t, forks=[2], branching=True)  # branching on: a click on an alternative goes to Python
v.on_msg(lambda _w, content, _b: asked.append(content))
v"""
ASKED_CELL = 'print("asked", [(a["event"], a["at"], a["token_id"], a["token"]) for a in asked])'


def test_fork_points_are_marked_and_a_click_on_an_alternative_asks_the_kernel(page, lab_server):
    write_notebook(lab_server, "forks.ipynb", [BRANCH_CELL, ASKED_CELL, "v.forks = [1, 3]"])
    open_notebook(page, lab_server, "forks.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root .lv-token", HAND_MADE_TIMEOUT)
    root = page.locator(".jp-NotebookPanel:visible .lv-root").first
    assert root.locator(".lv-token.lv-fork").evaluate_all("els => els.map(e => e.dataset.index)") == ["2"]
    root.locator(".lv-token[data-index='2']").click()  # pin " may": its chart stays
    root.locator(".lv-chart[data-index='2'] .lv-alt-row").nth(1).click()  # " must"
    python_prints(page, lab_server, 1, "asked [('alternative', 2, 30, ' must')]")
    run_cell(page, 2)
    page.wait_for_function(
        "() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) .lv-root .lv-token.lv-fork')]"
        ".map(e => e.dataset.index).join() === '1,3'",
        timeout=30_000,
    )
    assert not page.page_errors, page.page_errors
