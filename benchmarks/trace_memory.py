"""Bytes a local trace keeps per token (issue: lighter traces), measured with tracemalloc.

    python -m benchmarks.trace_memory [--tokens 1000000] [--new-tokens 200] [--quick]

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=N, help="length of the tiled trace")
    parser.add_argument("--new-tokens", type=int, default=200, help="length of the real trace it is tiled from")
    args = parse_args(parser, quick={"tokens": 10_000, "new_tokens": 20})

    import torch

    import logprob_viz as lv
    from logprob_viz.records.tokens import VocabTexts, token_bytes_table

    torch.set_num_threads(1)
    runner = lv.load()
    vocab = VocabTexts(token_bytes_table(runner.tokenizer))
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
