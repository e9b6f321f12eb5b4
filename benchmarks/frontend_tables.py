"""The frontend benchmark's tables: each function turns what the pages measured into one Markdown
section (heading, table, the note saying what was measured). The targets are in frontend_targets.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from benchmarks.common import median, table
from benchmarks.frontend_measure import PHASE_ORDER, STREAM_FIRST, STREAM_INTERVAL_MS, TRACE_CATEGORIES, Measured


def fmt_ms(x) -> str:
    if x is None:
        return "—"
    return f"{x:.0f} ms" if x >= 10 else f"{x:.1f} ms"


def task_cell(values) -> str:
    """Median longest task over the pages (0 = no task over 50 ms), with the worst page's."""
    m, worst = median(values), max(values)
    cell = fmt_ms(m) if m > 0 else "< 50 ms"
    return cell + (f" (worst {fmt_ms(worst)})" if worst > m else "")


def pct(values, q) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(q * len(v)) - 1))]


def section(title: str, headers: list[str], rows: list[list[object]], note: str) -> str:
    return f"### Frontend: {title}\n\n{table(headers, rows)}\n\n{note}"


def render_row(n: int, ours: list[dict], firsts: list[float], peer: list[dict], peer_max: int,
               peer_timeout: float) -> list[str]:
    """One size's first render: ours (`firsts`: every first render of ours), CircuitsVis (or why it
    has no time), and the ratio."""
    o = median(firsts)
    ok_vis = all(x["visible"] for x in ours)
    pv = [x["ms"] for x in peer if x.get("ms") is not None]
    pm = median(pv) if pv else None
    perr = [x["error"] for x in peer if x.get("error")]
    peer_cell = (
        fmt_ms(pm)
        if pm is not None
        else (f"not run (`--peer-max {n}` runs it)" if n > peer_max else f"> {peer_timeout:.0f} s (stopped: {perr[0]})")
    )
    return [
        f"{n:,}",
        fmt_ms(o) + ("" if ok_vis else " (tokens not visible!)"),
        fmt_ms(median([x["again"] for x in ours])) if all("again" in x for x in ours) else "—",
        f"{ours[0]['elements']:,}",
        peer_cell + (f" (n={len(pv)})" if pv else ""),
        f"{peer[0]['elements']:,}" if pv else "—",
        (f"{o / pm:.2f} ({pm / o:.1f}× faster)" if o < pm else f"{o / pm:.2f}")
        if pm
        else (f"< {o / (peer_timeout * 1000):.3f}" if perr else "—"),
    ]


def render_table(measured: Measured, info: dict, sizes: list[int], *, repeats: int, peer_max: int,
                 peer_timeout: float) -> str:
    """1. First render for each size, ours vs CircuitsVis as a ratio."""
    rows = [render_row(n, measured.ours[n], measured.first_renders(n), measured.peer[n], peer_max, peer_timeout)
            for n in sizes]
    extra = len(measured.first.get(sizes[0], []))
    headers = ["tokens", "ours: render → first token painted", "ours again, same page", "our DOM elements",
               "CircuitsVis", "its DOM elements", "ours / CircuitsVis"]
    note = (
        f"Medians of {repeats} fresh pages each, ours and CircuitsVis alternating"
        + (f"; ours' first render over {repeats + extra} fresh pages: {extra} more timed it alone (a first render "
           "varies by about ±5 ms from page to page on this machine)" if extra else "")
        + ". Ours: from calling the "
        "bundle's `render({model, el})` (bundle imported, state decoded from JSON and put back as DataViews "
        "beforehand, then the page left 1 s to settle after its load, as a notebook's page long has; until "
        "2026-12-04 it rendered at once, waiting on the browser's own load work: 1k 67 ms against 44 ms) "
        "to the end of the rendering (style, layout, paint) of the first frame that holds a token "
        "(until 2026-12-04 it was to two frames after the call, which timed a view built in a task of its own before "
        "its tokens were painted). 'Again, same page': the same view rendered a second time in that page, from a "
        "fresh model (what a notebook's second view costs: the page has run the bundle's code once). "
        "CircuitsVis 1.43.3: its `local_src` page (bundle inlined; its call made from a timer 1 s after the load), "
        "from just before its `CircuitsVis.render(...)` call to the end of the rendering of the first frame "
        "whose container holds text. "
        "It was given the props `token_log_probs` computes (top-20 tokens and logprobs, the chosen "
        "token's 0-based rank and logprob), taken from the same trace, because `token_log_probs` itself needs "
        "log_probs [N, vocab]: 197 MB at 1k tokens × 49,152 vocab, 19.7 GB at 100k. "
        + (
            f"Check at {sizes[0]:,} tokens: {info['peer_check']}, the page we load is "
            f"{info[sizes[0]].get('peer_bytes', 0) / 1e6:.1f} MB. "
            if "peer_check" in info
            else ""
        )
        + f"CircuitsVis ran up to {peer_max:,} tokens (`--peer-max`, default 10,000): at 100k its page is 65 MB "
        "and its render is one "
        "main-thread task of over a minute, which playwright cannot interrupt (`--peer-max 100000` measures it, "
        "once). Ratios under 1 mean ours is faster."
    )
    return section("first render (headless chromium, K=20)", headers, rows, note)


