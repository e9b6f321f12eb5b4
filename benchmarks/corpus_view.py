"""The corpus view in headless chromium: 10,000 synthetic traces, 1M tokens (issue 17's targets).

    python -m benchmarks.corpus_view [--traces 10000] [--tokens 100] [--repeats 3] [--quick]

Prints a Markdown table: the kernel's side (building the payload: the table's columns, the
sparklines, both surprise indexes), the payload's bytes, then in the page: open (render() called
-> the frame after the second animation frame), sort by each kind of column (a header click ->
the frame after), filter (text contains, a perplexity range: an input event -> the frame after),
a scroll through the table, and the longest task (PerformanceObserver 'longtask') over all of it,
each against its goal: open <= 1 s, sort and filter <= 100 ms, no task over 200 ms.

The page is a local harness (served on 127.0.0.1, as benchmarks/frontend.py does): the built ESM
bundle (logprob_viz/views/static/corpus.js) rendered over the toolkit's minimal model
(js/toolkit/model.js), its state `CorpusTable.get_state()` split by the wire codec into JSON and
binary buffers, put back as DataViews at their paths as the notebook's deserializer does.
The traces are synthetic (a 2,000-word vocabulary, random logprobs, K=0): the table never reads
a trace's alternatives, and a real model would take hours on this CPU for 1M tokens.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from benchmarks.common import parse_args, table

HERE = Path(__file__).parent
ROOT = HERE.parent
STATIC = ROOT / "logprob_viz" / "views" / "static"
MODEL_JS = ROOT / "js" / "toolkit" / "model.js"
CHROMIUM = "/usr/bin/chromium"
GOALS = {"open": 1000.0, "sort": 100.0, "filter": 100.0, "task": 200.0}  # ms
QUICK = {"traces": 1000, "repeats": 1}

HARNESS = """<!doctype html>
<html><head><meta charset="utf-8"><link rel="stylesheet" href="corpus.css">
<style>body { margin: 8px; width: 1200px; font-family: sans-serif; }</style></head>
<body><div id="host"></div>
<script>
window.lvLongTasks = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) window.lvLongTasks.push(e.duration);
}).observe({ type: "longtask", buffered: true });
// A message posted from a rAF callback arrives after that frame's rendering (style, layout, paint).
window.afterPaint = () => new Promise((r) => requestAnimationFrame(() => {
  const ch = new MessageChannel(); ch.port1.onmessage = () => r(performance.now()); ch.port2.postMessage(0);
}));
</script>
<script type="module">
import widget from "./corpus.js";
import { makeModel, setPath } from "./model.js";
const bytesOf = (b64) => { const s = atob(b64); const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i); return out; };
window.lvOpen = async () => {
  const meta = await (await fetch("state.json")).json();
  meta.buffer_paths.forEach((path, i) => {
    const bytes = bytesOf(meta.buffers[i]);  // (before the clock starts: the notebook gets binary buffers)
    setPath(meta.state, path, new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  });
  const model = makeModel(meta.state);
  window.lvModel = model;
  await afterPaint();
  window.lvLongTasks.length = 0;
  const t0 = performance.now();
  const el = document.createElement("div");
  document.getElementById("host").appendChild(el);
  widget.render({ model, el });
  await afterPaint(); const t = await afterPaint();
  return t - t0;
};
window.lvClick = async (selector) => {
  const t0 = performance.now();
  document.querySelector(selector).click();
  return (await afterPaint()) - t0;
};
window.lvInput = async (selector, value) => {
  const el = document.querySelector(selector);
  const t0 = performance.now();
  el.value = value; el.dispatchEvent(new Event("input"));
  return (await afterPaint()) - t0;
};
window.lvScroll = async (steps) => {
  const body = document.querySelector(".lvx-traces .lvx-body");
  const times = [];
  for (let s = 1; s <= steps; s++) {
    const t0 = performance.now();
    body.scrollTop = (body.scrollHeight * s) / steps;
    times.push((await afterPaint()) - t0);
  }
  return times;
};
window.lvReady = true;
</script></body></html>
"""


def synthetic_corpus(n_traces: int, n_tokens: int, seed: int = 0):
    """`n_traces` traces of `n_tokens` tokens each: words of a 2,000-word vocabulary, random logprobs."""
    import logprob_viz as lv

    rng = np.random.default_rng(seed)
    vocab = np.array([f" w{i}" for i in range(2000)], dtype=object)
    vocab[:10] = [" the", " of", ".", ",", "\n", " 42", " Paris", " and", " a", " robot"]
    traces = []
    for _ in range(n_traces):
        ids = rng.zipf(1.3, n_tokens) % len(vocab)
        lp = np.log(rng.uniform(1e-4, 1, n_tokens)).astype(np.float32)
        lp[0] = np.nan
        traces.append(lv.Trace(tokens=list(vocab[ids]), token_ids=ids, logprobs=lp,
                               ranks=np.where(np.isnan(lp), 0, rng.integers(1, 100, n_tokens)),
                               entropy=rng.uniform(0, 6, n_tokens).astype(np.float32),
                               top_tokens=[[] for _ in range(n_tokens)],
                               top_logprobs=np.zeros((n_tokens, 0), np.float32), prompt_len=0,
                               meta={"model": "synthetic"}))
    return lv.Corpus(traces, labels=[f"doc {i}" for i in range(n_traces)])


def table_state(corpus) -> tuple[dict, float, float]:
    """(the table widget's state as the page loads it, seconds the payload took to build, seconds the
    surprise index took: a view of more than EAGER_INDEX_TRACES traces makes it when its tab opens)."""
    from ipywidgets import Layout

    from logprob_viz.views.corpus.payload import encode_corpus, encode_indexes
    from logprob_viz.views.corpus.view import CorpusTable
    from logprob_viz.views.page import _DetachedComm, view_state

    start = time.perf_counter()
    payload = encode_corpus(corpus)
    built = time.perf_counter() - start
    start = time.perf_counter()
    index = encode_indexes(corpus)  # (in the state from the start: the page has no kernel to ask)
    indexed = time.perf_counter() - start
    layout = Layout(comm=_DetachedComm())
    widget = CorpusTable(_payload=payload, _index=index, selected_item=0, _shown_item=0, comm=_DetachedComm(),
                         layout=layout)
    try:
        return view_state(widget), built, indexed
    finally:
        widget.close()
        layout.close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # the table is the output, not a request log
        pass


def serve(folder: Path):
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def measure(browser, url: str, scroll_steps: int = 20) -> dict:
    """One fresh page: open, sorts, filters, a scroll; the longest task over all of it (ms)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    try:
        page.goto(url)
        page.wait_for_function("window.lvReady === true")
        out = {"open": page.evaluate("lvOpen()")}
        head = ".lvx-traces .lvx-head .lvx-col-"
        out["sort"] = {f"{c} ({kind})": page.evaluate("s => lvClick(s)", head + c)
                       for c, kind in (("perplexity", "numbers"), ("label", "text"), ("text", "whole texts"),
                                       ("tokens", "ties: stable"))}
        out["filter"] = {
            "text contains 'w12'": page.evaluate("([s, v]) => lvInput(s, v)", [".lvx-f-text", "w12"]),
            "text cleared": page.evaluate("([s, v]) => lvInput(s, v)", [".lvx-f-text", ""]),
            "perplexity >= 900": page.evaluate("([s, v]) => lvInput(s, v)", [".lvx-f-min", "900"]),
            "label contains '99'": page.evaluate("([s, v]) => lvInput(s, v)", [".lvx-f-label", "99"]),
        }
        page.evaluate("([s, v]) => lvInput(s, v)", [".lvx-f-min", ""])
        page.evaluate("([s, v]) => lvInput(s, v)", [".lvx-f-label", ""])
        out["scroll"] = page.evaluate("n => lvScroll(n)", scroll_steps)
        out["index tab"] = page.evaluate("s => lvClick(s)", ".lvx-tab[data-tab='index']")
        out["index sort"] = page.evaluate("s => lvClick(s)", ".lvx-index .lvx-head .lvx-col-mean_surprisal")
        out["dom rows"] = page.evaluate("document.querySelectorAll('.lvx-data').length")
        out["longest task"] = page.evaluate("Math.max(0, ...window.lvLongTasks)")
        return out
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=10_000)
    parser.add_argument("--tokens", type=int, default=100, help="tokens per trace")
    parser.add_argument("--repeats", type=int, default=3, help="fresh pages; the table quotes medians")
    args = parse_args(parser, QUICK)
    from playwright.sync_api import sync_playwright

    for name in ("corpus.js", "corpus.css"):
        if not (STATIC / name).is_file():
            raise SystemExit(f"{STATIC / name} is missing: run `npm run build` in js/ first")
    start = time.perf_counter()
    corpus = synthetic_corpus(args.traces, args.tokens)
    made = time.perf_counter() - start
    state, built, indexed = table_state(corpus)
    folder = Path(tempfile.mkdtemp(prefix="lv-corpus-bench-"))
    try:
        for name in ("corpus.js", "corpus.css"):
            shutil.copy(STATIC / name, folder / name)
        shutil.copy(MODEL_JS, folder / "model.js")
        (folder / "index.html").write_text(HARNESS)
        raw = json.dumps(state, separators=(",", ":"), allow_nan=False)
        (folder / "state.json").write_text(raw)
        binary = sum(len(base64.b64decode(b)) for b in state["buffers"])
        server = serve(folder)
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            try:
                runs = [measure(browser, url) for _ in range(args.repeats)]
            finally:
                browser.close()
        server.shutdown()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(report(args, runs, made, built + indexed, binary, len(raw) - sum(len(b) for b in state["buffers"])))


