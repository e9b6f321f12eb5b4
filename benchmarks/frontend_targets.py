"""The frontend benchmark's targets (issues 5, 9, 13 and 21): the measured value of each, met or missed."""

from __future__ import annotations

from benchmarks.common import median
from benchmarks.frontend_measure import Measured
from benchmarks.frontend_tables import fmt_ms, pct, section

# Targets of issue 5.
TARGET_10K_MS = 100
TARGET_100K_MS = 1000
TARGET_TASK_MS = 200
TARGET_HOVER_MS = 16
TARGET_BYTES = 200
TARGET_STREAM_TASK_MS = 50  # issue 9: a 10,000-token stream keeps the page responsive
TARGET_1K_MS = 30  # issue 21: a short text shows at least as fast as a long one
TARGET_CLICK_MS = 1000  # issue 21: the explorer's first Generate paints its first token within a second


def met(ok) -> str:
    return "—" if ok is None else ("met" if ok else "**missed**")


def target_values(measured: Measured, info: dict, sizes: list[int]) -> dict:
    """The figure each target is judged by (None where this run did not measure it)."""
    ours = measured.ours

    def first(n):
        return median(measured.first_renders(n)) if n in ours and ours[n] else None

    def hover_p95_all():
        v = [v for n in sizes for x in ours[n] if x["hover"] for v in x["hover"]["toPaint"]]
        return pct(v, 0.95) if v else None

    worst_task_100k = None
    if 100000 in ours:
        # "no task over 200 ms" is a bound, not a typical value: the worst page counts
        worst_task_100k = max(max(x["task"], x["scroll_task"]) for x in ours[100000])
    over_idle_100k = None  # issue 13: at 100k, where an idle frame alone is slow, hover p95 ≤ idle p95 + 16 ms
    hv100 = [x["hover"] for x in ours.get(100000, []) if x["hover"]]
    if hv100 and any(h["toPaint"] for h in hv100):
        paint100 = [v for h in hv100 for v in h["toPaint"]]
        idle100 = [v for h in hv100 for v in h["idle"]]
        over_idle_100k = pct(paint100, 0.95) - pct(idle100, 0.95)
    worst_hover = max(
        (
            pct([v for x in ours[n] if x["hover"] for v in x["hover"]["toPaint"]], 0.95)
            for n in sizes
            if any(x["hover"] and x["hover"]["toPaint"] for x in ours[n])
        ),
        default=None,
    )
    return {
        "first_1k": first(1000),
        "first_10k": first(10000),
        "first_100k": first(100000),
        "has_100k": 100000 in ours,
        "worst_task_100k": worst_task_100k,
        "worst_hover": worst_hover,
        "hover_p95_all": hover_p95_all(),
        "over_idle_100k": over_idle_100k,
        "bytes_per_token": max((info[n]["binary"] + info[n]["json"]) / n for n in sizes),
        "stream_task": max((r["task"] for r in measured.stream_runs), default=0),
        "streamed": bool(measured.stream_runs),
    }


def targets_table(v: dict, *, stream: int, note: str) -> str:
    """4. Each target with its goal, the measured value and whether it is met; `v` from target_values."""
    first_10k, first_100k, worst_task = v["first_10k"], v["first_100k"], v["worst_task_100k"]
    worst_hover = v["worst_hover"]
    over_idle, stream_task, hp95 = v["over_idle_100k"], v["stream_task"], v["hover_p95_all"]
    first_1k = v["first_1k"]
    rows = [
        ["1k tokens first render", f"≤ {TARGET_1K_MS} ms", fmt_ms(first_1k),
         met(None if first_1k is None else first_1k <= TARGET_1K_MS)],
        ["10k tokens first render", f"≤ {TARGET_10K_MS} ms", fmt_ms(first_10k),
         met(None if first_10k is None else first_10k <= TARGET_10K_MS)],
        ["100k tokens first render", f"≤ {TARGET_100K_MS} ms", fmt_ms(first_100k),
         met(None if first_100k is None else first_100k <= TARGET_100K_MS)],
        [
            "100k tokens longest task (render, scroll; worst page)",
            f"≤ {TARGET_TASK_MS} ms",
            fmt_ms(worst_task) if worst_task else "< 50 ms",
            met(None if worst_task is None and not v["has_100k"] else (worst_task or 0) <= TARGET_TASK_MS),
        ],
        [
            "hover → painted frame, p95 at the worst length",
            f"≤ {TARGET_HOVER_MS} ms",
            fmt_ms(worst_hover) + (f" (all lengths pooled: {fmt_ms(hp95)})" if hp95 is not None else ""),
            met(None if worst_hover is None else worst_hover <= TARGET_HOVER_MS),
        ],
        [
            "hover → painted frame p95 at 100k, over the no-hover frame p95",
            f"≤ +{TARGET_HOVER_MS} ms",
            f"{over_idle:+.1f} ms" if over_idle is not None else "—",
            met(None if over_idle is None else over_idle <= TARGET_HOVER_MS),
        ],
        ["payload at K=20", f"≤ {TARGET_BYTES} B/token", f"{v['bytes_per_token']:.0f} B/token",
         met(v["bytes_per_token"] <= TARGET_BYTES)],
        [
            f"longest task while a {stream:,}-token stream arrives",
            f"≤ {TARGET_STREAM_TASK_MS} ms",
            (fmt_ms(stream_task) if stream_task else "< 50 ms") if v["streamed"] else "—",
            met(stream_task <= TARGET_STREAM_TASK_MS if v["streamed"] else None),
        ],
    ]
    return section("targets", ["target", "goal", "measured (median)", "status"], rows, note)


def click_target_row(first_token_ms: float | None, delay: float) -> list[str]:
    """The first click's target (benchmarks.frontend_click): Generate in a fresh kernel, with the warm-up."""
    return [f"Generate → first token painted, fresh kernel, clicked {delay:g} s after the app showed",
            f"≤ {TARGET_CLICK_MS} ms", fmt_ms(first_token_ms),
            met(None if first_token_ms is None else first_token_ms <= TARGET_CLICK_MS)]