def p50_p95(values) -> str:
    return f"{fmt_ms(pct(values, 0.5))} / {fmt_ms(pct(values, 0.95))}" if values else "—"


def settle_cell(frames: list[int]) -> str:
    """Frames a jump scroll took before the hover (see the harness): p50 / max."""
    return f"{median(frames):.0f} / {max(frames)}" if frames else "—"


def hover_row(n: int, ours: list[dict], peer: list[dict]) -> list[str]:
    """One size's longest tasks (render, scroll), slowest scroll frame and hover latencies."""
    hv = [x["hover"] for x in ours if x["hover"]]
    paint = [v for h in hv for v in h["toPaint"]]
    pv = [x["task"] for x in peer if x.get("ms") is not None]
    return [
        f"{n:,}",
        task_cell([x["task"] for x in ours]),
        task_cell([x["scroll_task"] for x in ours]),
        fmt_ms(median([x["scroll"]["worstFrame"] for x in ours])),
        p50_p95(paint),
        p50_p95([v for h in hv for v in h["handler"]]),
        p50_p95([v for h in hv for v in h["work"]]),
        p50_p95([v for h in hv for v in h["idle"]]),
        settle_cell([v for h in hv for v in h.get("settle", [])]),
        f"{len(paint)}",
        task_cell(pv) if pv else "—",
    ]


def hover_table(measured: Measured, sizes: list[int], *, scroll_steps: int) -> str:
    """2. Longest task during render and scroll; hover -> painted frame, with its parts."""
    rows = [hover_row(n, measured.ours[n], measured.peer[n]) for n in sizes]
    headers = [
        "tokens",
        "longest task, render",
        "longest task, scroll",
        "slowest scroll frame",
        "hover → painted frame p50 / p95",
        "of which handler p50 / p95",
        "handler + style/layout p50 / p95",
        "no-hover frame p50 / p95",
        "frames to settle after the scroll p50 / max",
        "hovers",
        "CircuitsVis longest task, render",
    ]
    note = (
        "Long tasks are those over 50 ms (the API reports no shorter ones). Scroll: the page's scroller from top to "
        f"bottom in at most {scroll_steps} steps of at least 0.9 viewport, one painted frame each. "
        "Hover: a random "
        "visible token (after scrolling to a random place, and waiting until three frames in a row took under "
        "4 ms: the frames in which the scroll's newly shown blocks are laid out are the scroll's, not the "
        "hover's; at most 30 frames) gets pointerover/mouseover dispatched from inside a "
        "requestAnimationFrame callback, where Chromium dispatches real mouse movement (rAF-aligned input); "
        "'painted frame' ends when a message posted from that callback arrives, i.e. after that frame's style, layout "
        "and paint. 'handler' is the event dispatch alone, 'handler + style/layout' adds a forced layout; 'no-hover "
        "frame' is the same measurement of a frame just before, with nothing dispatched (the floor on this machine). "
        "Only hovers "
        "that changed the widget's DOM count; p50/p95 over all hovers of the fresh pages."
    )
    return section("longest task and hover latency", headers, rows, note)


