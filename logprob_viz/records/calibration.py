"""Calibration: is 90 % confidence right 90 % of the time? (`lv.calibration`, `choices.calibration()`).

Items are binned by their confidence in equal-width bins over [0, 1] (bin ``b`` holds
``edges[b] <= p < edges[b + 1]``, the last bin also holds p = 1, ``edges = linspace(0, 1, bins + 1)``).
Per bin: the count, the mean confidence and the accuracy (the share of its items that were right).

- ECE, expected calibration error: sum over bins of count / n * |accuracy - mean confidence|;
- MCE, maximum calibration error: the largest |accuracy - mean confidence| over non-empty bins;
- Brier score: the mean of (confidence - correct)^2 over the items (of the confidence as given:
  for choices, the predicted option's probability).
"""

from __future__ import annotations

import numpy as np

from .trace_fields import is_int
from .viewable import Viewable, show

__all__ = ["Calibration", "calibration", "bin_of"]


def bin_of(probs: np.ndarray, bins: int) -> np.ndarray:
    """Each probability's bin (0 .. bins - 1) among equal-width bins over [0, 1]."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    return np.clip(np.searchsorted(edges, probs, side="right") - 1, 0, bins - 1)


def calibration(probs, correct, bins: int = 10, *, items=None) -> Calibration:
    """The reliability table of confidences `probs` against outcomes `correct` (see the module docstring).

    Parameters
    ----------
    probs : array-like of float in [0, 1]
        Each item's confidence (the probability given to the answer it chose).
    correct : array-like of bool (or 0/1)
        Whether each item's answer was right.
    bins : int
        Equal-width bins over [0, 1].
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1)
    raw = np.asarray(correct).reshape(-1)
    if p.shape != raw.shape:
        raise ValueError(f"give one outcome per probability: {p.size} probabilities, {raw.size} outcomes")
    if not p.size:
        raise ValueError("no items: calibration needs at least one probability and its outcome")
    _check_probs(p)
    if raw.dtype != bool and not np.isin(raw, (0, 1)).all():
        raise ValueError("correct must be booleans (or 0 / 1): whether each item's answer was right")
    if not is_int(bins) or bins < 1:
        raise ValueError(f"bins must be an int >= 1 (equal-width bins over [0, 1]), got {bins!r}")
    return Calibration(p, raw.astype(bool), int(bins), items)


def _check_probs(p: np.ndarray) -> None:
    """A ValueError naming the first item whose probability is NaN or outside [0, 1], and its value."""
    bad = np.flatnonzero(np.isnan(p) | (p < 0) | (p > 1))
    if bad.size:
        i = int(bad[0])
        more = f" (and {bad.size - 1} more of the {p.size} items)" if bad.size > 1 else ""
        raise ValueError(f"probs must be probabilities in [0, 1] (the confidence of each answer), without NaN: "
                         f"item {i} is {float(p[i])!r}{more}; a logprob gives its probability as np.exp(logprob), "
                         "a percentage as p / 100")


class Calibration(Viewable):
    """A reliability table with ECE, MCE and the Brier score; `plot` draws the reliability diagram.

    Attributes
    ----------
    probs, correct : numpy arrays [n]
    bins : int
    bin_index : numpy int array [n]
        Each item's bin.
    items : Choices or None
        What the items are, when known (`choices.calibration()`): the diagram's bins open them.
    """

    def __init__(self, probs: np.ndarray, correct: np.ndarray, bins: int, items=None):
        self.probs, self.correct, self.bins, self.items = probs, correct, bins, items
        self.bin_index = bin_of(probs, bins)
        self.edges = np.linspace(0.0, 1.0, bins + 1)
        self.count = np.bincount(self.bin_index, minlength=bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            self.mean_confidence = np.bincount(self.bin_index, weights=probs, minlength=bins) / self.count
            self.accuracy = np.bincount(self.bin_index, weights=correct.astype(np.float64), minlength=bins) / self.count
        self.gap = np.abs(self.accuracy - self.mean_confidence)  # NaN for an empty bin

    @property
    def ece(self) -> float:
        """Expected calibration error: the count-weighted mean |accuracy - confidence| over the bins."""
        filled = self.count > 0
        return float(np.sum(self.count[filled] / self.count.sum() * self.gap[filled]))

    @property
    def mce(self) -> float:
        """Maximum calibration error: the largest |accuracy - confidence| over the non-empty bins."""
        return float(np.max(self.gap[self.count > 0]))

    @property
    def brier(self) -> float:
        """Mean squared difference between each confidence and its outcome (1 right, 0 wrong)."""
        return float(np.mean((self.probs - self.correct) ** 2))

    @property
    def accuracy_overall(self) -> float:
        return float(np.mean(self.correct))

    @property
    def table(self):
        """A pandas table, one row per bin: lower, upper, count, confidence (mean), accuracy, gap."""
        import pandas as pd  # optional dependency: only the table needs it

        return pd.DataFrame({
            "lower": self.edges[:-1], "upper": self.edges[1:], "count": self.count,
            "confidence": self.mean_confidence, "accuracy": self.accuracy, "gap": self.gap,
        }).rename_axis("bin")

    def items_in(self, b: int) -> np.ndarray:
        """The positions of the items in bin `b`."""
        if not 0 <= int(b) < self.bins:
            raise ValueError(f"bin must be between 0 and {self.bins - 1}, got {b}")
        return np.flatnonzero(self.bin_index == int(b))

    def plot(self, *, widget: bool = False, title: str | None = None):
        """The reliability diagram (plotly): accuracy per bin against the diagonal, counts on hover.

        ``widget=True`` gives a `ReliabilityDiagram` (the figure as a widget, with the items below
        it): clicking a bin lists its items, and opens them in the choices view when they are choices.
        """
        return self.view(title=title) if widget else show(self, "plot", title=title)

    def view(self, *, title: str | None = None):
        """The reliability diagram as a widget whose bins open their items (`plot(widget=True)`)."""
        return show(self, "view", title=title)

    def __repr__(self) -> str:
        return (f"<Calibration of {len(self.probs)} items in {self.bins} bins: ECE={self.ece:.4f}, "
                f"MCE={self.mce:.4f}, Brier={self.brier:.4f}, accuracy={self.accuracy_overall:.3f}>")

    def _repr_mimebundle_(self, **kwargs):
        try:
            return self.plot(widget=True)._repr_mimebundle_(**kwargs)
        except ImportError:  # no plotly: the table
            return {"text/plain": repr(self), "text/html": self.table._repr_html_()}
