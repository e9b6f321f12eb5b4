"""The explorer's declared state, besides the tree and the node on show (`Explorer.tree`,
`Explorer.current`): what a job (`jobs.py`) reads and what the app's actions change.

One place that says what the app remembers between clicks, so no module reaches into another's
private members for it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from ...records.trace import Trace

__all__ = ["ExplorerState"]


@dataclass
class ExplorerState:
    tree_input: dict | None = None  # the prompt or messages the tree on show grew from
    base: Trace | None = None  # manual decoding: the text Next token continues
    step: Trace | None = None  # manual decoding: the runner's record of the position after `base`
    stop: threading.Event = field(default_factory=threading.Event)  # Stop: the running job ends early

    @property
    def decoding_by_hand(self) -> bool:
        """Whether Next token's choices are on show (a token can be chosen)."""
        return self.base is not None