def hover_breakdown(measured: Measured, sizes: list[int], bundle: str, which: str = "ours") -> dict:
    """Per size, the median ms of each phase of a hover frame (and the sum's p50 / p95): what
    `--save-breakdown` writes and a later run's `--baseline` reads. `which`: "ours" or "before"
    (the pages of the `--before` build)."""
    pages = getattr(measured, which)
    breakdown = {"bundle": bundle, "sizes": {}}
    for n in sizes:
        per = [p for x in pages.get(n, []) if x["hover"] for p in x["hover"].get("phases", [])]
        if per:
            breakdown["sizes"][str(n)] = {
                "hovers": len(per),
                **{ph: median([p[ph] for p in per]) for ph in PHASE_ORDER},
                "total": median([sum(p.values()) for p in per]),
                "total_p95": pct([sum(p.values()) for p in per], 0.95),
            }
            counts = [c for x in pages.get(n, []) if x["hover"] for c in x["hover"].get("counts", [])]
            if counts:
                breakdown["sizes"][str(n)]["styled"] = median([c["styled"] for c in counts])
                breakdown["sizes"][str(n)]["laid_out"] = median([c["laid_out"] for c in counts])
                behind = sum(1 for c in counts if c.get("tasks", 0) > 0)
                breakdown["sizes"][str(n)]["behind_build"] = f"{behind} of {len(counts)}"
    return breakdown


def breakdown_table(breakdown: dict, sizes: list[int], baseline: Path | None, same_run: dict | None = None) -> str:
    """2b. Where the hover frame's time goes, by phase, next to an earlier build's ('before'):
    measured in this run (`same_run`, from `--before`) or recorded by an earlier one (`baseline`)."""
    before = same_run or (json.loads(baseline.read_text()) if baseline and baseline.is_file() else None)
    rows = []
    for n in sizes:
        runs = ([("before", before["sizes"].get(str(n)))] if before else []) + [("now", breakdown["sizes"].get(str(n)))]
        for label, b in runs:
            if not b:
                continue
            rows.append(
                [f"{n:,}", label]
                + [f"{b[ph]:.2f}" for ph in PHASE_ORDER]
                + [f"{b['total']:.2f} / {b['total_p95']:.2f}", str(b["hovers"])]
                + [f"{b[c]:.0f}" if c in b else "—" for c in ("styled", "laid_out")]
                + [b.get("behind_build", "—")]
            )
    note = (
        "From a Chromium trace (categories " + ", ".join(TRACE_CATEGORIES) + ") recorded during the hovers: the "
        "self time of each frame phase (script: event dispatch and the rAF callback; style: Recalculate style; "
        "layout; pre-paint and paint: recording the display list; composite: layerize and commit; raster: the "
        "raster workers) in the window from the hover's dispatch to the end of its frame, marked with "
        "performance.mark. The last two columns count the work rather than time it (medians per hover): elements "
        "whose style was recalculated (UpdateLayoutTree's elementCount) and layout objects laid out (Layout's "
        "dirtyObjects); a loaded machine stretches the milliseconds, not these. The last: hovers in whose window "
        "one of the view's own tasks ran (a timer or an idle callback: a long text still being built)."
        + (f" 'before': measured in this run, pages alternating with ours, bundle {before['bundle']}." if same_run
           else f" 'before': {baseline.name}, bundle {before['bundle']}." if before else "")
    )
    headers = ["tokens", "build"] + PHASE_ORDER + ["sum p50 / p95", "hovers", "elements restyled", "layout objects",
                                                   "hovers whose frame waited for a build task"]
    return section("where a hover frame's time goes (Chromium tracing, ms per hover, median)", headers, rows, note)


