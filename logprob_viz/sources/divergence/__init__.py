"""`lv.divergence`: two engines score the same token ids; where their numbers part (issue 44).

    run.py    `divergence`: the checks, the batches, a block of positions at a time, the records
    sides.py  what each side gives (a local runner's whole distribution, a server's or a trace's top-K)
              and the checks that both score the base's token ids
    local.py  a local runner's batched forward pass, read as float64 log-probabilities a block at a time
    kld_file.py  `lv.read_kld`: llama-perplexity's --kl-divergence-base file, memory-mapped, as a base
    rollouts_file.py  `lv.read_rollouts`: RL rollouts from Parquet or JSONL, columns named by the user

The records (`Divergence`, the per-position math, llama-perplexity's statistics) are records/divergence/.
"""

from __future__ import annotations

from .kld_file import KldFile, read_kld
from .rollouts_file import read_rollouts
from .run import divergence

__all__ = ["divergence", "read_kld", "KldFile", "read_rollouts"]
