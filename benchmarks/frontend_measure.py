"""The frontend benchmark's measurements in headless chromium: a fresh page per repeat, ours and
CircuitsVis alternating; first render, longest tasks, a scroll, hovers (with a Chromium trace of
where each hover frame's time goes), and a view that grows by the kernel's append messages.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

from playwright.sync_api import sync_playwright

from benchmarks.frontend_data import log
from benchmarks.frontend_server import PAGE_SETTLE_MS, launch

STREAM_FIRST = 10  # tokens the streamed view starts with
STREAM_INTERVAL_MS = 100  # widget.BATCH_S: how often appends reach the browser while tokens arrive
PEER_TIMEOUT_S = 30  # default for --peer-timeout: a peer render that takes longer is stopped and reported as such
# After a page is closed its renderer still tears down its DOM and heap (seconds of CPU after a
# 100k-token page, on the same 2 cores): the next page waits this long, so that it is not timed
# against the last one's teardown (which made the page after a 100k page, 1k, look slow).
SETTLE_S = 1.5

# Chromium trace events of a frame, by phase (names as in the Performance panel's "Recalculate
# style", "Layout", "Paint", ...). Durations are self times: a forced layout inside the hover's
# script counts as layout, not script.
PHASES = {
    "FireAnimationFrame": "script",
    "FunctionCall": "script",
    "EventDispatch": "script",
    "RunMicrotasks": "script",
    "TimerFire": "script",
    "FireIdleCallback": "script",
    "UpdateLayoutTree": "style",
    "Layout": "layout",
    "PrePaint": "pre-paint",
    "Paint": "paint",
    "Layerize": "composite",
    "Commit": "composite",
    "UpdateLayer": "composite",
    "CompositeLayers": "composite",
    "RasterTask": "raster",
}
PHASE_ORDER = ["script", "style", "layout", "pre-paint", "paint", "composite", "raster"]
TRACE_CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink.user_timing"]


def frame_breakdown(trace_json: bytes, marks: list[str]) -> list[dict]:
    """Per hover (between its `<mark>-start` and `<mark>-end` user-timing marks): ms by phase.

    Self time of each PHASES event on its own thread (children subtracted), summed over every
    thread of the page's renderer and raster workers whose events start inside the window.
    """
    events = json.loads(trace_json)
    events = events["traceEvents"] if isinstance(events, dict) else events
    at = {}
    for e in events:
        if e.get("cat", "").find("user_timing") >= 0 and e.get("name", "").startswith("lvhover-"):
            at[e["name"]] = e["ts"]
    windows = [(at[f"{m}-start"], at[f"{m}-end"]) for m in marks if f"{m}-start" in at and f"{m}-end" in at]
    # Self times per thread: a stack of open events.
    spans = []
    by_thread = {}
    for e in events:
        if e.get("ph") == "X" and e.get("name") in PHASES and "dur" in e:
            by_thread.setdefault((e.get("pid"), e.get("tid")), []).append(e)
    for evs in by_thread.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []  # [end, self-time slot]
        for e in evs:
            while stack and stack[-1][0] <= e["ts"]:
                stack.pop()
            slot = {"ts": e["ts"], "phase": PHASES[e["name"]], "self": float(e["dur"])}
            if stack:
                stack[-1][1]["self"] -= e["dur"]
            stack.append((e["ts"] + e["dur"], slot))
            spans.append(slot)
    spans.sort(key=lambda s: s["ts"])
    out = []
    for start, end in windows:
        got = dict.fromkeys(PHASE_ORDER, 0.0)
        for s in spans:
            if start <= s["ts"] < end:
                got[s["phase"]] += max(0.0, s["self"]) / 1000.0  # µs -> ms
        out.append(got)
    return out



def frame_counts(trace_json: bytes, marks: list[str]) -> list[dict]:
    """Per hover: how many elements the frame restyled and how many layout objects it laid out
    (UpdateLayoutTree's elementCount, Layout's dirtyObjects, summed over the window): the work
    itself, which a loaded machine does not change, unlike the milliseconds), and how many of the
    view's own tasks (timers, idle callbacks: a long text's build) ran inside the hover's window."""
    events = json.loads(trace_json)
    events = events["traceEvents"] if isinstance(events, dict) else events
    at = {e["name"]: e["ts"] for e in events if e.get("name", "").startswith("lvhover-")}
    windows = [(at[f"{m}-start"], at[f"{m}-end"]) for m in marks if f"{m}-start" in at and f"{m}-end" in at]
    out = []
    for start, end in windows:
        inside = [e for e in events if e.get("ph") == "X" and start <= e.get("ts", -1) < end]
        out.append({
            "styled": sum(e.get("args", {}).get("elementCount", 0) for e in inside if e["name"] == "UpdateLayoutTree"),
            "laid_out": sum(e.get("args", {}).get("beginData", {}).get("dirtyObjects", 0)
                            for e in inside if e["name"] == "Layout"),
            # the view's own tasks that ran before the hover's frame ended (a build slice: a timer or an
            # idle callback; the harness sets neither in that window)
            "tasks": sum(1 for e in inside if e["name"] in ("TimerFire", "FireIdleCallback")),
        })
    return out


