"""Shared helpers for the benchmark scripts: alternating timing, medians, tables, machine info.

The machine is shared and noisy, so compared things run side by side, alternating, in one
process; tables quote medians and ratios measured in that one run.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable


def alternate(candidates: dict[str, Callable[[], object]], repeats: int, warmup: int = 1) -> dict[str, list[float]]:
    """Time each candidate `repeats` times, rotating the order each round; returns seconds."""
    for fn in candidates.values():
        for _ in range(warmup):
            fn()
    times: dict[str, list[float]] = {name: [] for name in candidates}
    names = list(candidates)
    for round_ in range(repeats):
        order = names[round_ % len(names):] + names[: round_ % len(names)]
        for name in order:
            start = time.perf_counter()
            candidates[name]()
            times[name].append(time.perf_counter() - start)
    return times


def alternate_with_cpu(candidates: dict, repeats: int, warmup: int = 1) -> tuple[dict, dict]:
    """`alternate`'s wall times, and each run's CPU time of this process (single-threaded torch: the
    work done, which other processes on a shared machine disturb less than the wall clock)."""
    cpu: dict[str, list[float]] = {name: [] for name in candidates}

    def timed(name, fn):
        def run():
            start = time.process_time()
            fn()
            cpu[name].append(time.process_time() - start)
        return run

    times = alternate({name: timed(name, fn) for name, fn in candidates.items()}, repeats, warmup=warmup)
    return times, {name: values[warmup:] for name, values in cpu.items()}


def parse_args(parser: argparse.ArgumentParser, quick: dict[str, object]) -> argparse.Namespace:
    """`parser.parse_args()` with a `--quick` flag: the defaults in `quick` (fewer repeats, smaller
    sizes) replace the full run's, so a change can be checked to run in seconds; the tables then
    measure less and are not the figures to quote. Flags given explicitly still win."""
    shown = ", ".join(f"--{name.replace('_', '-')} {value}" for name, value in quick.items())
    parser.add_argument("--quick", action="store_true", help=f"a short run to check it works: {shown}")
    if parser.parse_known_args()[0].quick:
        parser.set_defaults(**quick)
    return parser.parse_args()


def median(values: list[float]) -> float:
    return statistics.median(values)


def table(headers: list[str], rows: list[list[object]]) -> str:
    """A Markdown table."""
    cells = [[str(c) for c in row] for row in rows]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def machine() -> str:
    import torch

    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({cpu}), "
        f"python {platform.python_version()}, torch {torch.__version__}, threads {torch.get_num_threads()}"
    )


def rss_peak_reset() -> None:
    """Reset the kernel's peak-RSS mark for this process (Linux)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def rss_kib(field: str) -> int:
    """VmRSS (now) or VmHWM (peak since the last reset) of this process, in KiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")
