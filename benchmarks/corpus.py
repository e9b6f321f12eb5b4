"""Corpus benchmarks: batched scoring and generation on the default model, and the surprise index.

    python -m benchmarks.corpus [--texts 1000] [--prompts 64] [--new-tokens 64] [--parts scoring,index]

Prints Markdown tables:
1. scoring N short texts (10-60 tokens, cut from Python's help topics) at K=5: `runner.score(list)`
   vs the limit, a padded batched forward pass + gather of the chosen tokens' logprobs over the
   same length-sorted batches (its log_softmax runs over the whole [B, T, vocab] block at once,
   where the runner works in cache-sized blocks of rows), and vs the forward passes alone; vs
   minicons 0.3.39 `IncrementalLMScorer.compute_stats(rank=True)` on the same model object, in
   batches of 32 texts as given (its usual use); and vs one
   `runner.score(text)` per text. The texts are cut into slices and each slice is scored by
   every route in a rotating order, so all routes see the same machine load.
2. generating P prompts x T greedy tokens (EOS off, so every route makes exactly T tokens):
   `runner.generate(list)` vs one `runner.generate(prompt)` at a time, and whether the tokens agree.
3. the surprise index over 1M synthetic tokens (10,000 traces x 100): building the token table,
   `surprise_index(by="token")`, `by="class"`, `to_pandas()`.

minicons is a benchmark-only peer: ``pip install --no-deps minicons==0.3.39 pillow wonderwords``
(--no-deps keeps the pinned CPU torch). Without it its row says so.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from benchmarks.common import machine, median, table

K = 5
SLICES = 10


def load():
    import torch

    import logprob_viz as lv

    torch.set_num_threads(1)
    return lv.load()


def short_texts(tokenizer, n: int, seed: int = 0, lengths: tuple[int, int] = (10, 60)) -> list[str]:
    """N texts of 10-60 tokens (``lengths``), cut at random places from Python's help topics (offline everywhere)."""
    from pydoc_data.topics import topics

    ids = tokenizer("\n\n".join(topics[k] for k in sorted(topics)), add_special_tokens=False)["input_ids"]
    rng = np.random.default_rng(seed)
    texts = []
    while len(texts) < n:
        length = int(rng.integers(lengths[0], lengths[1] + 1))
        start = int(rng.integers(0, len(ids) - length))
        text = tokenizer.decode(ids[start : start + length]).strip()
        if text and lengths[0] <= len(tokenizer(text)["input_ids"]) <= lengths[1]:
            texts.append(text)
    return texts


def padded_forward_gather(runner, texts: list[str], budget: int, gather: bool = True) -> int:
    """The limit: length-sorted, right-padded forward passes, log_softmax and a gather, nothing else.

    ``gather=False``: the forward passes alone (the floor: no logprob is even computed).
    """
    import torch

    tok = runner.tokenizer
    encoded = sorted((tok(t)["input_ids"] for t in texts), key=len)
    done, i = 0, 0
    while i < len(encoded):
        j = i + 1
        while j < len(encoded) and (j - i + 1) * len(encoded[j]) <= budget:
            j += 1
        rows, width = encoded[i:j], len(encoded[j - 1])
        ids = torch.tensor([r + [0] * (width - len(r)) for r in rows], device=runner.device)
        mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], device=runner.device)
        with torch.inference_mode():  # no KV cache: the runner's scoring keeps none either
            logits = runner.model(input_ids=ids, attention_mask=mask, use_cache=False).logits[:, :-1]  # (B, T-1, V)
            if gather:
                torch.log_softmax(logits.float(), -1).gather(-1, ids[:, 1:, None])  # (B, T-1, 1): chosen logprobs
            done += int(mask[:, 1:].sum())
        i = j
    return done


def minicons_route(runner):
    try:
        from minicons import scorer
    except ImportError as error:
        return None, f"minicons not installed ({error.name}): pip install --no-deps minicons==0.3.39 pillow wonderwords"
    lm = scorer.IncrementalLMScorer(runner.model, device="cpu", tokenizer=runner.tokenizer)

    def run(texts):
        for i in range(0, len(texts), 32):
            lm.compute_stats(lm.prepare_text(texts[i : i + 32]), rank=True)

    return run, None


