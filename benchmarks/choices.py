"""Choices benchmarks: `runner.choose` side by side with lm-eval 0.4.13, and what sharing the prompt saves.

    python -m benchmarks.choices [--repeats 3] [--prompts 50] [--parts lmeval,speed]

Prints Markdown tables:
1. a multiple-choice task of 24 questions written here (4 answers each, of different lengths),
   run by lm-eval 0.4.13's own pipeline (`simple_evaluate` on a `ConfigurableTask` whose
   dataset is these items, `output_type: multiple_choice`, metrics acc and acc_norm) with its
   `hf` model (`HFLM`) on the default model's local folder, and by `runner.choose(question,
   [" " + answer ...])` with ``length="sum"`` (acc) and ``length="per_char"`` (acc_norm): the
   largest difference between the per-option loglikelihoods, and both accuracies.
2. speed: choose over P prompts x 4 options of 1-3 tokens vs the floor, ONE padded batched
   forward pass of the P prompts each followed by its options' tokens (logits only: no
   log_softmax, no top-K); also vs scoring the 4P prompt+option texts one at a time and as one
   batched `runner.score(list)`. Routes alternate in one process; medians of wall and CPU time.

lm-eval is a benchmark-only peer, installed beside the project without touching torch:
    pip install --no-deps --target DIR lm-eval==0.4.13 datasets dill multiprocess xxhash sqlitedict \
        word2number more_itertools pytablewriter evaluate sacrebleu portalocker tabulate colorama lxml
and found through LMEVAL_PATH=DIR (or installed in the environment). Without it, table 1 says why.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from benchmarks.common import alternate_with_cpu, machine, median, parse_args, table

# question, answers, the right answer's index: short facts the 135M model half knows
ITEMS = [
    ("Question: What is the capital of France?\nAnswer:", ["Paris", "Berlin", "Madrid", "Rome"], 0),
    ("Question: How many legs does a spider have?\nAnswer:", ["six", "eight", "four", "ten"], 1),
    ("Question: What colour is the sky on a clear day?\nAnswer:", ["green", "red", "blue", "purple"], 2),
    ("Question: Which planet is the largest in the solar system?\nAnswer:", ["Mars", "Venus", "Mercury", "Jupiter"], 3),
    ("Question: What do bees make?\nAnswer:", ["honey", "milk", "silk", "wool"], 0),
    ("Question: What is frozen water called?\nAnswer:", ["steam", "ice", "sand", "glass"], 1),
    ("Question: Which animal is known as the king of the jungle?\nAnswer:", ["the mouse", "the cow", "the lion",
                                                                            "the sheep"], 2),
    ("Question: How many days are there in a week?\nAnswer:", ["five", "ten", "three", "seven"], 3),
    ("Question: What gas do plants take in from the air?\nAnswer:", ["carbon dioxide", "helium", "neon", "argon"], 0),
    ("Question: Who wrote Romeo and Juliet?\nAnswer:", ["Charles Dickens", "William Shakespeare", "Jane Austen",
                                                        "Mark Twain"], 1),
    ("Question: What is the boiling point of water in degrees Celsius?\nAnswer:", ["50", "0", "100", "200"], 2),
    ("Question: Which ocean is the largest?\nAnswer:", ["the Arctic Ocean", "the Indian Ocean", "the Atlantic Ocean",
                                                        "the Pacific Ocean"], 3),
    ("Question: What is the opposite of hot?\nAnswer:", ["cold", "tall", "loud", "fast"], 0),
    ("Question: Which metal is liquid at room temperature?\nAnswer:", ["iron", "mercury", "gold", "copper"], 1),
    ("Question: What is the chemical symbol for gold?\nAnswer:", ["Ag", "Fe", "Au", "Pb"], 2),
    ("Question: How many continents are there?\nAnswer:", ["three", "nine", "twelve", "seven"], 3),
    ("Question: What do cows drink?\nAnswer:", ["water", "milk", "oil", "juice"], 0),
    ("Question: Which is the fastest land animal?\nAnswer:", ["the tortoise", "the cheetah", "the snail",
                                                              "the elephant"], 1),
    ("Question: What is 3 times 4?\nAnswer:", ["7", "34", "12", "1"], 2),
    ("Question: In which country are the pyramids of Giza?\nAnswer:", ["Mexico", "Peru", "China", "Egypt"], 3),
    ("Question: What is the main language spoken in Brazil?\nAnswer:", ["Portuguese", "Spanish", "French",
                                                                        "English"], 0),
    ("Question: Which organ pumps blood through the body?\nAnswer:", ["the liver", "the heart", "the lungs",
                                                                      "the stomach"], 1),
    ("Question: What is the closest star to the Earth?\nAnswer:", ["Sirius", "Polaris", "the Sun", "Vega"], 2),
    ("Question: What do you call a baby dog?\nAnswer:", ["a kitten", "a calf", "a foal", "a puppy"], 3),
]
SPEED_OPTIONS = [" yes", " no", " not sure", " it depends"]  # 1, 1, 2 and 2 tokens with the default tokenizer
SUBJECTS = ["the film", "this phone", "the new café", "our hotel", "the concert", "this book", "the update",
            "the train", "her essay", "the museum"]
VERDICTS = ["was worth every minute", "broke after two days", "felt far too long", "made my week",
            "was exactly as advertised"]


def load():
    import torch

    import logprob_viz as lv

    torch.set_num_threads(1)
    return lv.load()


def _lm_eval():
    """The lm_eval package, or the reason it cannot be imported here."""
    if os.environ.get("LMEVAL_PATH"):
        sys.path.append(os.environ["LMEVAL_PATH"])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder: nothing to fetch
    try:
        import lm_eval
        from lm_eval.api.task import ConfigurableTask  # noqa: F401
        from lm_eval.models.huggingface import HFLM  # noqa: F401
    except Exception as error:  # any failure to import is the answer for the table
        return None, f"{type(error).__name__}: {error}"
    return lm_eval, None


def lm_eval_run(path: str):
    """lm-eval's acc, acc_norm and per-option loglikelihoods on ITEMS, by its own pipeline; seconds."""
    import datasets
    import torch
    from lm_eval import evaluator
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.models.huggingface import HFLM

    docs = [{"question": q, "choices": c, "answer": a} for q, c, a in ITEMS]
    task = ConfigurableTask(config={
        "task": "logprob_viz_mc", "output_type": "multiple_choice", "test_split": "test",
        "custom_dataset": lambda **_: datasets.DatasetDict({"test": datasets.Dataset.from_list(docs)}),
        "doc_to_text": "{{question}}", "doc_to_choice": "{{choices}}", "doc_to_target": "{{answer}}",
        "metric_list": [{"metric": "acc"}, {"metric": "acc_norm"}],
    })
    torch.set_num_threads(1)
    model = HFLM(pretrained=path, device="cpu", dtype="float32", batch_size=16)
    started = time.perf_counter()
    out = evaluator.simple_evaluate(model=model, tasks=[task], log_samples=True, bootstrap_iters=0,
                                    random_seed=0, numpy_random_seed=0, torch_random_seed=0, fewshot_random_seed=0)
    seconds = time.perf_counter() - started
    result = out["results"]["logprob_viz_mc"]
    samples = sorted(out["samples"]["logprob_viz_mc"], key=lambda s: s["doc_id"])
    lls = np.array([[float(r[0][0]) for r in s["resps"]] for s in samples])  # (items, options)
    return result["acc,none"], result["acc_norm,none"], lls, seconds


