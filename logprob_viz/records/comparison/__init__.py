"""Traces side by side, aligned by bytes whatever the tokenizers (`lv.compare`, `lv.Comparison`).

    record.py   `Comparison` and `compare`: the spans, the rows, the tables
    scored.py   the numbers of a comparison, each with the part of the text it is taken over
    checks.py   the input checks of `compare` and the messages that say what was wrong
"""

from __future__ import annotations

from .record import Comparison, ComparisonWarning, compare

__all__ = ["compare", "Comparison", "ComparisonWarning"]