def report(args, runs, made, built, binary, json_bytes) -> str:
    med = statistics.median
    n_tokens = args.traces * args.tokens

    def row(what, values, goal):
        value = med(values)
        status = "" if goal is None else ("met" if value <= goal else "MISSED")
        return [what, f"{value:.1f}", "" if goal is None else f"<= {goal:.0f}", status]

    rows = [row("open (render -> painted)", [r["open"] for r in runs], GOALS["open"])]
    for key in runs[0]["sort"]:
        rows.append(row(f"sort by {key}", [r["sort"][key] for r in runs], GOALS["sort"]))
    for key in runs[0]["filter"]:
        rows.append(row(f"filter: {key}", [r["filter"][key] for r in runs], GOALS["filter"]))
    rows.append(row("scroll step (worst of 20)", [max(r["scroll"]) for r in runs], None))
    rows.append(row("index tab shown", [r["index tab"] for r in runs], None))
    rows.append(row("index sort (by mean surprisal)", [r["index sort"] for r in runs], GOALS["sort"]))
    rows.append(row("longest task over all of the above", [r["longest task"] for r in runs], GOALS["task"]))
    import os

    load = os.getloadavg()[0]
    head = (f"Corpus view: {args.traces:,} traces, {n_tokens:,} tokens; medians of {args.repeats} fresh pages "
            f"(headless chromium). Kernel: synthetic corpus {made:.1f} s; payload and surprise indexes built in "
            f"{built:.2f} s "
            f"({binary / 1e6:.1f} MB binary + {json_bytes / 1e3:.0f} kB JSON); "
            f"rows in the DOM at the end: {runs[0]['dom rows']}; load average {load:.1f} on {os.cpu_count()} cores "
            "(a shared machine: a busy one slows every row).\n\n")
    return head + table(["what", "ms", "goal (ms)", "status"], rows)


if __name__ == "__main__":
    main()
