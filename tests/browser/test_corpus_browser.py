"""The corpus view in a real JupyterLab + chromium, on a corpus the real default model scores.

The notebook scores a dozen texts (one with a hostile token, one with a hostile label) and writes
each trace's `to_dict()` to corpus.json; the test computes every number the table and the index
must show from those arrays with pandas, independently of the view and of `Corpus.to_pandas`
(the view sends float32: the expected values are rounded through float32, then formatted as
JavaScript's toFixed does). It sorts, filters, selects a row (the one LogprobView below shows
that trace), opens the surprise index, a group's occurrences and one occurrence (its trace,
that token pinned), and checks that Python sees each selection. Screenshots: normal size, a
1280x720 screen at 150 %, the dark theme, and the saved notebook reopened without a kernel.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pandas as pd
import pytest

from browser.cells import HOSTILE_IMG
from browser.expected import expected_marks, js_to_fixed
from browser.lab import (
    ARTIFACTS,
    MODEL_TIMEOUT,
    dark_theme,
    next_frames,
    open_notebook,
    projector_page,
    python_prints,
    run_cell,
    save_screenshot,
    wait_cell_done,
    wait_for_output,
    wait_widgets_restored,
    write_notebook,
)

pytestmark = pytest.mark.browser

TEXTS = [
    "The capital of France is Paris.",
    "A robot may not injure a human being.",
    "Two plus two is four, and 1234 + 1 = 1235.",
    f"Markup is text here: {HOSTILE_IMG} stays shown.",
    "The robot walked to the market and bought bread.",
    "def add(a, b):\n    return a + b\n",
    "Colourless green ideas sleep furiously.",
    "The the the the the the the.",
    "In 1969 the first people walked on the Moon.",
    "She sells sea shells by the sea shore.",
    "Photosynthesis turns light into chemical energy.",
    "The robot said hello.",
]
LABELS = [f"text {i}" for i in range(len(TEXTS))]
LABELS[2] = HOSTILE_IMG  # a hostile label too

CORPUS_CELL = f"""\
import json, pathlib
import logprob_viz as lv
runner = lv.load()
corpus = lv.Corpus(runner.score({TEXTS!r}, top_logprobs=3, progress=False).traces, labels={LABELS!r})
pathlib.Path("corpus.json").write_text(json.dumps([t.to_dict() for t in corpus.traces]))
v = lv.CorpusView(corpus)
v"""
STATE_CELL = "print('state', v.selected_item, v.pinned, v.logprob_view.selected, v.table.sort['column'], " \
             "v.table.sort['descending'], len(v.logprob_view.trace))"
ROOT = ".jp-NotebookPanel:visible .jp-OutputArea-output .lvx-root"
SAVE_STATE = "@jupyter-widgets/jupyterlab-manager:saveWidgetState"


def _f32(x: float) -> float:
    return float(np.float32(x))


def expected_table(traces: list[dict]) -> pd.DataFrame:
    """The table's numbers, from the traces' own arrays (NaN: unknown)."""
    rows = []
    for i, tr in enumerate(traces):
        lp = np.array([float(x) for x in tr["logprobs"]])
        ent = np.array([float(x) for x in tr["entropy"]])
        lp = lp[~np.isnan(lp)]
        rows.append({"item": i, "label": LABELS[i], "tokens": len(tr["tokens"]), "perplexity": np.exp(-lp.mean()),
                     "mean_logprob": lp.mean(), "min_logprob": lp.min(), "max_surprisal": -lp.min(),
                     "mean_entropy": np.nanmean(ent), "text": "".join(tr["tokens"])})
    return pd.DataFrame(rows)


def expected_cells(row) -> list[str]:
    """A row's cells as the view must show them (perplexity 2 decimals, the rest 3)."""
    numbers = [js_to_fixed(_f32(row.perplexity), 2)] + [
        js_to_fixed(_f32(getattr(row, c)), 3) for c in ("mean_logprob", "min_logprob", "max_surprisal", "mean_entropy")]
    return [str(row.item), row.label, str(row.tokens), *numbers]


SHOWN_ROWS = """els => els.filter(e => e.style.display !== 'none' && e.dataset.row !== '')
  .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
  .map(e => [...e.children].map(c => c.textContent))"""


