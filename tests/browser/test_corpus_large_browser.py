"""The corpus view of a large Parquet corpus in a real JupyterLab + chromium, and its fit on a projector.

The file: a real vLLM trace of mpt-7b (the shared fixture, 16 tokens) replicated and perturbed
(benchmarks/corpus_replicas.py), 150,000 traces: more than WINDOWED_TRACES, so the kernel sorts and
filters and the browser gets only the rows in sight (views/corpus/window.py). Every row the table
shows is checked against the file read with pyarrow and reduced here in float64 (the perplexity
over the known logprobs, the order of each sort: stable, the corpus's order among equal values),
at the top, after a sort, deep in the table after a scroll, and after a filter. No timing is
asserted: benchmarks/corpus_lab.py measures that.

Then at 853x480 (a 1280x720 projector at 150 %, dark) and at 1400x900 (light), every heading, tab,
label and control label of the table is whole: not cut (its text wider than its box), not wrapped
onto a second line, and the text column gets the room the other columns leave.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.corpus_replicas import write_replicas
from browser.expected import js_to_fixed
from browser.lab import (
    ARTIFACTS,
    dark_theme,
    next_frames,
    open_notebook,
    projector_page,
    run_cell,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

TRACES = 150_000
LABEL = "atom-identity-{}"  # issue 49: "atom-iden…" was cut at projector size
ROOT = ".jp-NotebookPanel:visible .jp-OutputArea-output .lvx-root"
# the rows in sight (not the ones built beyond the viewport's edges), top to bottom
SHOWN_ROWS = """els => els.filter(e => e.style.display !== 'none' && e.dataset.row !== '' && e.dataset.row !== '-1')
  .filter(e => e.getBoundingClientRect().top >= e.parentElement.getBoundingClientRect().top - 1)
  .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)
  .map(e => [...e.children].map(c => c.textContent))"""
HEADS = ".lvx-traces .lvx-head .lvx-head-title"


@pytest.fixture(scope="module")
def large(lab_server):
    """(the file, the expected table: label, text, tokens, perplexity per item, from pyarrow in float64)."""
    import pyarrow.parquet as pq

    path = write_replicas(lab_server.root / "large.parquet", TRACES, label=LABEL)
    table = pq.read_table(path, columns=["label", "text", "logprobs"])
    logprobs = table.column("logprobs").combine_chunks()
    offsets = np.asarray(logprobs.offsets, dtype=np.int64)
    flat = logprobs.values.to_numpy(zero_copy_only=False).astype(np.float64)
    known = ~np.isnan(flat)
    per_trace = np.repeat(np.arange(TRACES), np.diff(offsets))
    sums = np.bincount(per_trace[known], weights=flat[known], minlength=TRACES)
    counts = np.bincount(per_trace[known], minlength=TRACES)
    expected = {"label": table.column("label").to_pylist(), "text": table.column("text").to_pylist(),
                "tokens": np.diff(offsets), "perplexity": np.exp(-sums / counts)}
    write_notebook(lab_server, "large.ipynb", [
        "import logprob_viz as lv\n"
        f"v = lv.CorpusView(lv.Corpus.read_parquet({str(path)!r}))\nv", "v"])
    return path, expected


def shown(root) -> list[list[str]]:
    return root.locator(".lvx-traces .lvx-data").evaluate_all(SHOWN_ROWS)


def expected_row(expected, item: int) -> list[str]:
    """item, label, text (as the cell shows it: a newline as ↵), tokens, perplexity (float32, 2 decimals)."""
    text = expected["text"][item][:160].replace("\n", "\u21b5")
    ppl = js_to_fixed(float(np.float32(expected["perplexity"][item])), 2)
    return [str(item), expected["label"][item], text, str(expected["tokens"][item]), ppl]


def wait_rows(page, root, want: list[list[str]], what: str) -> None:
    """The first shown rows become `want` (the kernel answers a sort, a filter or a scroll)."""
    for _ in range(300):
        got = [r[:5] for r in shown(root)][: len(want)]
        if got == want:
            return
        next_frames(page, 3)
    assert got == want, f"{what}: the rows shown differ from pyarrow's"


def stable_order(values: np.ndarray, descending: bool) -> np.ndarray:
    """The items sorted by `values`, equal values in corpus order (an independent stable sort)."""
    items = np.arange(len(values))
    return np.array(sorted(items, key=lambda i: (-values[i] if descending else values[i], i)))


def test_a_large_corpus_shows_the_rows_pyarrow_computes_sorted_scrolled_and_filtered(page, lab_server, large):
    _path, expected = large
    open_notebook(page, lab_server, "large.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvx-root .lvx-data", 300)
    root = page.locator(ROOT)
    assert root.locator(".lvx-traces .lvx-count").inner_text() == f"{TRACES:,} of {TRACES:,} traces"
    wait_rows(page, root, [expected_row(expected, i) for i in range(10)], "the first rows")

    root.locator(".lvx-traces .lvx-head .lvx-col-perplexity").click()  # descending first
    by_ppl = stable_order(expected["perplexity"].astype(np.float32).astype(np.float64), descending=True)
    wait_rows(page, root, [expected_row(expected, int(i)) for i in by_ppl[:10]], "sorted by perplexity")

    # deep in the table: the rows at 100,000 of the order (the kernel sends that window when asked)
    root.locator(".lvx-traces .lvx-body").evaluate("b => { b.scrollTop = 100000 * 24; }")
    first = int(root.locator(".lvx-traces .lvx-body").evaluate("b => Math.round(b.scrollTop / 24)"))
    wait_rows(page, root, [expected_row(expected, int(i)) for i in by_ppl[first : first + 5]], "scrolled")

    root.locator(".lvx-traces .lvx-head .lvx-col-label").click()  # labels in natural order: 0, 1, 2, ...
    root.locator(".lvx-traces .lvx-body").evaluate("b => { b.scrollTop = 0; }")
    wait_rows(page, root, [expected_row(expected, i) for i in range(10)], "sorted by label")

    root.locator(".lvx-f-label").fill("identity-1234")
    keep = [i for i, s in enumerate(expected["label"]) if "identity-1234" in s]
    keep.sort(key=lambda i: int(expected["label"][i].rsplit("-", 1)[1]))
    wait_rows(page, root, [expected_row(expected, i) for i in keep[:10]], "filtered by label")
    assert root.locator(".lvx-traces .lvx-count").inner_text() == f"{len(keep):,} of {TRACES:,} traces"
    root.locator(".lvx-f-label").fill("")

    root.locator(".lvx-data").nth(2).click()  # a row opens its trace below, read from its own row group
    page.wait_for_function("() => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .lvx-note')"
                           ".textContent.startsWith('Below: trace 2 (atom-identity-2)')", timeout=60_000)
    assert not page.page_errors, page.page_errors


# Each heading, tab, label cell and control label that is cut (its text wider than its box) or wraps.
CUT_JS = """root => {
  const bad = [];
  const lines = (e) => { const r = document.createRange(); r.selectNodeContents(e);
    const tops = new Set([...r.getClientRects()].filter((x) => x.width > 0.5).map((x) => Math.round(x.top)));
    return tops.size; };
  const sel = '.lvx-head .lvx-head-title, .lvx-data .lvx-col-label, .lvx-data .lvx-col-predicted, '
    + '.lvx-data .lvx-col-gold, .lvx-data .lvx-col-correct, .lvx-tab, .lvx-ctl-label, .lvx-count';
  for (const e of root.querySelectorAll(sel)) {
    if (!e.checkVisibility() || !e.textContent.trim()) continue;
    const why = [];
    if (e.scrollWidth > e.clientWidth + 1) why.push(`cut (${e.scrollWidth} > ${e.clientWidth})`);
    if (lines(e) > 1) why.push('wraps');
    const cell = e.closest('.lvx-cell');
    if (cell && cell.scrollWidth > cell.clientWidth + 1)
      why.push(`its cell is cut (${cell.scrollWidth} > ${cell.clientWidth})`);
    if (why.length) bad.push({text: e.textContent, why});
  }
  const table = root.querySelector('.lvx-traces .lvx-table');
  const text = root.querySelector('.lvx-traces .lvx-head .lvx-col-text').getBoundingClientRect().width;
  return {bad, text, table: table.clientWidth, sideways: table.scrollWidth > table.clientWidth + 1};
}"""


def check_fit(page, name: str, min_text: int) -> dict:
    """Every heading, label and control label of the view in `page` whole, no sideways scroll, the text
    column at least `min_text` px wide; its picture in tests/artifacts/`name`."""
    root = page.locator(ROOT)
    root.locator(".lvx-data").first.wait_for(timeout=120_000)
    next_frames(page, 3)  # (the columns are measured in the page's fonts a frame after the first paint)
    root.evaluate("e => e.scrollIntoView({block: 'start'})")
    next_frames(page)
    page.screenshot(path=str(ARTIFACTS / name), animations="disabled")
    fit = root.evaluate(CUT_JS)
    assert not fit["bad"], fit
    assert not fit["sideways"], fit  # every column in sight
    assert fit["text"] >= min_text, fit  # the text column has the room the others leave
    return fit


def test_labels_and_headings_are_whole_on_a_projector_dark_and_at_1400_light(browser, page, lab_server, large):
    page.set_viewport_size({"width": 1400, "height": 900})
    open_notebook(page, lab_server, "large.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvx-root .lvx-data", 300)
    wide = check_fit(page, "corpus-large-1400.png", 200)
    with projector_page(browser, lab_server, "large.ipynb") as small:
        small.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")  # (a presenter's)
        run_cell(small, 1)  # the same view again, in this page
        with dark_theme(small, small.locator(ROOT)):
            narrow = check_fit(small, "corpus-large-150-dark.png", 250)
    assert narrow["table"] < wide["table"]
    assert not page.page_errors, page.page_errors
