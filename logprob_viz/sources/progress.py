"""Progress and interruption of a runner's call: the bar that appears once a call runs long, and
the interrupts (Ctrl-C, the caller's ``stop``) that end a generation early but keep what it made."""

from __future__ import annotations

import time
import warnings

__all__ = ["Progress", "Interrupted", "INTERRUPTS", "note_interrupt", "PROGRESS_AFTER_S"]

# generate / score show a progress bar only once they have run this long (tqdm's `delay`).
PROGRESS_AFTER_S = 2.0


class Interrupted(Exception):
    """Thrown into a runner's loop when the caller's ``stop`` says so (a Stop button, an Event)."""


# What ends a generation early but keeps what was generated.
INTERRUPTS = (KeyboardInterrupt, Interrupted)


def note_interrupt(error: BaseException) -> None:
    """Called by a runner that caught one of `INTERRUPTS`: Ctrl-C is worth a warning, a stop is not."""
    if isinstance(error, KeyboardInterrupt):
        warnings.warn("generation interrupted: the trace holds the tokens generated so far", stacklevel=3)


class Progress:
    """A tqdm.auto bar (a notebook widget in Jupyter) that appears only after PROGRESS_AFTER_S."""

    def __init__(self, enabled: bool, total: int, unit: str = "tok", desc: str = "generating", tqdm_class=None):
        self.bar = None
        if enabled and total > 0:
            try:  # tqdm is optional (the model extra): imported when a bar is wanted
                from tqdm.auto import tqdm
            except ImportError:  # tqdm comes with the model extra; without it, no bar
                return
            tqdm = tqdm_class or tqdm  # (tqdm.auto: the notebook's bar in Jupyter, the terminal's elsewhere)
            self.bar = tqdm(total=total, unit=unit, desc=desc, delay=PROGRESS_AFTER_S, leave=False, dynamic_ncols=True)

    def update_to(self, n: int) -> None:
        if self.bar is not None and n > self.bar.n:
            self.bar.update(n - self.bar.n)  # tqdm shows tokens so far and tokens/s

    def describe(self, desc: str) -> None:
        """A new label for the bar (a corpus on a server: how many requests are in flight)."""
        if self.bar is not None:
            self.bar.set_description(desc, refresh=False)

    def finish(self) -> None:
        """The work ended as it should, before the total (a generation's end of sequence, a stop
        string): the total becomes the count, so the bar closes as done. Otherwise tqdm's notebook
        bar, closed short of its total, stays on screen in red as if it had failed."""
        if self.bar is not None:
            self.bar.total = self.bar.n

    def close(self) -> None:
        if self.bar is not None:
            if time.time() - self.bar.start_t >= self.bar.delay:  # tqdm times with time.time
                self.bar.refresh()  # the last count, which tqdm's rate limit may have held back
            container = getattr(self.bar, "container", None)  # tqdm.notebook's widget, once shown
            if container is not None and getattr(self.bar, "displayed", False):
                # Hidden, not closed: a page that draws the output later (Voila renders a cell's
                # outputs after it ran) would find its model gone and show "model not found".
                self.bar.leave = True
                self.bar.close()
                container.layout.display = "none"
                return
            self.bar.close()