def stream_table(measured: Measured, *, stream: int, stream_batch: int) -> str:
    """2c. A view that grows: one row per fresh page of the streamed view."""
    rows = [
        [
            f"{r['tokens']:,}",
            f"{r['messages']} × {stream_batch}",
            fmt_ms(r["ms"]),
            fmt_ms(r["task"]) if r["task"] else "< 50 ms",
            fmt_ms(r["p95Frame"]),
            fmt_ms(r["worstFrame"]),
        ]
        for r in measured.stream_runs
    ]
    headers = ["tokens", "appends × tokens", "first append → last token shown", "longest task", "frame gap p95",
               "worst frame gap"]
    note = (
        f"A view of the first {STREAM_FIRST} tokens gets the kernel's \"append\" messages (made by the wire "
        f"codec, `encode_append`, as `LogprobView` sends them), one every {STREAM_INTERVAL_MS} ms (the widget's "
        "batching interval), each with its binary buffers, until every token's span exists. Frame gaps: "
        "requestAnimationFrame to requestAnimationFrame meanwhile (16.7 ms when the page keeps up). "
        "One row per fresh page."
    )
    return section(f"a view that grows ({stream:,} tokens streamed in)", headers, rows, note)


def payload_table(info: dict, sizes: list[int]) -> str:
    """3. Payload bytes per token, next to the same data as OpenAI JSON and CircuitsVis's page."""
    rows = []
    for n in sizes:
        i = info[n]
        ours_b = i["binary"] + i["json"]
        rows.append(
            [
                f"{n:,}",
                f"{i['binary'] / n:.0f}",
                f"{i['json'] / n:.1f}",
                f"{ours_b / n:.0f}",
                f"{i['openai'] / n:.0f}",
                f"{i['openai'] / ours_b:.1f}×",
                f"{i['peer_bytes'] / n:.0f}" if "peer_bytes" in i else "—",
            ]
        )
    headers = ["tokens", "ours: binary buffers", "ours: JSON rest", "ours: total B/token",
               "OpenAI logprobs JSON B/token", "OpenAI / ours", "CircuitsVis page B/token"]
    n0 = sizes[0]
    note = (
        f"Ours: the sum of the binary buffers plus the compact JSON of the rest of `get_state()`, without the bundle "
        f"and CSS (`_esm`, `_css`: {info[n0]['fixed']:,} bytes once per widget). Binary state keys: "
        f"{', '.join(info[n0]['binary_keys'])}. OpenAI: compact JSON of `choices[0].logprobs` "
        "(`content[]` with token, logprob, bytes, top_logprobs[20]). CircuitsVis: its whole `local_src` page "
        "(about 1.3 MB of inlined bundle, then the props as a JS literal)."
    )
    return section("payload per token (K=20)", headers, rows, note)


def before_after_table(measured: Measured, sizes: list[int], before_bundle: str) -> str:
    """2d. The `--before` build and this one side by side: first render, longest task, hover."""
    rows = []
    for n in sizes:
        for label, pages in (("before", measured.before.get(n, [])), ("now", measured.ours[n])):
            if not pages:
                continue
            hv = [x["hover"] for x in pages if x["hover"]]
            firsts = measured.first_renders(n, before=label == "before")
            rows.append([
                f"{n:,}",
                label,
                fmt_ms(median(firsts)) + (f" ({len(firsts)} pages)" if len(firsts) != len(pages) else ""),
                fmt_ms(median([x["again"] for x in pages])),
                task_cell([max(x["task"], x["scroll_task"]) for x in pages]),
                p50_p95([v for h in hv for v in h["toPaint"]]),
                p50_p95([v for h in hv for v in h["work"]]),
                p50_p95([v for h in hv for v in h["idle"]]),
                f"{len(pages)}",
            ])
    headers = ["tokens", "build", "first render (median)", "again, same page", "longest task, render or scroll",
               "hover → painted frame p50 / p95", "handler + style/layout p50 / p95", "no-hover frame p50 / p95",
               "pages"]
    note = (
        f"'before': {before_bundle}; 'now': the build under test. Both in this run, on the same data and the same "
        "hovered tokens, each repeat's pages alternating which build goes first; measured as in the tables above."
    )
    return section("before and after, side by side", headers, rows, note)
