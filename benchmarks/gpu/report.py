"""The check's one table: a row per measured claim, its goal, and whether it was met.

Columns: what was checked; our figure; the reference's (the floor, ``model.generate``, the CPU);
the value the goal is about (a ratio, a count per token, a largest difference); the goal; met.
"""

from __future__ import annotations

import math
import platform
from dataclasses import dataclass

from benchmarks.common import table

COLUMNS = ["check", "ours", "reference", "value", "goal", "met"]
WAITS = "waits for a device"  # the `met` of a row whose figure only a GPU run gives


@dataclass
class Row:
    check: str
    ours: str
    reference: str
    value: float
    goal: str = "report"  # ">= 0.97", "<= 1e-4", or "report" (a figure without a goal)
    met: str = ""  # filled from the goal unless set
    why: str = ""  # for a missed goal: what a profile of the same run says

    def __post_init__(self):
        if not self.met:
            self.met = judge(self.value, self.goal)


def judge(value: float, goal: str) -> str:
    if goal == "report":
        return "-"
    if not math.isfinite(value):
        return "no"
    sign, bound = goal.split()
    ok = value >= float(bound) if sign == ">=" else value <= float(bound)
    return "yes" if ok else "no"


def fmt(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:.4g}"
    return f"{value:.2e}"


def header(device, dtype: str, mode: str) -> str:
    import torch
    import transformers

    import logprob_viz

    if torch.device(device).type == "cuda":
        name = torch.cuda.get_device_name(device)
        memory = torch.cuda.get_device_properties(device).total_memory / 2**30
        where = f"{name} ({memory:.0f} GiB), CUDA {torch.version.cuda}"
    else:
        where = f"CPU ({platform.processor() or platform.machine()}), threads {torch.get_num_threads()}"
    return (f"Device: {where}; torch {torch.__version__}, transformers {transformers.__version__}, "
            f"python {platform.python_version()}, logprob_viz {logprob_viz.__version__}; "
            f"speed in {dtype}, fidelity in float32; mode: {mode}")


def render(rows: list[Row]) -> str:
    body = table(COLUMNS, [[r.check, r.ours, r.reference, fmt(r.value), r.goal, r.met] for r in rows])
    missed = [r for r in rows if r.met in ("no", "error")]
    if missed:
        body += "\n\nMissed goals, each with what a profile (torch.profiler) of this run says (or the error):\n\n"
        body += "\n".join(f"- {r.check}: {r.why or 'no profile taken'}" for r in missed)
    return body
