#!/usr/bin/env bash
# The whole test suite on a fresh machine: set-up (chromium, the default model, the servers),
# the linters, the frontend unit tests, then pytest: the real default model, a real JupyterLab
# in Debian chromium, real vLLM and llama.cpp servers on 127.0.0.1.
#
#   scripts/test.sh [pytest arguments]        e.g. scripts/test.sh tests/test_runner.py -x
#
# Switches (environment; unset, empty or 0 means off):
#   LOGPROB_VIZ_SKIP_VLLM=1      skip the live vLLM suite (tests/vllm_live), which installs a CPU
#                                vLLM once (~4 GB) and starts it on each run
#   LOGPROB_VIZ_SKIP_LLAMACPP=1  skip the live llama.cpp suite (tests/llamacpp_live) and the
#                                llama-server build in set-up (~9 min once, on 2 cores)
#   LOGPROB_VIZ_TEST_WORKERS=N   pytest processes (pytest-xdist; default 2: the JupyterLab tests in
#                                one, the rest beside them, grouped as tests/conftest.py says; 0: one
#                                process, in the collected order, as --reverse / --shuffle need)
#
# Lint errors fail the command: `ruff check .` (config: [tool.ruff] in pyproject.toml), the size
# limits (scripts/check_sizes.py: no Python module over 400 lines, no function over 60, in
# logprob_viz/ and benchmarks/) and the JS linter (`npm run lint` in js/, when js/package.json has
# that script).
# A run leaves the checkout as it found it: tests write only to tests/artifacts/ (ignored);
# the pictures in docs/ change only through scripts/screenshots.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --browser --second-model  # the second model: the two-model corpus test and notebook run
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

printf '\n== lint: ruff check\n'
.venv/bin/ruff check .
printf '\n== lint: sizes (scripts/check_sizes.py)\n'
.venv/bin/python scripts/check_sizes.py
if (cd js && node -e 'process.exit(require("./package.json").scripts?.lint ? 0 : 1)'); then
  printf '\n== lint: js (npm run lint)\n'
  (cd js && npm run --silent lint)
fi

printf '\n== frontend unit tests (node --test)\n'
(cd js && npm test --silent)

printf '\n== pytest\n'
status=0
workers=${LOGPROB_VIZ_TEST_WORKERS:-2}
.venv/bin/python -m pytest -n "$workers" "$@" || status=$?
if [ "$status" = 5 ]; then  # pytest's "no tests were collected": never a pass
  echo "test.sh: pytest collected no tests (exit code 5); check the arguments: $*" >&2
fi
exit "$status"
