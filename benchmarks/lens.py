"""Logit-lens benchmark: what reading every layer costs, against one bare forward pass.

    python -m benchmarks.lens [--repeats 3] [--tokens 512] [--k 10] [--quick]

Prints Markdown tables:
1. time: the lens over N tokens, all 30 blocks of the default model, K alternatives, as a ratio
   to one bare forward pass; with the floor any full-vocabulary logit lens pays (the forward
   pass plus one norm + output-embedding matmul per block, nothing else), and `score()`;
2. memory, each route in a fresh process: peak RSS growth, tracemalloc's peak (Python and numpy
   allocations), torch's peak on a GPU, and the bytes the lens keeps next to the
   [layers, tokens, vocab] float32 array it never holds.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

from benchmarks.common import alternate_with_cpu, machine, median, parse_args, rss_kib, rss_peak_reset, table

ROOT = Path(__file__).resolve().parent.parent  # the memory children run `-m benchmarks.lens` from here

SENTENCE = "A robot may not injure a human being, or, through inaction, allow a human being to come to harm. "


def load():
    import torch

    import logprob_viz as lv

    torch.set_num_threads(1)
    return lv.load()


def text_of(runner, n: int) -> tuple[str, list[int]]:
    """A text of exactly n tokens (as the tokenizer reads it back)."""
    ids = runner.tokenizer(SENTENCE * (n // 10 + 10))["input_ids"][:n]
    text = runner.tokenizer.decode(ids)
    return text, runner.tokenizer(text)["input_ids"]


def routes(runner, n: int, k: int):
    import torch

    from logprob_viz.sources.local.lens import find_parts, lens

    model = runner.model
    text, ids = text_of(runner, n)
    input_ids = torch.tensor([ids], device=runner.device)
    blocks, norm, unembed = find_parts(model)

    def bare():
        with torch.inference_mode():
            return model(input_ids=input_ids, use_cache=False).logits

    def floor():
        # The least a full-distribution lens can do: the forward pass, then every block's
        # output through the norm and the output embedding (logits dropped as they come).
        with torch.inference_mode():
            hidden = model(input_ids=input_ids, use_cache=False, output_hidden_states=True).hidden_states
            for h in hidden[1:-1]:
                unembed(norm(h[0, :-1]))
            return None

    def ours():
        return lens(runner, text, top_logprobs=k)

    def score():
        return runner.score(text, top_logprobs=k)

    return len(ids), len(blocks), {
        "bare forward": bare,
        "forward + 30 read-outs (floor)": floor,
        f"lens, all layers, K={k}": ours,
        f"score, K={k}": score,
    }


def bench_time(runner, n: int, k: int, repeats: int) -> str:
    n_tokens, n_blocks, candidates = routes(runner, n, k)
    times, cpu = alternate_with_cpu(candidates, repeats)
    base, floor = median(times["bare forward"]), median(times["forward + 30 read-outs (floor)"])
    floor_cpu = median(cpu["forward + 30 read-outs (floor)"])
    rows = [[name, f"{median(t) * 1000:.0f}", f"{median(t) / base:.2f}", f"{median(t) / floor:.2f}",
             f"{median(cpu[name]) / floor_cpu:.2f}"] for name, t in times.items()]
    return (
        f"### Time: {n_tokens} tokens, {n_blocks} blocks, median of {repeats} alternating runs\n\n"
        + table(["route", "ms", "ratio to bare forward", "ratio to the floor", "ratio to the floor, CPU time"], rows)
    )


def _memory_child(route: str, n: int, k: int) -> None:
    import torch

    runner = load()
    _, _, candidates = routes(runner, n, k)
    fn = candidates[route]
    fn()  # warm up: lazy tables, allocator pools
    cuda = runner.device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    before = rss_kib("VmRSS")
    rss_peak_reset()
    tracemalloc.start()
    result = fn()
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak = rss_kib("VmHWM")
    out = {
        "rss_growth_kib": peak - before,
        "traced_peak_kib": traced_peak // 1024,
        "torch_peak_mib": torch.cuda.max_memory_allocated() / 2**20 if cuda else None,
    }
    if hasattr(result, "nbytes") and callable(result.nbytes):
        n_layers, n_tokens = result.shape
        vocab = runner.model.get_output_embeddings().weight.shape[0]
        out["kept"] = result.nbytes()
        out["full"] = n_layers * n_tokens * vocab * 4
    print(json.dumps(out))


def bench_memory(n: int, k: int) -> str:
    rows, kept = [], None
    for route in ["bare forward", f"lens, all layers, K={k}", f"score, K={k}"]:
        proc = subprocess.run(
            [sys.executable, "-m", "benchmarks.lens", "--memory-child", route, "--tokens", str(n), "--k", str(k)],
            capture_output=True, text=True, cwd=ROOT,
        )
        if proc.returncode:
            raise RuntimeError(f"memory run of {route!r} failed:\n{proc.stderr[-3000:]}")
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        torch_peak = result["torch_peak_mib"]
        rows.append([
            route,
            f"{result['rss_growth_kib'] / 1024:.1f}",
            f"{result['traced_peak_kib'] / 1024:.1f}",
            "-" if torch_peak is None else f"{torch_peak:.0f}",
        ])
        if "kept" in result:
            kept = result
    text = (
        f"### Memory: {n} tokens, each route in a fresh process\n\n"
        + table(["route", "peak RSS growth (MiB)", "tracemalloc peak (MiB)", "torch GPU peak (MiB)"], rows)
    )
    if kept:
        text += (
            f"\n\nThe lens keeps {kept['kept'] / 2**20:.2f} MiB of arrays (L x N x (12 + 8K) bytes); "
            f"the [layers, tokens, vocab] float32 logprobs it never holds would be {kept['full'] / 2**30:.2f} GiB."
        )
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=512)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--only", choices=["time", "memory"], help="run one table")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parse_args(parser, quick={"repeats": 1, "tokens": 64})
    if args.memory_child:
        _memory_child(args.memory_child, args.tokens, args.k)
        return
    runner = load() if args.only in (None, "time") else None
    print(f"Machine: {machine()}\n")
    if runner is not None:
        print(bench_time(runner, args.tokens, args.k, args.repeats), end="\n\n", flush=True)
    if args.only in (None, "memory"):
        print(bench_memory(args.tokens, args.k), flush=True)


if __name__ == "__main__":
    main()
