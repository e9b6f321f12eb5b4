#!/usr/bin/env bash
# The benchmarks: set-up, then each script in benchmarks/, their tables collected into
# benchmarks/RESULTS.md (with the machine and the date). Arguments go to benchmarks/runner.py.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --browser
# The peer the frontend is measured against. --no-deps: its requirements would replace torch.
.venv/bin/pip install -q --no-deps circuitsvis==1.43.3 2> >(grep -v "is ignored" >&2)
.venv/bin/pip install -q importlib-metadata 2> >(grep -v "is ignored" >&2)
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
  .venv/bin/python benchmarks/runner.py "$@"
  echo
  echo "## Frontend (headless chromium)"
  echo
  .venv/bin/python benchmarks/frontend.py
} | tee "$out.partial" 2> >(grep -v "Loading weights" >&2)
mv "$out.partial" "$out"
echo "wrote $out"
