"""Runner benchmarks: what recording logprobs costs in time and memory, on the default model.

    python -m benchmarks.runner [--repeats 5] [--new-tokens 256] [--quick]

Prints Markdown tables:
1. generation: our runner (top_logprobs=20) vs plain `model.generate`, and vs the way people
   do it with transformers today (output_scores + compute_transition_scores + top-k);
2. memory: peak RSS growth while generating 1024 tokens, each route in its own process;
   and the bytes the trace keeps per token;
3. scoring: teacher-forced scoring with top_logprobs=20 vs a bare forward pass;
4. streaming: `runner.stream` (a snapshot per token on the CPU) vs `runner.generate`, and what
   building the snapshots of a 1,000-token stream costs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks.common import alternate, machine, median, parse_args, rss_kib, rss_peak_reset, table

ROOT = Path(__file__).resolve().parent.parent  # the memory children run `-m benchmarks.runner` from here

PROMPT = "A robot may not injure a human being"
K = 20


def load():
    import torch

    import logprob_viz as lv

    torch.set_num_threads(1)
    runner = lv.load()
    return runner, runner.model, runner.tokenizer


def routes(runner, model, tokenizer, new_tokens: int):
    """The three ways to get a greedy continuation of `new_tokens` tokens."""
    import torch

    ids = torch.tensor([tokenizer(PROMPT)["input_ids"]])
    # No EOS stop for any route, so all three produce exactly new_tokens tokens.
    common = dict(max_new_tokens=new_tokens, do_sample=False, eos_token_id=None, pad_token_id=0)
    eos = model.generation_config.eos_token_id

    def ours():
        model.generation_config.eos_token_id = None
        try:
            return runner.generate(PROMPT, max_new_tokens=new_tokens, top_logprobs=K, progress=False)
        finally:
            model.generation_config.eos_token_id = eos

    def plain():
        with torch.inference_mode():
            return model.generate(ids, **common)

    def transformers_route():
        with torch.inference_mode():
            out = model.generate(ids, output_scores=True, return_dict_in_generate=True, **common)
            chosen = model.compute_transition_scores(out.sequences, out.scores, normalize_logits=True)
            top = torch.topk(torch.log_softmax(torch.stack(out.scores, 1).float(), -1), K, dim=-1)
            return out.sequences, chosen, top

    return {"logprob_viz (K=20)": ours, "model.generate": plain, "generate+output_scores+topk": transformers_route}


def bench_generation(runner, model, tokenizer, new_tokens: int, repeats: int) -> str:
    candidates = routes(runner, model, tokenizer, new_tokens)
    lengths = {
        "logprob_viz (K=20)": len(candidates["logprob_viz (K=20)"]().completion),
        "model.generate": candidates["model.generate"]().shape[1] - len(tokenizer(PROMPT)["input_ids"]),
    }
    assert len(set(lengths.values())) == 1, f"routes generated different lengths: {lengths}"
    times = alternate(candidates, repeats)
    base = median(times["model.generate"])
    rows = [
        [name, f"{median(t) * 1000:.0f}", f"{new_tokens / median(t):.1f}", f"{median(t) / base:.3f}"]
        for name, t in times.items()
    ]
    return (
        f"### Generation: {new_tokens} new tokens, greedy, default model, median of {repeats} alternating runs\n\n"
        + table(["route", "ms", "tokens/s", "ratio to model.generate"], rows)
    )


def _memory_child(route: str, new_tokens: int) -> None:
    runner, model, tokenizer = load()
    fn = routes(runner, model, tokenizer, 8)[route]
    fn()  # warm up at a short length
    fn = routes(runner, model, tokenizer, new_tokens)[route]
    before = rss_kib("VmRSS")
    rss_peak_reset()
    result = fn()
    peak = rss_kib("VmHWM")
    kept = None
    if route.startswith("logprob_viz"):
        arrays = [result.logprobs, result.ranks, result.entropy, result.token_ids, result.top_logprobs, result.top_ids]
        kept = sum(a.nbytes for a in arrays) / len(result)
        # A local trace reads its alternatives' texts from the runner's shared vocabulary (VocabRows):
        # no per-token lists are kept. Older traces kept a list per token (headers + pointers).
        listed = isinstance(result.top_tokens, list)
        lists = sum(8 * len(row) + 56 for row in result.top_tokens) / len(result) if listed else 0.0
        kept = {"arrays": kept, "lists": lists}
    print(json.dumps({"growth_kib": peak - before, "kept": kept}))


def bench_memory(new_tokens: int) -> str:
    rows, kept = [], None
    for route in ["logprob_viz (K=20)", "generate+output_scores+topk"]:
        out = subprocess.run(
            [sys.executable, "-m", "benchmarks.runner", "--memory-child", route, "--new-tokens", str(new_tokens)],
            capture_output=True, text=True, check=True, cwd=ROOT,
        ).stdout.strip().splitlines()[-1]
        result = json.loads(out)
        rows.append([route, f"{result['growth_kib'] / 1024:.1f}"])
        kept = result["kept"] or kept
    text = (
        f"### Memory: peak RSS growth while generating {new_tokens} tokens (each route in a fresh process)\n\n"
        + table(["route", "peak growth (MiB)"], rows)
    )
    goal = 12 + 8 * K
    text += (
        f"\n\nBytes the trace keeps per token at K={K}: numeric arrays {kept['arrays']:.0f} "
        f"(logprob 4 + rank 4 + entropy 4 + token id 4 + K x (logprob 4 + id 4) = {16 + 8 * K}; goal {goal}), "
        + (f"plus the alternatives' text lists {kept['lists']:.0f} (pointers to one shared str per vocabulary id)."
           if kept["lists"] else "and no per-token lists: the alternatives' texts are read from the runner's shared "
           "vocabulary on demand (benchmarks/trace_memory.py measures everything a trace keeps).")
    )
    return text


def bench_scoring(runner, model, tokenizer, repeats: int, lengths: tuple[int, ...] = (512, 2048)) -> str:
    import torch

    rows = []
    words = (PROMPT + ", or, through inaction, allow a human being to come to harm. ") * 400
    all_ids = tokenizer(words)["input_ids"]
    for n in lengths:
        ids = all_ids[:n]
        text = tokenizer.decode(ids)
        n_scored = len(tokenizer(text)["input_ids"])
        tensor = torch.tensor([tokenizer(text)["input_ids"]])

        def bare(tensor=tensor):
            with torch.inference_mode():
                return model(input_ids=tensor, use_cache=False).logits

        def ours(text=text):
            return runner.score(text, top_logprobs=K, progress=False)

        times = alternate({"bare forward": bare, "logprob_viz score (K=20)": ours}, repeats)
        base = median(times["bare forward"])
        for name, t in times.items():
            rows.append([n_scored, name, f"{median(t) * 1000:.0f}", f"{median(t) / base:.3f}"])
    headers = ["tokens", "route", "ms", "ratio to bare forward (goal <= 1.10)"]
    return f"### Scoring, median of {repeats} alternating runs\n\n" + table(headers, rows)


def bench_streaming(runner, model, new_tokens: int, repeats: int) -> str:
    import time

    import numpy as np

    from logprob_viz.sources.local.recording import Recorder

    eos = model.generation_config.eos_token_id

    def generate():
        return runner.generate(PROMPT, max_new_tokens=new_tokens, top_logprobs=K, progress=False)

    def stream():
        *_, last = runner.stream(PROMPT, max_new_tokens=new_tokens, top_logprobs=K)
        return last

    model.generation_config.eos_token_id = None  # both run to exactly new_tokens tokens
    try:
        assert len(generate()) == len(stream()), "stream and generate made different lengths"
        times = alternate({"runner.generate": generate, "runner.stream (snapshot per token)": stream}, repeats)
    finally:
        model.generation_config.eos_token_id = eos
    base = median(times["runner.generate"])
    rows = [[name, f"{median(t) * 1000:.0f}", f"{new_tokens / median(t):.1f}", f"{base / median(t):.3f}"]
            for name, t in times.items()]
    text = (f"### Streaming: {new_tokens} new tokens, greedy, K={K}, median of {repeats} alternating runs\n\n"
            + table(["route", "ms", "tokens/s", "throughput vs generate (goal >= 0.95)"], rows))

    # Snapshot cost alone: a 1,000-token stream's snapshots, one per token, on recorded-like rows.
    n, rng = 1000, np.random.default_rng(0)

    def rows(m):
        ids = rng.integers(0, runner.capabilities.vocab_size, (m, K))
        return {"token_ids": ids[:, 0], "logprobs": np.zeros(m, np.float32), "ranks": np.ones(m, np.int32),
                "entropy": np.zeros(m, np.float32), "top_logprobs": np.zeros((m, K), np.float32), "top_ids": ids}

    record = Recorder(runner.engine, [1, 2, 3], K, 3 + n, processed=False)
    record.add(rows(2))  # the prompt's scored tokens
    started = time.perf_counter()
    last = 0.0
    for _ in range(n):
        record.add(rows(1))
        t0 = time.perf_counter()
        record.trace({}, copy=False)
        last = time.perf_counter() - t0
    total = time.perf_counter() - started
    per_token = base / new_tokens
    text += (f"\n\nSnapshots of a {n:,}-token stream (one per token, K={K}): {total * 1000:.0f} ms in all "
             f"(recording included), {last * 1000:.2f} ms for the last one; generating {n:,} tokens here takes "
             f"~{per_token * n:.0f} s, so the snapshots add {total / (per_token * n) * 100:.1f}%.")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--memory-tokens", type=int, default=1024)
    parser.add_argument("--score-tokens", default="512,2048", help="lengths of the scored texts")
    parser.add_argument("--only", choices=["generation", "scoring", "memory", "streaming"], help="run one table")
    parser.add_argument("--memory-child", help=argparse.SUPPRESS)
    args = parse_args(parser, quick={"repeats": 1, "new_tokens": 16, "memory_tokens": 64, "score_tokens": "64,128"})
    if args.memory_child:
        _memory_child(args.memory_child, args.new_tokens)
        return
    runner, model, tokenizer = load()
    print(f"Machine: {machine()}\n")
    if args.only in (None, "generation"):
        print(bench_generation(runner, model, tokenizer, args.new_tokens, args.repeats), end="\n\n", flush=True)
    if args.only in (None, "scoring"):
        lengths = tuple(int(n) for n in args.score_tokens.split(","))
        print(bench_scoring(runner, model, tokenizer, args.repeats, lengths), end="\n\n", flush=True)
    if args.only in (None, "streaming"):
        print(bench_streaming(runner, model, args.new_tokens, args.repeats), end="\n\n", flush=True)
    if args.only in (None, "memory"):
        print(bench_memory(args.memory_tokens), flush=True)


if __name__ == "__main__":
    main()
