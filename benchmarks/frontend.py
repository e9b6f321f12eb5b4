"""Frontend benchmarks: the widget in headless chromium, side by side with CircuitsVis.

    python -m benchmarks.frontend [--repeats 3] [--first-pages 12] [--sizes 1000,10000,100000] [--hovers 50] [--quick]

Prints Markdown tables:
1. first render (render() called -> the first frame holding a token painted) for 1k/10k/100k
   tokens at K=20, in a fresh page and again in the same page, ours vs CircuitsVis `token_log_probs`
   on the same data, as a ratio;
2. longest task (PerformanceObserver 'longtask') during render and during a scroll through
   the whole text; hover -> next painted frame p50/p95; where the hover frame's time goes, by
   phase (script, style, layout, pre-paint, paint, composite, raster) from a Chromium trace, next
   to an earlier build's (`--save-breakdown` then `--baseline`); a view that grows: a 10,000-token
   stream of the kernel's append messages, longest task and frame gaps meanwhile;
3. payload bytes per token at K=20, next to the same data as OpenAI chat-completions JSON;
4. the targets of issues 5, 9, 13 and 21, met or missed (the explorer's first click, in a real
   JupyterLab, is `benchmarks.frontend_click`).

The data: a real trace of the default model (300 generated tokens, top_logprobs=20; made once
and cached in ~/.cache/logprob_viz/), tiled to each size. The page state is built generically:
`LogprobView(trace).get_state()`, split by the wire codec's `split_buffers` into JSON + binary
buffers (`logprob_viz.views.page.state_parts`, as the HTML export does), put back in the page as
DataViews at their paths (as the notebook does), behind a minimal generic model object
(benchmarks/frontend_harness.html). Nothing here depends on the
widget's traits; of its DOM only on "tokens carry a data-index attribute" (hover targets skip
anything inside .lv-chart / .lv-panel, which number their rows the same way).

The first run generates the base trace (~1-4 min on a 2-core CPU); later runs take ~5 min (of which
`--first-pages`, the first render's more pages, ~3 min).
CircuitsVis at 100k tokens is opt-in (--peer-max 100000): its render blocks the tab > 1 min.

Every repeat uses a fresh page; ours and the peer alternate; tables quote medians. A first render
varies by about ±5 ms from page to page on 2 cores, so its median is over `--repeats` + `--first-pages` pages.

The pieces: frontend_data.py (the traces, states, messages and peer pages), frontend_server.py
(the static server and chromium), frontend_measure.py (the pages' measurements),
frontend_tables.py and frontend_targets.py (one function per table); this module runs them.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine, parse_args
from benchmarks.frontend_data import BASE_TOKENS, base_trace, log, prepare_pages, prepare_stream
from benchmarks.frontend_measure import PEER_TIMEOUT_S, STREAM_FIRST, measure_pages
from benchmarks.frontend_server import CHROMIUM, CHROMIUM_ARGS, HERE, Server, bundle_id
from benchmarks.frontend_tables import (
    before_after_table,
    breakdown_table,
    hover_breakdown,
    hover_table,
    payload_table,
    render_table,
    stream_table,
)
from benchmarks.frontend_targets import target_values, targets_table

# --quick: one page per size at 1k and 10k, CircuitsVis at 1k only, a 1,000-token stream, a short base trace
QUICK = {"repeats": 1, "first_pages": 1, "sizes": "1000,10000", "hovers": 4, "scroll_steps": 10, "peer_max": 1000,
         "stream": 1000, "base_tokens": 40}


def arguments() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--first-pages", type=int, default=12,
                    help="more fresh pages per size (and build) that time the first render alone (~2 s each)")
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--hovers", type=int, default=50, help="hovers per size, spread over the repeats")
    ap.add_argument("--scroll-steps", type=int, default=60, help="frames a scroll through the whole text takes at most")
    ap.add_argument(
        "--peer-max",
        type=int,
        default=10000,
        help="largest size to give CircuitsVis (at 100k its 65 MB page blocks the tab for over a minute, and a "
        "blocked page cannot be timed out from playwright, so 100k is opt-in: --peer-max 100000)",
    )
    ap.add_argument("--peer-timeout", type=float, default=PEER_TIMEOUT_S, help="seconds a CircuitsVis render may take")
    ap.add_argument("--save-breakdown", type=Path, help="write the hover frame's breakdown by phase (JSON) here")
    ap.add_argument(
        "--baseline",
        type=Path,
        default=HERE / "frontend_hover_baseline.json",
        help="a --save-breakdown file from an earlier build: its breakdown is printed next to this run's as 'before' "
        "(default: the build before issue 13's containment, recorded on this machine)",
    )
    ap.add_argument(
        "--before",
        type=Path,
        help="a folder with an earlier build's widget.js and widget.css: its pages are measured in this run, "
        "alternating with the build under test, and shown side by side with it",
    )
    ap.add_argument("--stream", type=int, default=10000, help="tokens of the streamed view (0: no stream run)")
    ap.add_argument("--stream-batch", type=int, default=100, help="tokens per append message")
    ap.add_argument("--base-tokens", type=int, default=BASE_TOKENS, help="new tokens of the real trace that is tiled")
    return parse_args(ap, quick=QUICK)


def main() -> None:
    args = arguments()
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()

    base, how = base_trace(args.base_tokens)
    log(f"base trace: {len(base)} tokens, K={base.k} ({how})")
    with tempfile.TemporaryDirectory(prefix="lv-frontend-") as tmp:
        server = Server(Path(tmp), before=args.before)
        bundle = bundle_id(server.root / "static" / "widget.js")  # as copied for this run (it may be rebuilt meanwhile)
        try:
            info = prepare_pages(server, base, sizes, args.peer_max)
            if args.stream:
                prepare_stream(server, base, args.stream, STREAM_FIRST, args.stream_batch)
            measured = measure_pages(
                server.url, sizes, repeats=args.repeats, hovers=args.hovers, scroll_steps=args.scroll_steps,
                peer_max=args.peer_max, peer_timeout=args.peer_timeout, stream=args.stream,
                before=args.before is not None, first_pages=args.first_pages,
            )
        finally:
            server.close()

    breakdown = hover_breakdown(measured, sizes, bundle)
    before_bundle = bundle_id(args.before / "widget.js", str(args.before / "widget.js")) if args.before else None
    before_breakdown = hover_breakdown(measured, sizes, before_bundle, "before") if args.before else None
    if args.save_breakdown:
        args.save_breakdown.write_text(json.dumps(breakdown, indent=1))
    sections = [
        render_table(measured, info, sizes, repeats=args.repeats, peer_max=args.peer_max,
                     peer_timeout=args.peer_timeout),
        hover_table(measured, sizes, scroll_steps=args.scroll_steps),
        breakdown_table(breakdown, sizes, args.baseline, same_run=before_breakdown),
    ]
    if measured.before:
        sections.append(before_after_table(measured, sizes, before_bundle))
    if measured.stream_runs:
        sections.append(stream_table(measured, stream=args.stream, stream_batch=args.stream_batch))
    sections.append(payload_table(info, sizes))
    note = (
        f"Data: a real greedy trace of the default model ({len(base)} tokens incl. {base.prompt_len} prompt, "
        f"top_logprobs={base.k}, {how}), tiled. Browser: {CHROMIUM} headless ({', '.join(CHROMIUM_ARGS)}), "
        f"viewport 1000×800. Bundle: {bundle}. Machine: {machine()}. Took {time.perf_counter() - started:.0f} s."
    )
    sections.append(targets_table(target_values(measured, info, sizes), stream=args.stream, note=note))
    print("\n\n".join(sections))


if __name__ == "__main__":
    main()
