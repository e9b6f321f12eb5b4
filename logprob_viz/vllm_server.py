"""Moved to `logprob_viz.servers.vllm`; this name stays so ``python -m logprob_viz.vllm_server`` still works."""

from __future__ import annotations

from .servers.vllm import *  # noqa: F403
from .servers.vllm import __all__, main  # noqa: F401

if __name__ == "__main__":
    raise SystemExit(main())
