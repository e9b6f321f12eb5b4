#!/usr/bin/env bash
# The GPU check (issue 47): measure the runner on whatever device is present, print one table.
#
#   scripts/gpu_check.sh [--device auto|cuda|cpu] [--tiny] [--quick] [--out FILE]
#   scripts/gpu_check.sh --prepare     # where the default model is: copy its tokenizer into the tree
#
# Needs only python with torch, transformers and numpy, and this repository's files: no venv, no
# install (PYTHONPATH is the tree), no network. The default tokenizer (benchmarks/gpu/tokenizer/,
# git-ignored, 3.5 MB) is written by --prepare, which runs on its own when the folder is missing
# and the default model is at hand; carry the folder to a machine without it. PYTHON picks the
# interpreter (default: python3); LOGPROB_VIZ_GPU_TOKENIZER another tokenizer folder (the tests'). On a CUDA machine: scripts/gpu_check.sh --out gpu.md (sized for <= 5 min;
# --quick <= 90 s); here, the test suite runs scripts/gpu_check.sh --device cpu --tiny.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export TOKENIZERS_PARALLELISM=false  # the tokenizer runs in this one process

if [[ " $* " == *" --prepare "* ]]; then
  exec "$PYTHON" -m benchmarks.gpu --prepare
fi
if [[ ! -f "${LOGPROB_VIZ_GPU_TOKENIZER:-benchmarks/gpu/tokenizer}/tokenizer.json" ]]; then
  "$PYTHON" -m benchmarks.gpu --prepare
fi
exec "$PYTHON" -m benchmarks.gpu "$@"
