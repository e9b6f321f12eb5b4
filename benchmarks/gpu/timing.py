"""How the check measures on a device: synchronised timing, peak memory, host waits, and profiles.

A CUDA call returns before the GPU has done the work, so every timed run ends with
``torch.cuda.synchronize()``; peak memory is ``torch.cuda.max_memory_allocated`` above what was
allocated before the run (on the CPU: the process's peak RSS growth). Host waits are counted by
what would make the host wait for a GPU: on CUDA, every call ``torch.cuda.set_sync_debug_mode``
flags; on the CPU, the host reads `tests/sources/local/test_runner.py` counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from benchmarks.common import alternate, median, rss_kib, rss_peak_reset


def sync(device) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def timed(candidates: dict[str, Callable], device, repeats: int) -> dict[str, float]:
    """Median seconds of each candidate: `repeats` alternating runs after a warm-up, each run synchronised."""
    sync(device)

    def synced(fn):
        def run():
            fn()
            sync(device)
        return run

    times = alternate({name: synced(fn) for name, fn in candidates.items()}, repeats, warmup=1)
    return {name: median(values) for name, values in times.items()}


def peak_memory_mib(fn: Callable, device) -> float:
    """Memory one run of `fn` takes beyond what was allocated before it, MiB."""
    import torch

    sync(device)
    if torch.device(device).type == "cuda":
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        fn()
        sync(device)
        return (torch.cuda.max_memory_allocated() - before) / 2**20
    before = rss_kib("VmRSS")
    rss_peak_reset()
    fn()
    return (rss_kib("VmHWM") - before) / 1024


def _host_reads():
    import torch

    tensor = torch.Tensor  # reading a GPU tensor's value on the host waits for the GPU
    return {tensor.item, tensor.cpu, tensor.tolist, tensor.__bool__, tensor.__int__, tensor.__float__,
            tensor.__index__, tensor.nonzero, torch.nonzero}


def count_waits(fn: Callable, model, device) -> tuple[int, int]:
    """(calls that wait for the device, forward passes after which the host waited) during `fn`.

    The prefill (the first forward pass) is not counted in the second: it reads the prompt's scores
    once, before any token is generated. A loop that reads once per chunk of 16 steps waits after
    1/16 of its decode steps, however many fields each read copies.
    """
    import torch

    forwards = [0]
    waited_after: list[int] = []
    hook = model.register_forward_pre_hook(lambda *_: forwards.__setitem__(0, forwards[0] + 1))
    try:
        if torch.device(device).type == "cuda":
            _count_cuda_syncs(fn, lambda: waited_after.append(forwards[0]))
        else:
            _count_host_reads(fn, lambda: waited_after.append(forwards[0]))
    finally:
        hook.remove()
    return len(waited_after), len({f for f in waited_after if f > 1})


def _count_cuda_syncs(fn: Callable, note: Callable[[], None]) -> None:
    import torch

    def seen(message, category, *_args, **_kwargs):
        if "synchroniz" in str(message):
            note()

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = seen  # restored by catch_warnings
        torch.cuda.set_sync_debug_mode("warn")
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode("default")


def _count_host_reads(fn: Callable, note: Callable[[], None]) -> None:
    from torch.overrides import TorchFunctionMode

    reads = _host_reads()

    class HostReads(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func in reads:
                note()
            return func(*args, **(kwargs or {}))

    with HostReads():
        fn()


_WAIT_OPS = ("Synchronize", "Memcpy", "local_scalar", "nonzero", "aten::item", "_to_copy")


def profile_why(ours: Callable, reference: Callable, device, by: str = "time", top: int = 5) -> str:
    """One profiled run of each (torch.profiler); the ops on which `ours` spends more time than
    `reference` (``by="count"``: the ops it calls more often)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    cuda = torch.device(device).type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    totals = []
    for fn in (ours, reference):
        sync(device)
        with profile(activities=activities) as prof:
            fn()
            sync(device)
        events = prof.key_averages()
        totals.append({e.key: float(e.count) if by == "count" else _self_us(e, cuda) for e in events})
    extra = {key: value - totals[1].get(key, 0.0) for key, value in totals[0].items()}
    worst = [(key, value) for key, value in sorted(extra.items(), key=lambda item: -item[1])[:top] if value > 0]
    if by == "count":  # the calls that copy to the host or wait, ours (the reference's)
        waits = sorted(key for key in totals[0] if any(part in key for part in _WAIT_OPS))
        return "calls that wait: " + ", ".join(f"{key} {totals[0][key]:.0f} ({totals[1].get(key, 0):.0f})"
                                                 for key in waits)
    where, (ours_ms, reference_ms) = "GPU" if cuda else "CPU", (sum(t.values()) / 1000 for t in totals)
    more = ", ".join(f"{key} +{us / 1000:.2f} ms" for key, us in worst) or "no op (the time is outside torch's ops)"
    return f"profiled once: self {where} time ours {ours_ms:.1f} ms, reference {reference_ms:.1f} ms; more in {more}"


def _self_us(event, cuda: bool) -> float:
    if not cuda:
        return float(event.self_cpu_time_total)
    # torch >= 2.4 names it self_device_time_total; earlier releases self_cuda_time_total
    return float(getattr(event, "self_device_time_total", getattr(event, "self_cuda_time_total", 0.0)))
