#!/usr/bin/env bash
# The benchmarks: set-up, then each module of the benchmarks package (python -m benchmarks.NAME,
# from the repository root), their tables collected into benchmarks/RESULTS.md (with the machine
# and the date). Arguments go to benchmarks.runner.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --browser
# The peer the frontend is measured against. --no-deps: its requirements would replace torch.
.venv/bin/pip install -q --no-deps circuitsvis==1.43.3 2> >(grep -v "is ignored" >&2)
.venv/bin/pip install -q importlib-metadata 2> >(grep -v "is ignored" >&2)
# The corpus scorer's peer, the same way (benchmarks/corpus.py names what it imports).
.venv/bin/pip install -q --no-deps minicons==0.3.39 pillow wonderwords 2> >(grep -v "is ignored" >&2)
export OMP_NUM_THREADS=1
out=benchmarks/RESULTS.md
{
  echo "# Benchmark results"
  echo
  echo "Made by \`scripts/bench.sh\` on $(date -u +%Y-%m-%d). Ratios are measured side by side in one run (alternating);"
  echo "absolute times drift on this shared machine. What each target means: benchmarks/README.md."
  echo
  echo "## Runner"
  echo
  .venv/bin/python -m benchmarks.runner "$@"
  echo
  echo "## Trace memory"
  echo
  .venv/bin/python -m benchmarks.trace_memory
  echo
  echo "## Frontend (headless chromium)"
  echo
  .venv/bin/python -m benchmarks.frontend
  echo
  echo "## Reading server responses"
  echo
  .venv/bin/python -m benchmarks.adapters
  echo
  echo "## Compare view (headless chromium)"
  echo
  .venv/bin/python -m benchmarks.compare
  echo
  echo "## Logit lens"
  echo
  # two rounds: one lens over 512 tokens and 30 layers takes most of a minute on this CPU
  .venv/bin/python -m benchmarks.lens --repeats 2
  echo
  echo "## Corpus: batched scoring and generation, the surprise index"
  echo
  .venv/bin/python -m benchmarks.corpus
  echo
  echo "## Corpus view (headless chromium)"
  echo
  .venv/bin/python -m benchmarks.corpus_view
  echo
  echo "## Attribution (inseq: see benchmarks/attribution.py for its benchmark-only install)"
  echo
  .venv/bin/python -m benchmarks.attribution
  echo
  echo "## GPU"
  echo
  if .venv/bin/python -c "import sys, torch; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    echo "A CUDA device is present, but the ~1B-model GPU table (issue 13, item 4) has no script yet: not measured."
  else
    echo "No CUDA device on the machine this ran on, so the GPU figures (tokens/s vs model.generate on a ~1B model"
    echo "in bf16, host syncs per token) are not measured. The decode loop's host reads are counted on the CPU by"
    echo "tests/sources/local/test_runner.py (once per chunk of 16 steps, not per step)."
  fi
} | tee "$out.partial" 2> >(grep -v "Loading weights" >&2)
mv "$out.partial" "$out"
echo "wrote $out"