def ready_page(browser, url: str, name: str, folder: str):
    """A fresh page of the bundle in `folder` with state `name` loaded and the page settled, not rendered yet."""
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        page.goto(f"{url}{'' if folder == '/static' else folder}/index.html")
        page.evaluate(f"lvImport({json.dumps(folder)})")
        page.evaluate(f"lvLoad({json.dumps(name)})")
        page.wait_for_timeout(PAGE_SETTLE_MS)
    except Exception:
        page.close()
        raise
    return page


def measure_ours(browser, url: str, name: str, hovers: int, scroll_steps: int, seed: int,
                 folder: str = "/static") -> dict:
    """One fresh page of the bundle in `folder` (/static: the build under test; /before: `--before`)."""
    page = ready_page(browser, url, name, folder)
    try:
        r = page.evaluate("lvRender()")
        page.wait_for_timeout(100)  # let the long-task entries arrive
        r["task"] = page.evaluate(f"lvLongest({r['start']}, {r['end']})")
        # The same view again in this page (a fresh model, the same bundle): what a notebook's second
        # view costs, once the page has run the bundle's code and laid out its styles and glyphs
        page.wait_for_timeout(300)
        page.evaluate(f"lvLoad({json.dumps(name)})")
        r["again"] = page.evaluate("lvRender()")["ms"]
        s = page.evaluate(f"lvScroll({scroll_steps})")
        page.wait_for_timeout(100)
        r["scroll_task"] = page.evaluate(f"lvLongest({s['start']}, {s['end']})")
        r["scroll"] = s
        r["hover"] = None
        if hovers:
            browser.start_tracing(page=page, categories=TRACE_CATEGORIES)
            try:
                r["hover"] = page.evaluate(f"lvHover({hovers}, {seed})")
            finally:
                raw = browser.stop_tracing()
            r["hover"]["phases"] = frame_breakdown(raw, r["hover"].get("marks", []))
            r["hover"]["counts"] = frame_counts(raw, r["hover"].get("marks", []))
        r["longtask_api"] = page.evaluate("lvLongTaskSupported")
        return r
    finally:
        page.close()


def measure_first(browser, url: str, name: str, folder: str = "/static") -> float:
    """One fresh page that times the first render alone (as `measure_ours` does, nothing after it): ms."""
    page = ready_page(browser, url, name, folder)
    try:
        r = page.evaluate("lvRender()")
        if not r["visible"]:
            raise RuntimeError(f"{name}: the first token was not visible after the first render")
        return r["ms"]
    finally:
        page.close()


def measure_stream(browser, url: str, name: str, interval_ms: int) -> dict:
    """A view of the stream's first tokens, then the kernel's appends one every `interval_ms`."""
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        page.goto(f"{url}/index.html")
        page.evaluate("lvImport()")
        page.evaluate(f"lvLoad({json.dumps(name + '-state')})")
        page.evaluate("lvRender()")
        r = page.evaluate(f"lvStream({json.dumps(name)}, {interval_ms})")
        page.wait_for_timeout(100)  # let the long-task entries arrive
        r["task"] = page.evaluate(f"lvLongest({r['start']}, {r['end']})")
        return r
    finally:
        page.close()



def measure_peer(browser, url: str, name: str, timeout_s: float) -> dict:
    """CircuitsVis's page; on a timeout the page is left busy (closing it would wait for it):
    the caller then closes the whole browser, which ends its processes."""
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    try:
        page.goto(f"{url}/data/{name}.html", wait_until="commit")
        page.wait_for_function("window.__cvMs !== undefined", timeout=timeout_s * 1000, polling=200)
    except Exception as e:  # noqa: BLE001 - a timeout or a crashed page is a result here
        return {"ms": None, "error": type(e).__name__, "stuck": True}
    ms = page.evaluate("window.__cvMs")
    page.wait_for_timeout(100)
    t0 = page.evaluate("window.__cvT0")
    task = page.evaluate(f"lvLongest({t0}, {t0 + ms})")
    elements = page.evaluate("document.body.getElementsByTagName('*').length")
    page.close()
    return {"ms": ms, "task": task, "elements": elements}



