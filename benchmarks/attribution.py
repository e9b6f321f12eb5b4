"""Attribution benchmark: ours next to inseq 0.7.1, and integrated gradients against their floor.

    python -m benchmarks.attribution [--targets 4] [--steps 64] [--tokens 200] [--repeats 3]
                                     [--only inseq|floor] [--quick]

Prints Markdown tables:
1. inseq side by side, on the default model, lesson 3's planet prompt and its greedy answer: for
   each method (gradient x input; integrated gradients with inseq's baseline, the unk token's
   embedding at every position, and Gauss-Legendre nodes, captum's default) and each
   generated target token, the Pearson correlation of our per-token scores with inseq's (its
   per-dimension attributions summed over the embedding, the same sum our dot product is), and
   both times. The quantity is log p(target) on both sides (inseq:
   ``attributed_fn="probability", logprob=True``).
2. integrated gradients with `--steps` steps on a `--tokens`-token prompt, against the floor:
   that many forward + backward passes (gradient by the input embeddings, last position only).

inseq is a benchmark-only peer, installed beside the project without touching torch:
    pip install --no-deps --target DIR inseq==0.7.1 captum jaxtyping "typeguard==2.13.3" \
        matplotlib pillow pyparsing kiwisolver contourpy fonttools cycler treescope
and found through INSEQ_PATH=DIR (or installed in the environment). Without it, table 1 says why.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from importlib.metadata import version

import numpy as np

from benchmarks.common import alternate_with_cpu, machine, median, parse_args, table

PROMPT = "Q: What is the largest planet in the solar system?\nA:"
SENTENCE = "A robot may not injure a human being, or, through inaction, allow a human being to come to harm. "


def load():
    import torch

    import logprob_viz as lv

    torch.set_num_threads(1)
    return lv.load()


def _inseq():
    """The inseq module, or the reason it cannot be imported here."""
    if os.environ.get("INSEQ_PATH"):
        sys.path.append(os.environ["INSEQ_PATH"])
    try:
        import inseq
    except Exception as error:  # any failure to import is the answer for the table
        return None, f"{type(error).__name__}: {error}"
    return inseq, None


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _inseq_scores(inseq, runner, method: str, text: str, n_prompt: int, steps: int):
    """inseq's scores for every generated token of `text`: {position: [position] array}, seconds."""
    kwargs = {"n_steps": steps, "internal_batch_size": steps} if method == "integrated_gradients" else {}
    model = inseq.load_model(runner.model, "input_x_gradient" if method == "gradient_x_input" else method,
                             tokenizer=runner.tokenizer)
    prompt = runner.tokenizer.decode(runner.tokenizer(text)["input_ids"][:n_prompt])
    out, seconds = _timed(lambda: model.attribute(
        prompt, text, attributed_fn="probability", logprob=True, step_scores=[], show_progress=False, **kwargs))
    attribution = out.sequence_attributions[0]
    scores = attribution.target_attributions  # (positions, generated, d): per embedding dimension
    per_token = np.nan_to_num(scores.sum(-1).double().numpy())  # the dot product, as ours
    return {n_prompt + j: per_token[: n_prompt + j, j] for j in range(per_token.shape[1])}, seconds


def _unk_baseline(runner, text: str, at: int):
    """inseq's baseline for a decoder-only model: the tokenizer's unk token's embedding at every position."""
    table = runner.model.get_input_embeddings().weight.detach()
    return table[runner.tokenizer.unk_token_id].expand(at, -1).clone()  # (at, d)


def bench_inseq(runner, n_targets: int, steps: int) -> str:
    inseq, why_not = _inseq()
    if inseq is None:
        return f"### inseq side by side\n\ninseq 0.7.1 could not be imported here: {why_not}"
    trace = runner.generate(PROMPT, max_new_tokens=n_targets, top_logprobs=0, progress=False)
    text, n_prompt = trace.text, trace.prompt_len
    runner.attribute(text, at=n_prompt)  # warm up: the first backward pass builds its kernels
    rows = []
    for method in ("gradient_x_input", "integrated_gradients"):
        theirs, their_time = _inseq_scores(inseq, runner, method, text, n_prompt, steps)
        ours, our_time = {}, 0.0
        for at in theirs:
            options = {}
            if method == "integrated_gradients":
                options = {"n_steps": steps, "baseline": _unk_baseline(runner, text, at)}
            got, seconds = _timed(lambda at=at, method=method, options=options: runner.attribute(
                text, at=at, method=method, **options))
            ours[at], our_time = got, our_time + seconds
        for at, scores in theirs.items():
            r = float(np.corrcoef(ours[at].scores, scores)[0, 1])
            rows.append([method, repr(ours[at].target), at, f"{r:.4f}",
                         f"{our_time * 1000:.0f}", f"{their_time * 1000:.0f}"])
    return (
        f"### inseq {version('inseq')} side by side: {len(theirs)} targets, IG {steps} steps\n\n"
        + table(["method", "target", "position", "Pearson r", "ours, all targets (ms)", "inseq (ms)"], rows)
    )


def bench_ig_floor(runner, n_tokens: int, steps: int, repeats: int) -> str:
    import torch

    ids = runner.tokenizer(SENTENCE * (n_tokens // 10 + 10))["input_ids"][: n_tokens + 1]
    text = runner.tokenizer.decode(ids)
    ids = runner.tokenizer(text)["input_ids"]
    embeds = runner.model.get_input_embeddings().weight.detach()[torch.tensor(ids[:-1])][None]  # (1, T, d)

    def floor():
        for p in runner.model.parameters():
            p.requires_grad_(False)
        try:
            for _ in range(steps):
                x = embeds.clone().requires_grad_(True)
                logits = runner.model(inputs_embeds=x, use_cache=False, logits_to_keep=1).logits[0, -1]
                torch.autograd.grad(torch.log_softmax(logits, -1)[ids[-1]], x)
        finally:
            for p in runner.model.parameters():
                p.requires_grad_(True)

    def ours():
        runner.attribute(text, at=len(ids) - 1, method="integrated_gradients", n_steps=steps)

    candidates = {f"{steps} forward + backward (floor)": floor, f"integrated gradients, {steps} steps": ours}
    times, cpu = alternate_with_cpu(candidates, repeats, warmup=0)
    base, base_cpu = median(times[next(iter(times))]), median(cpu[next(iter(cpu))])
    rows = [[name, f"{median(t) * 1000:.0f}", f"{median(t) / base:.2f}", f"{median(cpu[name]) / base_cpu:.2f}"]
            for name, t in times.items()]
    return (
        f"### Integrated gradients: {len(ids) - 1} tokens, {steps} steps, median of {repeats} alternating runs\n\n"
        + table(["route", "ms", "ratio to the floor", "ratio, CPU time"], rows)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=4, help="generated tokens attributed in the inseq table")
    parser.add_argument("--steps", type=int, default=64)
    parser.add_argument("--tokens", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=["inseq", "floor"], help="run one table")
    args = parse_args(parser, quick={"targets": 2, "steps": 8, "tokens": 40, "repeats": 1})
    runner = load()
    print(f"Machine: {machine()}\n")
    if args.only in (None, "inseq"):
        print(bench_inseq(runner, args.targets, args.steps), end="\n\n", flush=True)
    if args.only in (None, "floor"):
        print(bench_ig_floor(runner, args.tokens, args.steps, args.repeats), flush=True)


if __name__ == "__main__":
    main()
