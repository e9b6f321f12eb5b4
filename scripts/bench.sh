#!/usr/bin/env bash
# The benchmarks: set-up, then each module of the benchmarks package (python -m benchmarks.NAME,
# from the repository root). Each section's table goes to benchmarks/results/NAME.md (with the
# machine and the date) and benchmarks/RESULTS.md is put together from them, so one section can be
# measured again without the others (a full run is most of an hour on 2 cores):
#   scripts/bench.sh                   every section
#   scripts/bench.sh frontend adapters those sections only; the others are kept as they were
set -euo pipefail
cd "$(dirname "$0")/.."
SECTIONS=(runner trace_memory frontend frontend_click frontend_lab adapters compare lens corpus corpus_view corpus_lab scale attribution choices divergence gpu)
declare -A TITLE=(
  [runner]="Runner" [trace_memory]="Trace memory" [frontend]="Frontend (headless chromium)"
  [frontend_click]="The explorer's first click (JupyterLab + chromium)"
  [frontend_lab]="A view's first render in JupyterLab (JupyterLab + chromium)"
  [adapters]="Reading server responses" [compare]="Compare view (headless chromium)" [lens]="Logit lens"
  [corpus]="Corpus: batched scoring and generation, the surprise index"
  [corpus_view]="Corpus view (headless chromium)"
  [corpus_lab]="Corpus view in JupyterLab: 1M traces from Parquet (JupyterLab + chromium)"
  [scale]="Scale: 1M traces from Parquet in the view, the surprise index over 100M tokens, a corpus through vLLM against vLLM offline"
  [attribution]="Attribution (side by side with inseq 0.7.1, installed by this script beside the project)"
  [choices]="Choices: runner.choose side by side with lm-eval 0.4.13 (installed by this script beside the project), and its speed"
  [divergence]="Divergence: lv.divergence against two runners' score; reading a llama.cpp base-logits file"
  [gpu]="GPU"
)
# Why some sections run smaller than their script's defaults: the lens over 512 tokens and 30 layers
# takes most of a minute a round; 1,000 texts through the corpus's five routes take most of an hour.
declare -A ARGS=([lens]="--repeats 2" [corpus]="--texts 100 --prompts 16" [divergence]="--texts 32" [corpus_lab]="--runs 2")
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=("${SECTIONS[@]}")
for name in "${wanted[@]}"; do
  [ -n "${TITLE[$name]:-}" ] || { echo "bench.sh: no section '$name'; the sections: ${SECTIONS[*]}" >&2; exit 2; }
done

bash scripts/setup.sh --browser
# The peer the frontend is measured against. --no-deps: its requirements would replace torch.
.venv/bin/pip install -q --no-deps circuitsvis==1.43.3 2> >(grep -v "is ignored" >&2)
.venv/bin/pip install -q importlib-metadata 2> >(grep -v "is ignored" >&2)
# The corpus scorer's peer, the same way (benchmarks/corpus.py names what it imports).
.venv/bin/pip install -q --no-deps minicons==0.3.39 pillow wonderwords 2> >(grep -v "is ignored" >&2)
# The attribution benchmark's peer, inseq 0.7.1, into a folder of its own in the cache (its
# requirements pin a torch and a transformers; found through INSEQ_PATH, see benchmarks/attribution.py).
INSEQ_PATH="${LOGPROB_VIZ_CACHE:-$HOME/.cache/logprob_viz}/bench-peers/inseq-0.7.1"
if [ ! -d "$INSEQ_PATH/inseq" ]; then
  .venv/bin/pip install -q --no-deps --target "$INSEQ_PATH" inseq==0.7.1 captum jaxtyping "typeguard==2.13.3" \
    matplotlib pillow pyparsing kiwisolver contourpy fonttools cycler treescope 2> >(grep -v "is ignored" >&2)
fi
export INSEQ_PATH
# The choices benchmark's peer, lm-eval 0.4.13: installed by scripts/setup.sh (the tests check against it too).
LMEVAL_PATH="${LOGPROB_VIZ_CACHE:-$HOME/.cache/logprob_viz}/bench-peers/lm-eval-0.4.13"
export LMEVAL_PATH
export OMP_NUM_THREADS=1

gpu_section() {
  # scripts/gpu_check.sh (benchmarks/gpu): on a CUDA device its table; without one, what waits for a
  # device, and the same check on the CPU with tiny models (its shape and fidelity, not GPU speed).
  if .venv/bin/python -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    PYTHON=.venv/bin/python bash scripts/gpu_check.sh
  else
    cat <<'TEXT'
No CUDA device on the machine this ran on, so every GPU figure waits for one: runner.generate's tokens/s
against model.generate on the 1B-class Llama in bf16 (goal >= 0.97), host waits per generated token
(<= 1/16) and peak GPU memory against model.generate's; runner.score(list) of 256 texts x 512 tokens
against the padded forward passes alone (>= 0.90 of their throughput); the lens against its floor
(<= 1.2x); runner.choose against issue 27's floor (<= 1.3x); float32 fidelity CUDA against CPU (12 tiny
architectures within 1e-4, greedy tokens equal; the 1B model within 1e-3). To measure them, on a machine
with one CUDA GPU, torch, transformers and numpy (nothing else), from the repository's root:

    bash scripts/gpu_check.sh --out gpu.md      # sized for <= 5 min on one H100 (--quick: 90 s); not yet timed there

with benchmarks/gpu/tokenizer/ carried beside the tree (git-ignored; `scripts/gpu_check.sh --prepare`
writes it where the default model is). Below, the same check on this CPU with tiny models
(`--device cpu --tiny`, the test suite's run): its speed rows are tiny models on a shared CPU, not GPU
figures; its fidelity rows check the runner against plain transformers on each architecture.

TEXT
    PYTHON=.venv/bin/python bash scripts/gpu_check.sh --device cpu --tiny
  fi
}

mkdir -p benchmarks/results
for name in "${wanted[@]}"; do
  out=benchmarks/results/$name.md
  {
    echo "## ${TITLE[$name]}"
    echo
    echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC'), load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo
    if [ "$name" = gpu ]; then gpu_section
    elif [ "$name" = runner ]; then .venv/bin/python -m benchmarks.runner
    else
      # shellcheck disable=SC2086  # ARGS holds several words on purpose
      .venv/bin/python -m "benchmarks.$name" ${ARGS[$name]:-}
    fi
  } > "$out.partial" 2> >(grep -v "Loading weights" >&2)
  mv "$out.partial" "$out"
  echo "wrote $out"
done

{
  echo "# Benchmark results"
  echo
  echo "Made by \`scripts/bench.sh\`, one section at a time (each says when it was measured); ratios are measured"
  echo "side by side in one run (alternating); absolute times drift on this shared machine. What each target"
  echo "means: benchmarks/README.md."
  for name in "${SECTIONS[@]}"; do
    [ -f "benchmarks/results/$name.md" ] || continue
    echo
    cat "benchmarks/results/$name.md"
  done
} > benchmarks/RESULTS.md
echo "wrote benchmarks/RESULTS.md"