@dataclass
class Measured:
    """What the pages measured: per size a list of results, one per fresh page (ours, CircuitsVis),
    and one result per fresh page of the growing view."""

    ours: dict[int, list[dict]]
    peer: dict[int, list[dict]]
    stream_runs: list[dict] = field(default_factory=list)
    before: dict[int, list[dict]] = field(default_factory=dict)  # the --before build's pages, per size
    # ms of the pages that time the first render alone (`--first-pages`), per size: ours, the --before build's
    first: dict[int, list[float]] = field(default_factory=dict)
    first_before: dict[int, list[float]] = field(default_factory=dict)

    def first_renders(self, n: int, before: bool = False) -> list[float]:
        """Every first render of size n measured (the full pages' and the first-render pages'), ms."""
        pages, extra = (self.before, self.first_before) if before else (self.ours, self.first)
        return [x["ms"] for x in pages.get(n, [])] + extra.get(n, [])


def measure_pages(url: str, sizes: list[int], *, repeats: int, hovers: int, scroll_steps: int, peer_max: int,
                  peer_timeout: float, stream: int, before: bool = False, first_pages: int = 0) -> Measured:
    """Every repeat: each size's page of ours, of the `--before` build (when `before`) and of
    CircuitsVis (up to `peer_max`), alternating which goes first; then `first_pages` pages per size
    (and build) that time the first render alone; then `repeats` pages of the growing view when
    `stream` tokens are asked for."""
    measured = Measured({n: [] for n in sizes}, {n: [] for n in sizes}, before={n: [] for n in sizes} if before else {})
    per_page = max(1, math.ceil(hovers / repeats))
    with sync_playwright() as p:
        browser = launch(p)
        try:
            # A page not counted: the first page of a browser pays its first-use costs (the renderer
            # process, compiling the bundle, the fonts), which no later page pays.
            measure_ours(browser, url, f"ours-{sizes[0]}", 0, scroll_steps, 0)
            time.sleep(SETTLE_S)
            for r in range(repeats):
                for n in sizes:
                    pair = ["ours", "before", "peer"] if r % 2 == 0 else ["peer", "before", "ours"]
                    for who in pair:
                        seed = 1 + r * 7919 + n  # the same hovers for both builds
                        if who == "ours":
                            got = measure_ours(browser, url, f"ours-{n}", per_page, scroll_steps, seed)
                            measured.ours[n].append(got)
                            log(f"ours {n}: {got['ms']:.0f} ms")
                        elif who == "before" and before:
                            got = measure_ours(browser, url, f"ours-{n}", per_page, scroll_steps, seed, "/before")
                            measured.before[n].append(got)
                            log(f"before {n}: {got['ms']:.0f} ms")
                        elif who == "peer" and n <= peer_max:
                            browser = measure_peer_once(p, browser, url, n, peer_timeout, measured.peer[n])
                        else:
                            continue
                        time.sleep(SETTLE_S)
            measure_first_pages(browser, url, sizes, first_pages, measured, before)
            for _ in range(repeats if stream else 0):
                measured.stream_runs.append(measure_stream(browser, url, "stream", STREAM_INTERVAL_MS))
                last = measured.stream_runs[-1]
                log(f"stream {stream}: {last['ms']:.0f} ms, longest task {last['task']:.0f} ms")
        finally:
            browser.close()
    return measured


def measure_first_pages(browser, url: str, sizes: list[int], count: int, measured: Measured, before: bool) -> None:
    """`count` more fresh pages per size that time the first render alone, ours and the --before build's
    alternating: a first render varies by +-5 ms from page to page here, so a median of the few full
    pages alone could fall either side of a goal."""
    for r in range(count):
        folders = ["/static", "/before"] if before else ["/static"]
        for n in sizes:
            for folder in folders if r % 2 == 0 else folders[::-1]:
                got = measured.first_before if folder == "/before" else measured.first
                got.setdefault(n, []).append(measure_first(browser, url, f"ours-{n}", folder))
                time.sleep(SETTLE_S)
        log(f"first-render pages {r + 1}/{count}: " + ", ".join(f"{n}: {measured.first[n][-1]:.0f} ms" for n in sizes))


def measure_peer_once(p, browser, url: str, n: int, timeout_s: float, runs: list[dict]):
    """One CircuitsVis page of `n` tokens into `runs`, unless it already ran out of time (or took
    over 10 s) at this size: once is enough then. Returns the browser to go on with: a fresh one
    when the page was left stuck (closing the browser ends its busy renderer)."""
    if runs and (runs[-1]["ms"] is None or runs[-1]["ms"] > 10000):
        return browser
    runs.append(measure_peer(browser, url, f"peer-{n}", timeout_s))
    if runs[-1].get("stuck"):
        browser.close()  # ends the busy renderer
        browser = launch(p)
    log(f"peer {n}: {runs[-1]}")
    return browser
