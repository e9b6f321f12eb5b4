"""The compare view in headless chromium: 2 to 8 rows of 10,000 bytes each.

    python -m benchmarks.compare [--bytes 10000] [--rows 2,4,8] [--repeats 3] [--hovers 40] [--quick]

Prints a Markdown table: first render (render() -> second animation frame after), switching to the
difference colour mode (set -> painted frame), and hover (dispatch on a random span -> painted
frame, p50/p95), with each row count's ratio to the 2-row case measured in the same run.

The data: one synthetic text (words, punctuation, multi-byte characters) cut into tokens
differently for each row (row 0 one token per word, the others split each word into 1-3 pieces
at random, as tokenizers of other vocabularies do), K=5 alternatives, random logprobs. The page
state is `CompareView(...).get_state()` split into JSON + binary buffers by the wire codec
(`logprob_viz.views.page.state_parts`) and put back as DataViews behind the shared minimal model
(js/toolkit/model.js), as the notebook and the frontend benchmark do. Nothing here is a test: no thresholds.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import shutil
import statistics
import tempfile
import threading
from pathlib import Path

import numpy as np

from benchmarks.common import parse_args, table

ROOT = Path(__file__).parent.parent
STATIC = ROOT / "logprob_viz" / "views" / "static"
MODEL_JS = ROOT / "js" / "toolkit" / "model.js"
WORDS = ["the", "robot", "may", "not", "injure", "a", "human", "being", "café", "naïve", "東京", "🙂", "größe", "über"]

PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>body{margin:8px;width:1000px}</style></head>
<body><div id="host"></div><script type="module">
const { makeModel, setPath } = await import("/model.js");
const mod = await import("/compare.js");
const def = mod.default;
const afterPaint = () => new Promise((r) => requestAnimationFrame(() => {
  const ch = new MessageChannel(); ch.port1.onmessage = () => r(performance.now()); ch.port2.postMessage(0); }));
let model;
window.lvRender = async () => {
  const meta = await (await fetch("/state.json")).json();
  const blob = await (await fetch("/state.bin")).arrayBuffer();
  let offset = 0;
  meta.buffer_paths.forEach((path, i) => {
    const len = meta.buffer_lengths[i];
    setPath(meta.state, path, new DataView(blob.slice(offset, offset + len)));
    offset += len;
  });
  model = makeModel(meta.state);
  const el = document.getElementById("host");
  el.replaceChildren();
  const t0 = performance.now();
  def.render({ model, el });
  await new Promise((r) => requestAnimationFrame(r));
  await new Promise((r) => requestAnimationFrame(r));
  return { ms: performance.now() - t0, elements: el.getElementsByTagName("*").length };
};
window.lvDiff = async () => {
  await afterPaint();
  const t0 = performance.now();
  model.set("color_mode", "difference");
  const t1 = await afterPaint();
  model.set("color_mode", "probability");
  await afterPaint();
  return t1 - t0;
};
window.lvHover = async (count) => {
  let x = 7;
  const rand = () => ((x = (x * 1664525 + 1013904223) >>> 0) / 4294967296);
  const spans = document.querySelectorAll(".lvc-span");
  const out = [];
  for (let k = 0; k < count; k++) {
    const el = spans[Math.floor(rand() * spans.length)];
    el.scrollIntoView({ block: "center" });
    // blocks that came into view are laid out a frame later (content-visibility: auto): let them settle first,
    // as they do before a person's pointer gets there
    for (let f = 0; f < 3; f++) await afterPaint();
    const t = await new Promise((r) => requestAnimationFrame(() => {
      const t0 = performance.now();
      el.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
      const ch = new MessageChannel(); ch.port1.onmessage = () => r(performance.now() - t0); ch.port2.postMessage(0);
    }));
    out.push(t);
  }
  return out;
};
window.lvReady = true;
</script></body></html>"""


def make_text(n_bytes: int, rng) -> str:
    parts, size = [], 0
    while size < n_bytes:
        w = WORDS[rng.integers(len(WORDS))] + (". " if rng.random() < 0.1 else " ")
        parts.append(w)
        size += len(w.encode())
    return "".join(parts)


