"""python -m benchmarks.gpu [--device auto|cuda|cpu] [--tiny] [--quick] [--out FILE] [--prepare]

Measures the runner on the device (bf16 on CUDA, float32 on the CPU) against its floors, and
float32 fidelity between the device and the CPU, and prints one Markdown table (also written to
``--out``). ``--tiny`` swaps the 1B-class model for a tiny one of the same kind and shrinks every
size: the same code in seconds on a CPU, which the test suite runs. ``--quick`` (sized for ≤ 90 s on an H100)
takes fewer tokens and texts and two runs each; the full run (sized for ≤ 5 min) five. Neither is timed on a GPU yet.
``--prepare`` only copies the default tokenizer into the tree (see `benchmarks.gpu.models`).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from benchmarks.gpu import fidelity, imports, speed
from benchmarks.gpu.models import TINY as TINY_MODELS
from benchmarks.gpu.models import big_config, build, load_tokenizer, prepare_tokenizer
from benchmarks.gpu.report import Row, header, render

STARTED = time.perf_counter()  # the whole run's clock, from the import on


@dataclass(frozen=True)
class Sizes:
    new_tokens: int = 256
    texts: int = 256
    text_tokens: int = 512
    batch_tokens: int = 16384  # the runner's default on a GPU: 32 texts of 512 tokens a batch
    lens_tokens: int = 512
    prompts: int = 64
    fidelity_tokens: int = 32
    big_fidelity_tokens: int = 128
    repeats: int = 5


QUICK = Sizes(new_tokens=64, texts=64, repeats=2)
TINY = Sizes(new_tokens=16, texts=8, text_tokens=64, batch_tokens=256, lens_tokens=64, prompts=8,
             fidelity_tokens=8, big_fidelity_tokens=32, repeats=2)


def imports_row() -> Row:
    found = imports.beyond_bare()
    return Row("imports beyond torch, transformers and numpy (what a bare machine lacks)",
               ", ".join(found) or "none", "-", float(len(found)), "<= 0")


def load_big(tokenizer, device, sizes: Sizes, tiny: bool):
    """The 1B-class model (float32, seeded) on the device: its fidelity row, then a runner in the speed dtype."""
    import torch

    import logprob_viz as lv

    model = build(big_config(len(tokenizer), tiny), device)
    runner = lv.load((model, tokenizer))
    row = fidelity.big_row(runner, sizes.big_fidelity_tokens)
    if torch.device(device).type == "cuda":
        runner = lv.load((model.to(torch.bfloat16), tokenizer))
    return runner, row


def measure(device, sizes: Sizes, tiny: bool) -> list[Row]:
    tokenizer = load_tokenizer()
    runner, big = load_big(tokenizer, device, sizes, tiny)
    rows: list[Row] = []
    part(rows, "runner.generate", lambda: speed.generate_rows(runner, sizes.new_tokens, sizes.repeats))
    part(rows, "runner.score(list)", lambda: [speed.score_row(runner, sizes.texts, sizes.text_tokens,
                                                              sizes.batch_tokens, sizes.repeats)])
    part(rows, "runner.lens", lambda: [speed.lens_row(runner, sizes.lens_tokens, sizes.repeats)])
    part(rows, "runner.choose", lambda: [speed.choose_row(runner, sizes.prompts, sizes.repeats)])
    part(rows, "lv.divergence", lambda: [speed.divergence_row(runner, sizes.texts, sizes.text_tokens,
                                                              sizes.batch_tokens, sizes.repeats)])
    rows.append(big)
    for name in TINY_MODELS:
        part(rows, f"fidelity: tiny {name}", lambda name=name: [fidelity.tiny_row(name, tokenizer, device,
                                                                                 sizes.fidelity_tokens)])
    rows.append(imports_row())
    return rows


def part(rows: list[Row], name: str, make) -> None:
    """Add the rows `make()` returns; a part that fails becomes a row saying so, and the others still run
    (on a GPU machine lent for minutes, one failure must not lose the whole table)."""
    try:
        rows.extend(make())
    except Exception as error:  # any failure is reported in the table, with its message
        rows.append(Row(f"{name} (failed)", type(error).__name__, "-", float("nan"), met="error",
                        why=traceback.format_exception_only(error)[-1].strip()))
    print(f"[gpu check] {time.perf_counter() - STARTED:.0f} s: {name} done", file=sys.stderr, flush=True)


def resolve(device: str):
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if torch.device(device).type == "cuda":
        # float32 must mean float32 for the fidelity rows: no TF32 matmuls or convolutions.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    return torch.device(device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cuda, cuda:1 or cpu")
    parser.add_argument("--tiny", action="store_true", help="tiny models and sizes: the same code on a CPU")
    parser.add_argument("--quick", action="store_true", help="fewer tokens and texts, two runs each")
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("--prepare", action="store_true", help="only copy the default tokenizer into the tree")
    args = parser.parse_args()
    if args.prepare:
        print(f"tokenizer: {prepare_tokenizer()}")
        return
    imports.watch()  # before logprob_viz is first imported
    device = resolve(args.device)
    sizes = TINY if args.tiny else QUICK if args.quick else Sizes()
    mode = "tiny" if args.tiny else "quick" if args.quick else "full"
    dtype = "bfloat16" if device.type == "cuda" else "float32"
    text = f"{header(device, dtype, mode)}\n\n{render(measure(device, sizes, args.tiny))}\n"
    text += f"\nWhole run: {time.perf_counter() - STARTED:.0f} s.\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
