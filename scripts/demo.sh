#!/usr/bin/env bash
# The demo on a fresh machine: set-up, then JupyterLab with the quickstart notebook (127.0.0.1).
set -euo pipefail
cd "$(dirname "$0")/.."
# the demo needs no llama.cpp server: skip its build (minutes) unless asked for
LOGPROB_VIZ_SKIP_LLAMACPP=${LOGPROB_VIZ_SKIP_LLAMACPP:-1} bash scripts/setup.sh
root=(); [ "$(id -u)" = 0 ] && root=(--allow-root)  # JupyterLab refuses root without it
exec .venv/bin/jupyter-lab notebooks/quickstart.ipynb --ip 127.0.0.1 "${root[@]}" "$@"