def shown_rows(root, panel: str = ".lvx-traces") -> list[list[str]]:
    return root.locator(f"{panel} .lvx-data").evaluate_all(SHOWN_ROWS)


def table_cells(root) -> list[list[str]]:
    """Per shown row: item, label, tokens, perplexity, mean lp, min lp, max surprisal, mean entropy."""
    return [[r[0], r[1], r[3], r[4], r[5], r[6], r[7], r[8]] for r in shown_rows(root)]


def wait_rows(root, items: list[int], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while [int(r[0]) for r in shown_rows(root)] != items:
        assert time.monotonic() < deadline, f"rows {[int(r[0]) for r in shown_rows(root)]}, expected {items}"
        time.sleep(0.1)  # (polling the condition above)


def wait_logprob_view(page, n_tokens: int) -> None:
    page.wait_for_function(
        "n => { const h = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .lv-root .lv-header');"
        " return h && h.textContent.startsWith(n + ' tokens'); }", arg=n_tokens, timeout=60_000)


@pytest.fixture
def corpus_notebook(lab_server):
    (lab_server.root / "corpus.json").unlink(missing_ok=True)
    write_notebook(lab_server, "corpus.ipynb", [CORPUS_CELL, STATE_CELL, "v"])
    return "corpus.ipynb"


def open_view(page, lab_server, name="corpus.ipynb"):
    open_notebook(page, lab_server, name)
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvx-root .lvx-data", MODEL_TIMEOUT)
    traces = json.loads((lab_server.root / "corpus.json").read_text())
    return page.locator(ROOT), traces


def test_sort_filter_and_a_row_opens_its_trace_below(page, lab_server, corpus_notebook):
    root, traces = open_view(page, lab_server)
    want = expected_table(traces)
    assert table_cells(root) == [expected_cells(r) for r in want.itertuples()]
    assert root.locator(".lvx-count").first.inner_text() == f"{len(TEXTS)} of {len(TEXTS)} traces"
    # Hostile text is shown, never run: the label and the token are text in the page.
    assert root.locator("img, script").count() == 0 and page.evaluate("() => window.__pwned") is None
    assert shown_rows(root)[2][1] == HOSTILE_IMG

    # Sort: perplexity, highest first; again: lowest first. Stable, the indicator on its header.
    header = root.locator(".lvx-traces .lvx-head .lvx-col-perplexity")
    header.click()
    wait_rows(root, want.sort_values("perplexity", ascending=False, kind="stable")["item"].tolist())
    assert header.get_attribute("aria-sort") == "descending" and "\u25bc" in header.inner_text()
    assert table_cells(root) == [expected_cells(r) for r in want.sort_values(
        "perplexity", ascending=False, kind="stable").itertuples()]
    header.click()
    wait_rows(root, want.sort_values("perplexity", kind="stable")["item"].tolist())
    assert header.get_attribute("aria-sort") == "ascending"
    python_prints(page, lab_server, 1, "perplexity False")
    root.locator(".lvx-traces .lvx-head .lvx-col-tokens").click()
    wait_rows(root, want.sort_values("tokens", ascending=False, kind="stable")["item"].tolist())
    assert header.get_attribute("aria-sort") == "none"
    root.locator(".lvx-traces .lvx-head .lvx-col-text").click()  # whole texts, by the kernel's code-point ranks
    wait_rows(root, want.sort_values("text", kind="stable")["item"].tolist())  # a text column: A to Z first
    root.locator(".lvx-traces .lvx-head .lvx-col-tokens").click()

    # Filter: text contains (any case), then a perplexity range as well.
    root.locator(".lvx-f-text").fill("ROBOT")
    robots = want[want["text"].str.lower().str.contains("robot")].sort_values("tokens", ascending=False, kind="stable")
    wait_rows(root, robots["item"].tolist())
    low, high = sorted(want["perplexity"])[3], sorted(want["perplexity"])[-3]
    root.locator(".lvx-f-text").fill("")
    root.locator(".lvx-f-min").fill(f"{low:.4f}")
    root.locator(".lvx-f-max").fill(f"{high:.4f}")
    in_range = want[(want["perplexity"] >= _f32(float(f"{low:.4f}"))) & (want["perplexity"] <= float(f"{high:.4f}"))]
    wait_rows(root, in_range.sort_values("tokens", ascending=False, kind="stable")["item"].tolist())
    assert root.locator(".lvx-count").first.inner_text() == f"{len(in_range)} of {len(TEXTS)} traces"
    save_screenshot(page, "corpus-view.png", ".jp-NotebookPanel:visible .jp-OutputArea-output .widget-vbox")
    root.locator(".lvx-f-min").fill("")
    root.locator(".lvx-f-max").fill("")

    # A row: its trace in the one LogprobView below, and Python knows.
    item = 3
    root.locator(f".lvx-traces .lvx-data[data-row='{item}']").click()
    wait_logprob_view(page, len(traces[item]["tokens"]))
    view = page.locator(".jp-NotebookPanel:visible .jp-OutputArea-output .lv-root")
    assert view.count() == 1  # one LogprobView, reused
    shown = view.locator(".lv-token").evaluate_all("els => els.map(e => e.textContent)")
    assert shown == traces[item]["tokens"]  # the text as text (its spaces marked by CSS, not in the text)
    assert root.locator(".lvx-data.lvx-selected").get_attribute("data-row") == str(item)
    python_prints(page, lab_server, 1, f"state {item} -1 -1 tokens True {len(traces[item]['tokens'])}")
    assert root.locator("img, script").count() == 0 and page.evaluate("() => window.__pwned") is None
    assert not page.page_errors, page.page_errors


def expected_index(traces: list[dict]) -> pd.DataFrame:
    rows = [(tok, -float(lp), int(rank), i, p) for i, tr in enumerate(traces)
            for p, (tok, lp, rank) in enumerate(zip(tr["tokens"], tr["logprobs"], tr["ranks"], strict=True))
            if not np.isnan(float(lp))]
    return pd.DataFrame(rows, columns=["group", "surprisal", "rank", "item", "position"])


def test_the_index_lists_a_groups_occurrences_and_one_opens_its_trace_pinned(page, browser, lab_server,
                                                                             corpus_notebook):
    root, traces = open_view(page, lab_server)
    root.locator(".lvx-tab[data-tab='index']").click()
    index = root.locator(".lvx-index")
    index.locator(".lvx-data").first.wait_for(timeout=10_000)
    tokens = expected_index(traces)
    groups = tokens.groupby("group").agg(count=("surprisal", "size"), mean=("surprisal", "mean"),
                                         most=("surprisal", "max"))
    index.locator(".lvx-head .lvx-col-count").click()  # most frequent first (stable: ties keep the index order)
    shown = shown_rows(root, ".lvx-index")
    assert [int(r[1]) for r in shown] == sorted(groups["count"], reverse=True)[: len(shown)]
    by_mark = {expected_marks(g): g for g in groups.index}
    for row in shown:
        g = groups.loc[by_mark[row[0]]]
        assert row[1:4] == [str(int(g["count"])), js_to_fixed(_f32(g["mean"]), 3), js_to_fixed(_f32(g["most"]), 3)]

    # The most frequent group's occurrences, most surprising first; the first opens its trace pinned.
    top = by_mark[shown[0][0]]
    index.locator(".lvx-data").first.click()
    index.locator(".lvx-occ").first.wait_for(timeout=60_000)
    occ = tokens[tokens["group"] == top].sort_values("surprisal", ascending=False, kind="stable")
    lines = index.locator(".lvx-occ").evaluate_all(
        "els => els.map(e => [+e.dataset.item, +e.dataset.position, e.querySelector('.lvx-occ-token').textContent])")
    assert sorted((i, p) for i, p, _ in lines) == sorted(zip(occ["item"], occ["position"], strict=True))
    assert lines[0][:2] == [int(occ["item"].iloc[0]), int(occ["position"].iloc[0])]
    assert {t for *_, t in lines} == {expected_marks(top)}
    item, position = lines[-1][:2]
    index.locator(".lvx-occ").last.click()
    wait_logprob_view(page, len(traces[item]["tokens"]))
    page.locator(".jp-NotebookPanel:visible .lv-root .lv-token.lv-pinned").wait_for(timeout=30_000)
    pinned = page.locator(".jp-NotebookPanel:visible .lv-root .lv-token.lv-pinned").text_content()
    assert pinned == traces[item]["tokens"][position]
    python_prints(page, lab_server, 1, f"state {item} {position} {position}")

    # By class: the classes of the index (digits among them: the texts have numbers).
    index.locator("select.lvx-by").select_option("class")
    page.wait_for_function("el => [...el.querySelectorAll('.lvx-data')].some(r => r.textContent.includes('digits'))",
                           arg=index.element_handle(), timeout=10_000)
    theme_screenshot(page, root)
    root.locator(".lvx-tab[data-tab='traces']").click()
    projector_screenshot(browser, lab_server)
    assert not page.page_errors, page.page_errors


def theme_screenshot(page, root) -> None:
    with dark_theme(page, root):
        root.locator(".lvx-tab[data-tab='traces']").click()
        save_screenshot(page, "corpus-dark.png", ".jp-NotebookPanel:visible .jp-OutputArea-output .widget-vbox")
        root.locator(".lvx-tab[data-tab='index']").click()


def projector_screenshot(browser, lab_server) -> None:
    """A 1280x720 screen at 150 % zoom: 853x480 CSS pixels at device scale 1.5, the file browser hidden,
    the same kernel's view."""
    with projector_page(browser, lab_server, "corpus.ipynb") as small:
        small.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")  # (a presenter's)
        run_cell(small, 2)  # the same view again, in this page
        small.locator(ROOT).locator(".lvx-data").first.wait_for(timeout=60_000)
        small.locator(ROOT).scroll_into_view_if_needed()
        fit = small.evaluate("""() => {
          const table = document.querySelector('.lvx-root .lvx-traces .lvx-table');
          const heads = [...table.querySelectorAll('.lvx-head .lvx-cell')].filter(c => c.offsetWidth > 0);
          return { scroll: table.scrollWidth, width: table.clientWidth,
                   heads: heads.map(c => [c.textContent, c.scrollWidth <= c.clientWidth]),
                   text: table.querySelector('.lvx-head .lvx-col-text').getBoundingClientRect().width };
        }""")
        # every column in sight (no sideways scroll), each heading whole, and room to read the text;
        # mean and min logprob, max surprisal and tokens give way (grid.js NARROW_HIDDEN), and flags where
        # no token lost anything (issue 49: the text column was 137 px wide)
        assert fit["scroll"] <= fit["width"], fit
        assert [name for name, _ in fit["heads"]] == ["#", "label", "text", "perplexity", "entropy", "surprisal"], fit
        assert all(whole for _, whole in fit["heads"]) and fit["text"] >= 250, fit
        # the picture is the screen the room sees (an element's picture of a view taller than the
        # screen ran past its bottom, JupyterLab's status bar over the table's last rows)
        small.locator(ROOT).evaluate("e => e.scrollIntoView({block: 'start'})")
        next_frames(small)
        small.screenshot(path=str(ARTIFACTS / "corpus-150.png"), animations="disabled")


def test_the_saved_notebook_shows_the_table_without_a_kernel_and_says_a_row_needs_one(page, lab_server):
    """Run with JupyterLab's "Save Widget State Automatically", save, reopen, stop the kernel: the
    table comes back from the saved state, sorting works, and another row says it needs the kernel."""
    write_notebook(lab_server, "corpus-saved.ipynb", [CORPUS_CELL, STATE_CELL])
    open_notebook(page, lab_server, "corpus-saved.ipynb")
    toggled = page.evaluate(f"() => window.jupyterapp.commands.isToggled('{SAVE_STATE}')")
    try:
        if not toggled:
            page.evaluate(f"async () => {{ await window.jupyterapp.commands.execute('{SAVE_STATE}'); }}")
        run_cell(page, 0)
        wait_for_output(page, lab_server, 0, ".lvx-root .lvx-data", MODEL_TIMEOUT)
        wait_cell_done(page, 0, timeout=MODEL_TIMEOUT)
        page.evaluate("async () => { await window.jupyterapp.commands.execute('docmanager:save'); }")
        path = lab_server.root / "corpus-saved.ipynb"
        deadline = time.monotonic() + 30
        while "widgets" not in json.loads(path.read_text())["metadata"]:
            assert time.monotonic() < deadline, "JupyterLab did not save the widget state"
            time.sleep(0.5)  # (polling the condition above)
        for session in lab_server.api("/api/sessions"):
            if session.get("path", "").endswith("corpus-saved.ipynb"):
                lab_server.api(f"/api/sessions/{session['id']}", method="DELETE")
        open_notebook(page, lab_server, "corpus-saved.ipynb")
        wait_widgets_restored(page)
        page.evaluate("async () => { await window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }")
        page.locator(".jp-NotebookPanel:visible .jp-Toolbar-kernelName", has_text="No Kernel").first.wait_for(
            timeout=30_000)
        root = page.locator(ROOT)
        root.locator(".lvx-data").first.wait_for(timeout=60_000)
        traces = json.loads((lab_server.root / "corpus.json").read_text())
        want = expected_table(traces)
        assert table_cells(root) == [expected_cells(r) for r in want.itertuples()]
        wait_logprob_view(page, len(traces[0]["tokens"]))  # the trace that was shown, from the saved state
        root.locator(".lvx-traces .lvx-head .lvx-col-perplexity").click()
        wait_rows(root, want.sort_values("perplexity", ascending=False, kind="stable")["item"].tolist())
        root.locator(".lvx-traces .lvx-data[data-row='5']").click()
        root.locator(".lvx-note.lvx-warn").wait_for(timeout=15_000)
        assert "needs the kernel" in root.locator(".lvx-note").inner_text()
        save_screenshot(page, "corpus-saved-no-kernel.png", ROOT)
    finally:
        if not toggled and page.evaluate(f"() => window.jupyterapp.commands.isToggled('{SAVE_STATE}')"):
            page.evaluate(f"async () => {{ await window.jupyterapp.commands.execute('{SAVE_STATE}'); }}")


OFFLINE_TOKENS = ["<script>window.__pwned = 1</script>", " and", " <img src=x onerror=\"window.__pwned = 2\">", "."]


def test_the_offline_page_sorts_shows_hostile_text_as_text_and_says_a_row_needs_the_kernel(browser, tmp_path):
    """corpus.to_html(path) in chromium from a file: no kernel, no network. Hand-made traces (the
    logprobs are the test's own), so the perplexities to expect are computed right here."""
    import logprob_viz as lv

    logprobs = [[np.nan, -0.5, -3.0, -0.1], [np.nan, -2.0, -0.2, -4.0], [np.nan, -0.01, -0.02, -0.03]]
    traces = [lv.Trace(tokens=OFFLINE_TOKENS, token_ids=[1, 2, 3, 4], logprobs=np.array(lp, np.float32),
                       ranks=[0, 1, 5, 1], prompt_len=0, meta={"model": "hand-made"}) for lp in logprobs]
    corpus = lv.Corpus(traces, labels=[HOSTILE_IMG, "<b>two</b>", "three"])
    path = corpus.to_html(tmp_path / "corpus.html", selected_item=1, pinned=2)
    context = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=True)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(path.as_uri())
        root = page.locator(".lvx-root")
        root.locator(".lvx-data").first.wait_for(timeout=30_000)
        ppl = [js_to_fixed(_f32(np.exp(-np.mean([x for x in lp if not np.isnan(x)]))), 2) for lp in logprobs]
        assert [(r[1], r[4]) for r in shown_rows(root)] == list(zip(corpus.labels, ppl, strict=True))
        root.locator(".lvx-traces .lvx-head .lvx-col-perplexity").click()
        wait_rows(root, [int(i) for i in np.argsort([-float(p) for p in ppl], kind="stable")])
        # The pinned trace's LogprobView is in the page too, its token pinned; hostile text stays text.
        pinned = page.locator(".lv-root .lv-token.lv-pinned")
        pinned.wait_for(timeout=30_000)
        assert pinned.text_content() == OFFLINE_TOKENS[2]
        assert page.locator("img, b, .lvx-root script, .lv-root script").count() == 0
        assert page.evaluate("() => window.__pwned") is None
        order = [int(r[0]) for r in shown_rows(root)]
        root.locator(".lvx-traces .lvx-body").focus()  # arrow keys walk the rows in the order shown
        page.keyboard.press("ArrowDown")
        assert root.locator(".lvx-data.lvx-selected").get_attribute("data-row") == str(order[order.index(1) + 1])
        root.locator(".lvx-traces .lvx-data[data-row='0']").click()
        root.locator(".lvx-note.lvx-warn").wait_for(timeout=15_000)
        assert "needs the kernel" in root.locator(".lvx-note").inner_text()
        assert errors == []
    finally:
        context.close()
