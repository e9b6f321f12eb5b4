"""Divergence benchmarks: `lv.divergence` of two local runners, and reading llama.cpp's base-logits file.

    python -m benchmarks.divergence [--texts 64] [--repeats 3] [--mb 100] [--quick]

Prints Markdown tables:
1. N short texts (10-60 tokens, as benchmarks/corpus.py cuts them) through `lv.divergence(base, candidate,
   texts)` (the default model against a copy with bf16-rounded weights) vs the two runners' batched
   `score` of the same texts, alternating in one process (the issue's target: at most 1.3x).
2. a synthetic base-logits file of about `--mb` MB in llama.cpp's layout (n_vocab 49152, n_ctx 512): `lv.read_kld`
   and a pass over every record (`np.asarray`) vs `numpy.fromfile` of the same bytes (target: at most 2x),
   and, beside them, decoding every record into float64 log-probabilities as a divergence does; then the
   same routes each in a fresh process (the bytes brought into fresh memory, as a reader of one file meets them).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

from benchmarks.common import alternate, alternate_with_cpu, machine, median, parse_args, table
from benchmarks.corpus import load, short_texts


def bench_divergence(runner, n_texts: int, repeats: int) -> str:
    import torch

    import logprob_viz as lv

    model = copy.deepcopy(runner.model)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(torch.bfloat16).to(torch.float32))
    candidate = lv.load((model, runner.tokenizer))
    texts = short_texts(runner.tokenizer, n_texts)
    tokens = sum(len(runner.tokenizer(t)["input_ids"]) for t in texts)
    times = alternate({
        "two runners' score": lambda: (runner.score(texts, progress=False), candidate.score(texts, progress=False)),
        "lv.divergence (cutoff 16)": lambda: lv.divergence(runner, candidate, texts, progress=False),
        "lv.divergence (cutoff None)": lambda: lv.divergence(runner, candidate, texts, progress=False, cutoff=None),
    }, repeats)
    ref = median(times["two runners' score"])
    rows = [[name, f"{median(t):.2f}", f"{tokens / median(t):,.0f}", f"{median(t) / ref:.2f}x"]
            for name, t in times.items()]
    return (f"{n_texts} texts, {tokens} tokens (median of {repeats})\n\n"
            + table(["route", "seconds", "tokens/s", "vs two scores"], rows))


def _synthetic_kld(path: str, megabytes: float, n_vocab: int = 49152, n_ctx: int = 512) -> int:
    nv = 2 * ((n_vocab + 1) // 2) + 4
    n_scored = n_ctx - 1 - n_ctx // 2
    n_chunk = max(1, round(megabytes * 1e6 / (2 * nv * n_scored)))
    rng = np.random.default_rng(0)
    with open(path, "wb") as f:
        f.write(b"_logits_" + np.array([n_ctx, n_vocab, n_chunk], dtype="<i4").tobytes())
        f.write(rng.integers(0, n_vocab, n_chunk * n_ctx, dtype="<i4").tobytes())
        for _ in range(n_chunk):
            records = rng.integers(0, 65535, (n_scored, nv), dtype="<u2")
            records[:, :4] = np.tile(np.array([16 / 65535, -30.0], dtype="<f4").view("<u2"), (n_scored, 1))
            f.write(records.tobytes())
    return os.path.getsize(path)


def _decode_as_before(kf, chunk: int, positions: np.ndarray) -> np.ndarray:
    """KldFile.decode before it wrote one float32 buffer in place (the same values), for the side-by-side row."""
    rows = kf.records[chunk, np.asarray(positions) - 1 - kf.first]
    head = np.ascontiguousarray(rows[:, :4]).view(np.float32)
    codes = rows[:, 4 : 4 + kf.n_vocab].astype(np.float32)
    return (head[:, :1] * codes + head[:, 1:2]).astype(np.float64)


def bench_read_kld(megabytes: float, repeats: int) -> str:
    import logprob_viz as lv

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "base.kld")
        size = _synthetic_kld(path, megabytes)

        def decode_all(decode):
            kf = lv.read_kld(path)
            positions = kf.positions(0, None)
            for chunk in range(kf.n_chunk):
                for start in range(0, len(positions), 16):  # lv.divergence's blocks (run.BLOCK_ROWS)
                    decode(kf, chunk, positions[start : start + 16])

        times, cpu = alternate_with_cpu({
            "numpy.fromfile (the bytes)": lambda: np.fromfile(path, dtype=np.uint8),
            "lv.read_kld + every record": lambda: np.asarray(lv.read_kld(path).records).sum(dtype=np.uint64),
            "lv.read_kld alone (memory map)": lambda: lv.read_kld(path),
            "every record decoded to float64 (KldFile.decode, as lv.divergence does)":
                lambda: decode_all(lambda kf, chunk, positions: kf.decode(chunk, positions)),
            "the same, decoded as before (a cast, a product and a sum, each its own array)":
                lambda: decode_all(_decode_as_before),
        }, repeats)
    ref, ref_cpu = (median(t["numpy.fromfile (the bytes)"]) for t in (times, cpu))
    rows = [[name, f"{median(t) * 1e3:.1f}", f"{median(t) / ref:.2f}x", f"{median(cpu[name]) * 1e3:.1f}",
             f"{median(cpu[name]) / ref_cpu:.2f}x"] for name, t in times.items()]
    return (f"a {size / 1e6:.0f} MB base-logits file (median of {repeats}; the OS's page cache warm; CPU: this "
            "process's user + system time, which other work on a shared machine disturbs less)\n\n"
            + table(["route", "ms", "vs numpy.fromfile", "CPU ms", "CPU vs numpy.fromfile"], rows))


# One route in a process of its own: the 100 MB must be brought into fresh memory as a reader of one
# file meets them (a warm process's fromfile reuses pages it freed before, which no reader has).
_FRESH = """
import json, sys, time
import numpy as np
import logprob_viz as lv
path, route = sys.argv[1], sys.argv[2]
def decode_all():
    kf = lv.read_kld(path)
    positions = kf.positions(0, None)
    for chunk in range(kf.n_chunk):
        for start in range(0, len(positions), 16):
            kf.decode(chunk, positions[start : start + 16])
