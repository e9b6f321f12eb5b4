"""`lv.Divergence`: two engines over the same token ids, where their numbers part (issue 44).

    positions.py  the per-position math of two next-token distributions (KL with llama.cpp's cutoff or
                  exact, Δp, same top; a certain range of the KL where a side gives only its top-K)
    stats.py      llama-perplexity's statistics of those values (``summary()``), by its definitions
    record.py     `Divergence` (one text) and `Divergences` (many, pooled)
    rollouts.py   `Rollouts` (`Divergence.from_logprobs`): RL rollouts' per-token Δ, ratio, k1/k2/k3

`lv.divergence`, which runs two engines to make these, is in sources/divergence/.
"""

from __future__ import annotations

from .record import Divergence, Divergences
from .rollouts import Rollouts
from .stats import Interval

__all__ = ["Divergence", "Divergences", "Interval", "Rollouts"]