def ours(runner):
    """Our acc, acc_norm and per-option logprobs on ITEMS (lm-eval's target delimiter: a space); seconds."""
    started = time.perf_counter()
    sums, right, right_norm = [], [], []
    for question, answers, gold in ITEMS:
        options = [" " + a for a in answers]
        plain = runner.choose(question, options, gold=gold, progress=False)
        normed = runner.choose(question, options, gold=gold, length="per_char", progress=False)
        sums.append([plain.logprobs[o] for o in options])
        right.append(plain.correct)
        right_norm.append(normed.correct)
    return float(np.mean(right)), float(np.mean(right_norm)), np.array(sums), time.perf_counter() - started


def lmeval_table(runner) -> str:
    from logprob_viz.sources.local.default_model import default_model_path

    lm_eval, why = _lm_eval()
    if lm_eval is None:
        return f"lm-eval could not be imported ({why}); install it as the module docstring says."
    acc_ref, norm_ref, lls_ref, seconds_ref = lm_eval_run(str(default_model_path()))
    acc, norm, lls, seconds = ours(runner)
    diff = float(np.max(np.abs(lls - lls_ref)))
    rows = [
        ["lm-eval 0.4.13 `hf` (simple_evaluate)", f"{acc_ref:.4f}", f"{norm_ref:.4f}", "—", f"{seconds_ref:.2f}"],
        ["runner.choose (sum; per_char)", f"{acc:.4f}", f"{norm:.4f}", f"{diff:.2e}", f"{seconds:.2f}"],
    ]
    same = "the same" if (acc, norm) == (acc_ref, norm_ref) and diff < 1e-4 else "NOT the same"
    return (f"{len(ITEMS)} questions x 4 answers, default model (fp32, CPU): {same} acc and acc_norm, per-option "
            f"loglikelihoods within {diff:.1e} (target 1e-4).\n\n"
            + table(["route", "acc", "acc_norm", "max |loglikelihood diff|", "seconds"], rows)
            + "\n\n(lm-eval's time includes its request building and metric aggregation; ours is two choose calls "
            "per question, sum and per_char. Time is not the point of this table.)")


