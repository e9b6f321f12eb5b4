"""The benchmarks: scripts that print Markdown tables (see README.md), run as modules from the
repository root, e.g. `python -m benchmarks.runner --quick`; `scripts/bench.sh` runs them all."""
