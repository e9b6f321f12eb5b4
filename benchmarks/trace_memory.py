"""Bytes a local trace keeps per token (issue: lighter traces), measured with tracemalloc.

    python -m benchmarks.trace_memory [--tokens 1000000] [--new-tokens 200] [--generated 261] [--quick]

First, a trace as `runner.generate` returns it (the default 261 new tokens after the 8-token
prompt: 269 tokens, K=20): the bytes freed when it is deleted, per token, beside the same trace
once ``trace.flags`` was read (the per-token list of shared empty rows every trace kept before
flags were stored sparse).

A real trace from the default model (greedy, K=5 and K=20) is tiled to 1,000,000 tokens in two
forms: alternatives listed per token (`top_tokens=` lists of str, the old form) and read from the
tokenizer's shared vocabulary (`vocab=`, the form the local runner builds). tracemalloc counts
what each form allocates beyond what the runner already holds (its vocabulary table); the
numeric arrays alone are 16 + 8K bytes per token.
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

import numpy as np

from benchmarks.common import parse_args, table

N = 1_000_000
PROMPT = "A robot may not injure a human being"


def tiled(trace, n: int, listed: bool, vocab):
    from logprob_viz.records.trace import Trace

    reps = -(-n // len(trace))
    ids = np.tile(trace.top_ids, (reps, 1))[:n]
    pick = np.tile(np.arange(len(trace)), reps)[:n]
    kw = {"top_tokens": [list(trace.top_tokens[i]) for i in pick.tolist()]} if listed else {"vocab": vocab}
    tokens = [trace.tokens[i] for i in pick.tolist()]  # the runner shares one str per id, so do we
    raw = [trace.token_bytes[i] for i in pick.tolist()]
    return Trace(
        tokens=tokens,
        token_bytes=raw,
        token_ids=np.tile(trace.token_ids, reps)[:n],
        logprobs=np.tile(trace.logprobs, reps)[:n],
        ranks=np.tile(trace.ranks, reps)[:n],
        entropy=np.tile(trace.entropy, reps)[:n],
        top_logprobs=np.tile(trace.top_logprobs, (reps, 1))[:n],
        top_ids=ids,
        **kw,
    )


def measure(build) -> int:
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    obj = build()
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del obj
    return kept


def generated(runner, new_tokens: int, k: int = 20) -> list[list[object]]:
    """Bytes per token freed when a generated trace is deleted: as returned, and with its flags list made."""
    runner.generate(PROMPT, max_new_tokens=2, top_logprobs=k)  # the runner's own caches exist first
    rows = []
    for read_flags in (False, True):
        gc.collect()
        tracemalloc.start()
        trace = runner.generate(PROMPT, max_new_tokens=new_tokens, top_logprobs=k)
        if read_flags:
            trace.flags  # noqa: B018 (reading it makes the list)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        n, arrays = len(trace), sum(getattr(trace, name).nbytes for name in trace._array_names())
        del trace
        gc.collect()
        freed = held - tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        form = "after reading trace.flags (the list every trace kept before)" if read_flags else "as returned (now)"
        rows.append([n, k, form, f"{freed / n:.0f}", f"{arrays / n:.0f}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=N, help="length of the tiled trace")
    parser.add_argument("--new-tokens", type=int, default=200, help="length of the real trace it is tiled from")
    parser.add_argument("--generated", type=int, default=261, help="new tokens of the generated trace measured as is")
    args = parse_args(parser, quick={"tokens": 10_000, "new_tokens": 20, "generated": 40})

    import torch

    import logprob_viz as lv
    from logprob_viz.records.tokens import VocabTexts, token_bytes_table

    torch.set_num_threads(1)
    runner = lv.load()
    vocab = VocabTexts(token_bytes_table(runner.tokenizer))
    print("A generated trace as the runner returns it, freed when deleted (tracemalloc):\n")
    print(table(["tokens", "K", "trace", "bytes/token freed", "arrays alone"], generated(runner, args.generated)))
    print()
    rows = []
    for k in (5, 20):
        trace = runner.generate(PROMPT, max_new_tokens=args.new_tokens, top_logprobs=k)
        for i in trace.top_ids.ravel().tolist():  # the shared texts exist before we measure
            vocab[i]
        for listed in (True, False):
            kept = measure(lambda: tiled(trace, args.tokens, listed, vocab))  # noqa: B023 (measured at once)
            form = "listed top_tokens (before)" if listed else "vocab= (now)"
            rows.append([k, form, f"{kept / args.tokens:.0f}", 16 + 8 * k, f"{kept / 2**20:.0f} MiB"])
    print(f"A {args.tokens:,}-token trace, tiled from a real greedy trace of the default model:\n")
    print(table(["K", "alternatives' texts", "bytes/token kept", "arrays alone", "total"], rows))


if __name__ == "__main__":
    main()