def bench_scoring(runner, n_texts: int) -> str:
    from logprob_viz.sources.local.batch import BATCH_TOKENS_CPU

    texts = short_texts(runner.tokenizer, n_texts)
    n_tokens = sum(len(runner.tokenizer(t)["input_ids"]) for t in texts)
    peer, missing = minicons_route(runner)
    routes = {
        "runner.score(list), K=5": lambda part: runner.score(part, top_logprobs=K, progress=False),
        "padded forward + gather (limit)": lambda part: padded_forward_gather(runner, part, BATCH_TOKENS_CPU),
        "padded forward alone (floor)": lambda part: padded_forward_gather(runner, part, BATCH_TOKENS_CPU, False),
        "runner.score(text) per text, K=5": lambda part: [runner.score(t, top_logprobs=K) for t in part],
    }
    if peer is not None:
        routes["minicons compute_stats(rank=True)"] = peer
    routes["runner.score(list), K=5"](texts[:20])  # warm-up: first calls allocate
    seconds = dict.fromkeys(routes, 0.0)
    names = list(routes)
    step = -(-len(texts) // SLICES)
    for s in range(SLICES):
        part = texts[s * step : (s + 1) * step]
        for name in names[s % len(names) :] + names[: s % len(names)]:
            started = time.perf_counter()
            routes[name](part)
            seconds[name] += time.perf_counter() - started
    base = seconds["padded forward + gather (limit)"]
    ours = seconds["runner.score(list), K=5"]
    rows = [[name, f"{t:.1f}", f"{n_tokens / t:.0f}", f"{t / base:.2f}", f"{t / ours:.2f}"]
            for name, t in seconds.items()]
    head = (f"Scoring {len(texts)} texts of 10-60 tokens ({n_tokens} tokens), K={K}, each route over the same "
            f"{SLICES} slices in rotating order\n\n")
    note = f"\n\n{missing}" if missing else ""
    return head + table(["route", "s", "tokens/s", "x limit", "x runner.score(list)"], rows) + note


def bench_generation(runner, n_prompts: int, new_tokens: int) -> str:
    texts = short_texts(runner.tokenizer, n_prompts, seed=1)
    eos = runner.model.generation_config.eos_token_id
    runner.model.generation_config.eos_token_id = None  # every route makes exactly new_tokens tokens
    try:
        times = {"batched": [], "one at a time": []}
        outputs = {}
        for name in ["batched", "one at a time", "batched"]:
            started = time.perf_counter()
            if name == "batched":
                made = list(runner.generate(texts, max_new_tokens=new_tokens, top_logprobs=K, progress=False))
            else:
                made = [runner.generate(t, max_new_tokens=new_tokens, top_logprobs=K, progress=False) for t in texts]
            times[name].append(time.perf_counter() - started)
            outputs[name] = made
    finally:
        runner.model.generation_config.eos_token_id = eos
    same = sum(a.token_ids.tolist() == b.token_ids.tolist()
               for a, b in zip(outputs["batched"], outputs["one at a time"], strict=True))
    total = n_prompts * new_tokens
    single = median(times["one at a time"])
    rows = [[name, len(t), f"{median(t):.1f}", f"{total / median(t):.1f}", f"{single / median(t):.2f}"]
            for name, t in times.items()]
    head = f"Generating {n_prompts} prompts x {new_tokens} greedy tokens, K={K} (batched, one at a time, batched)\n\n"
    return head + table(["route", "runs", "s (median)", "tokens/s", "x one at a time"], rows) + (
        f"\n\nSame greedy tokens batched and one at a time: {same} of {n_prompts} prompts.")


def synthetic_corpus(runner, n_traces: int = 10_000, length: int = 100, seed: int = 0):
    """1M tokens: ids drawn Zipf-like from the default vocabulary, random logprobs and ranks."""
    import logprob_viz as lv

    rng = np.random.default_rng(seed)
    vocab = runner.engine.vocab
    ids = np.minimum(rng.zipf(1.3, size=(n_traces, length)), runner.capabilities.vocab_size) - 1
    traces = []
    for row in ids:
        traces.append(lv.Trace(tokens=[vocab[i] for i in row.tolist()], token_ids=row,
                               logprobs=-rng.exponential(2.0, length).astype(np.float32),
                               ranks=rng.integers(1, 200, length), entropy=rng.uniform(0, 6, length)))
    return lv.Corpus(traces)


def bench_index(runner) -> str:
    import pandas  # noqa: F401  (imported once per process, ~1 s on a busy machine: not the index's cost)

    corpus = synthetic_corpus(runner)
    n = sum(len(t) for t in corpus)
    steps = [
        ("token table (once per corpus)", corpus.token_table),
        ('surprise_index(by="token")', lambda: corpus.surprise_index(by="token")),
        ('surprise_index(by="class")', lambda: corpus.surprise_index(by="class")),
        ("to_pandas() (a row per trace)", corpus.to_pandas),
    ]
    rows = []
    for name, fn in steps:
        started = time.perf_counter()
        fn()
        rows.append([name, f"{(time.perf_counter() - started) * 1000:.0f}"])
    first_total = sum(float(r[1]) for r in rows[:2])
    return (f"The surprise index over {n:,} synthetic tokens ({len(corpus):,} traces)\n\n"
            + table(["step", "ms"], rows)
            + f"\n\nFirst index of a fresh corpus (table + by token): {first_total:.0f} ms.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--texts", type=int, default=1000)
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--parts", default="scoring,generation,index", help="which tables, comma-separated")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    runner = load()
    print(f"Machine: {machine()}\n")
    if "scoring" in parts:
        print("### " + bench_scoring(runner, args.texts), end="\n\n")
    if "generation" in parts:
        print("### " + bench_generation(runner, args.prompts, args.new_tokens), end="\n\n")
    if "index" in parts:
        print("### " + bench_index(runner))


if __name__ == "__main__":
    main()
