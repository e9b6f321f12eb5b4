"""The JSON a model wrote, read per value (`Trace.fields`, `lv.Fields`).

    fields.py        `lv.Fields`: a row per JSON leaf of a trace, with its tokens and probability
    spans.py         the byte scanner: where each value lies, and where a broken JSON broke
    alternatives.py  `Fields.what_else`: what else the model would have put in a field (a fork per alternative)

(Inside the package ``import json`` is still the standard library's: imports are absolute.)
"""

from __future__ import annotations

from .fields import FieldRow, Fields, JSONBreak, fields_of

__all__ = ["Fields", "FieldRow", "JSONBreak", "fields_of"]
