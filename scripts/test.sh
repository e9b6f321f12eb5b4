#!/usr/bin/env bash
# The whole test suite on a fresh machine: set-up (including chromium and the default model),
# then pytest: the real default model, a real JupyterLab in Debian chromium, a real vLLM server.
# Arguments go to pytest, e.g. scripts/test.sh -k runner
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --browser
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
printf '\n== frontend unit tests (node --test)\n'
(cd js && npm test --silent)
printf '\n== pytest\n'
exec .venv/bin/python -m pytest "$@"