def speed_prompts(n: int) -> list[str]:
    out = []
    for i in range(n):
        subject, verdict = SUBJECTS[i % len(SUBJECTS)], VERDICTS[(i // len(SUBJECTS) + i) % len(VERDICTS)]
        out.append(f"Review {i}: I have to say {subject} {verdict}. Would I recommend it? Answer:")
    return out


def floor_forward(runner, prompts: list[str], options: list[str]) -> None:
    """One right-padded batched forward pass of every prompt followed by all its options' tokens (causal)."""
    import torch

    tok = runner.tokenizer
    rows = []
    for p in prompts:
        context = tok(p)["input_ids"]
        rows.append(context + [i for o in options for i in tok(p + o)["input_ids"][len(context):]])
    width = max(map(len, rows))
    ids = torch.tensor([r + [0] * (width - len(r)) for r in rows], device=runner.device)
    mask = torch.tensor([[1] * len(r) + [0] * (width - len(r)) for r in rows], device=runner.device)
    with torch.inference_mode():
        runner.model(input_ids=ids, attention_mask=mask, use_cache=False).logits.sum()


def speed_table(runner, n_prompts: int, repeats: int) -> str:
    prompts = speed_prompts(n_prompts)
    texts = [p + o for p in prompts for o in SPEED_OPTIONS]
    lengths = [len(runner.tokenizer(prompts[0] + o)["input_ids"])
               - len(runner.tokenizer(prompts[0])["input_ids"]) for o in SPEED_OPTIONS]
    prompt_tokens = [len(runner.tokenizer(p)["input_ids"]) for p in prompts]
    candidates = {
        "floor: one padded forward pass (prompts + options' tokens)": lambda: floor_forward(runner, prompts,
                                                                                            SPEED_OPTIONS),
        "runner.choose(prompts, options)": lambda: runner.choose(prompts, SPEED_OPTIONS, progress=False),
        "runner.choose(..., batch_tokens=1e6): one batch": lambda: runner.choose(prompts, SPEED_OPTIONS,
                                                                                batch_tokens=10**6, progress=False),
        "runner.score(list of the 4P texts)": lambda: runner.score(texts, progress=False),
        "runner.score(text) x 4P, one at a time": lambda: [runner.score(t, progress=False) for t in texts],
    }
    wall, cpu = alternate_with_cpu(candidates, repeats=repeats, warmup=1)
    floor_wall, floor_cpu = median(wall[next(iter(candidates))]), median(cpu[next(iter(candidates))])
    rows = [[name, f"{median(wall[name]):.3f}", f"{median(cpu[name]):.3f}", f"{median(wall[name]) / floor_wall:.2f}x",
             f"{median(cpu[name]) / floor_cpu:.2f}x"] for name in candidates]
    return (f"{n_prompts} prompts ({min(prompt_tokens)}–{max(prompt_tokens)} tokens) x {len(SPEED_OPTIONS)} options "
            f"({', '.join(f'{o!r}: {n}' for o, n in zip(SPEED_OPTIONS, lengths, strict=True))} tokens), "
            f"top_logprobs=5, {repeats} rounds alternating (after a warm-up), medians. "
            "Target: choose ≤ 1.3x the floor.\n\n"
            + table(["route", "wall s", "CPU s", "wall vs floor", "CPU vs floor"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--prompts", type=int, default=50)
    parser.add_argument("--parts", default="lmeval,speed")
    args = parse_args(parser, {"repeats": 1, "prompts": 8})
    runner = load()
    print(machine())
    parts = args.parts.split(",")
    if "lmeval" in parts:
        print("\n### Side by side with lm-eval 0.4.13\n")
        print(lmeval_table(runner))
    if "speed" in parts:
        print("\n### The prompt computed once for all its options\n")
        print(speed_table(runner, args.prompts, args.repeats))


if __name__ == "__main__":
    main()