routes = {"numpy.fromfile (the bytes)": lambda: np.fromfile(path, dtype=np.uint8),
          "lv.read_kld, every record copied out": lambda: np.array(lv.read_kld(path).records),
          "every record decoded to float64 (KldFile.decode)": decode_all}
wall, cpu = time.perf_counter(), time.process_time()
routes[route]()
print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]))
"""
_FRESH_ROUTES = ("numpy.fromfile (the bytes)", "lv.read_kld, every record copied out",
                 "every record decoded to float64 (KldFile.decode)")


def bench_read_kld_fresh(megabytes: float, repeats: int) -> str:
    """Each route in a fresh process, the routes alternating; the time of the route alone (the
    interpreter's start and the imports are outside it)."""
    times: dict[str, list] = {name: [] for name in _FRESH_ROUTES}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "base.kld")
        size = _synthetic_kld(path, megabytes)
        for _ in range(repeats):
            for name in _FRESH_ROUTES:
                out = subprocess.run([sys.executable, "-c", _FRESH, path, name], capture_output=True, text=True,
                                     check=True)
                times[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    ref_wall, ref_cpu = (median([t[k] for t in times[_FRESH_ROUTES[0]]]) for k in (0, 1))
    rows = []
    for name, runs in times.items():
        wall, cpu = median([r[0] for r in runs]), median([r[1] for r in runs])
        rows.append([name, f"{wall * 1e3:.1f}", f"{wall / ref_wall:.2f}x", f"{cpu * 1e3:.1f}", f"{cpu / ref_cpu:.2f}x"])
    return (f"the same {size / 1e6:.0f} MB file, each route in a fresh process (median of {repeats}, alternating; "
            "the page cache warm, the process's memory not)\n\n"
            + table(["route", "ms", "vs numpy.fromfile", "CPU ms", "CPU vs numpy.fromfile"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kld-repeats", type=int, default=11, help="the base-logits file's (each run ~0.1 s)")
    parser.add_argument("--mb", type=float, default=100)
    args = parse_args(parser, {"texts": 8, "repeats": 1, "mb": 10, "kld_repeats": 3})
    runner = load()
    print(f"Machine: {machine()}\n")
    print("### " + bench_divergence(runner, args.texts, args.repeats), end="\n\n")
    print("### " + bench_read_kld(args.mb, args.kld_repeats), end="\n\n")
    print("### " + bench_read_kld_fresh(args.mb, args.kld_repeats))


if __name__ == "__main__":
    main()