def cut(text: str, row: int, rng) -> list[str]:
    """Row 0: one token per word (with its space); the others, like BPE tokenizers of other sizes,
    split each word into 1-3 pieces at random character boundaries, some keeping its space apart."""
    words = [w + " " for w in text.split(" ")[:-1]]
    if row == 0:
        return words
    tokens = []
    for w in words:
        n = len(w)
        pieces = int(rng.integers(1, 4)) if n > 2 else 1
        cuts = sorted(set(rng.integers(1, n, pieces - 1).tolist())) if pieces > 1 else []
        bounds = [0, *cuts, n]
        tokens.extend(w[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    return tokens


def state_for(rows: int, n_bytes: int):
    import logprob_viz as lv
    from logprob_viz.records.comparison import compare
    from logprob_viz.views.compare.view import CompareView
    from logprob_viz.views.page import state_parts

    rng = np.random.default_rng(0)
    text = make_text(n_bytes, rng)
    traces = []
    for r in range(rows):
        tokens = cut(text, r, rng)
        n = len(tokens)
        top = np.sort(rng.uniform(-8, -0.01, (n, 5)), axis=1)[:, ::-1].astype(np.float32)
        alternatives = [[t, " a", " b", " c", " d"] for t in tokens]
        traces.append(lv.Trace(tokens=tokens, logprobs=top[:, 0], top_tokens=alternatives, top_logprobs=top,
                               meta={"model": f"row {r}"}))
    view = CompareView(compare(traces))
    state, paths, buffers = state_parts(view)
    return state, paths, buffers, sum(len(t) for t in traces), len(view.comparison)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # one line per request would bury the table
        pass


def serve(folder: Path):
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bytes", type=int, default=10_000)
    ap.add_argument("--rows", default="2,4,8")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--hovers", type=int, default=40)
    args = parse_args(ap, quick={"bytes": 2000, "rows": "2,4", "repeats": 1, "hovers": 5})
    from playwright.sync_api import sync_playwright

    results = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        folder = Path(tmp)
        shutil.copy(STATIC / "compare.js", folder / "compare.js")
        shutil.copy(MODEL_JS, folder / "model.js")
        (folder / "index.html").write_text(PAGE)
        server = serve(folder)
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
        for rows in [int(x) for x in args.rows.split(",")]:
            state, paths, buffers, n_tokens, n_spans = state_for(rows, args.bytes)
            (folder / "state.json").write_text(json.dumps(
                {"state": state, "buffer_paths": paths, "buffer_lengths": [len(bytes(b)) for b in buffers]}))
            (folder / "state.bin").write_bytes(b"".join(bytes(b) for b in buffers))
            render, diff, hover, elements = [], [], [], 0
            for _ in range(args.repeats):
                page = browser.new_page(viewport={"width": 1100, "height": 900})
                page.goto(url)
                page.wait_for_function("window.lvReady === true")
                got = page.evaluate("window.lvRender()")
                render.append(got["ms"])
                elements = got["elements"]
                diff.append(page.evaluate("window.lvDiff()"))
                hover.extend(page.evaluate(f"window.lvHover({args.hovers})"))
                page.close()
            hover.sort()
            results[rows] = {
                "tokens": n_tokens, "spans": n_spans, "elements": elements,
                "render": statistics.median(render), "diff": statistics.median(diff),
                "hover50": hover[len(hover) // 2], "hover95": hover[int(0.95 * (len(hover) - 1))],
            }
        browser.close()
        server.shutdown()
    base = results[min(results)]
    rows_out = []
    for rows, r in results.items():
        rows_out.append([
            rows, r["tokens"], r["spans"], r["elements"],
            f"{r['render']:.0f} ({r['render'] / base['render']:.2f}x)",
            f"{r['diff']:.0f} ({r['diff'] / base['diff']:.2f}x)",
            f"{r['hover50']:.1f} / {r['hover95']:.1f}",
        ])
    print(f"Compare view, {args.bytes} bytes per row, medians of {args.repeats} fresh pages "
          f"(ratios to {min(results)} rows, same run)\n")
    print(table(["rows", "tokens", "spans", "DOM elements", "render ms", "difference mode ms", "hover ms p50 / p95"],
                rows_out))


if __name__ == "__main__":
    main()
