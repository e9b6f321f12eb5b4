"""What a trace view says about a served trace's numbers: the audit's badge, the numbers' label, and
the message where the provider returned no logprobs. One synced dict, the view's ``_served`` trait
(drawn by js/logprob/served.js):

- ``badge``: `lv.audit`'s verdict (``trace.meta["audit"]``, `records.audit.verdict`): ``label``
  ("raw", "processed (T 0.7, top-p 0.9)", "3 tokens disagree"), ``kind``, ``positions`` (the
  disagreeing tokens, which a click on the badge pins in turn) and ``explanation``;
- ``numbers``: "as the model gave them" (raw) or "as sampled from" (scaled or processed), from the
  audit's kind when there is one, else from the reader's tag (``meta["numbers"]``,
  `sources.readers.numbers`); ``numbers_from`` says which;
- ``no_logprobs``: "the provider returned no logprobs" for a trace with tokens and no logprob at
  all (a reasoning model, a stream that sends none), so the view is never an empty heatmap.

`lv.audit` may judge a trace after its view is on show: every view follows the audits
(`follow_audits`), and the view showing the judged trace gets its ``_served`` again; the browser puts
the served line in its place (js/logprob/served.js `redrawServed`), the rest of the view untouched and
the pin kept, with no need to show the view again.
"""

from __future__ import annotations

import weakref

import numpy as np

from ...records.trace import Trace
from ...sources.audit import when_audited

__all__ = ["served_state", "follow_audits", "NUMBERS_LABELS", "NO_LOGPROBS"]

_VIEWS: weakref.WeakSet = weakref.WeakSet()  # the views that follow the audits (a view closed is let go)


def follow_audits(view) -> None:
    """Let `view` (a LogprobView) redraw its badge when `lv.audit` later judges the trace it shows."""
    _VIEWS.add(view)


def _audited(trace: Trace) -> None:
    for view in list(_VIEWS):
        if view.trace is trace:
            view.set_trait("_served", served_state(trace))


when_audited(_audited)

NO_LOGPROBS = "the provider returned no logprobs"
NUMBERS_LABELS = {"raw": "as the model gave them", "scaled": "as sampled from", "processed": "as sampled from"}


def served_state(trace: Trace) -> dict:
    """The ``_served`` trait of a view of `trace` (empty for a trace with nothing to say)."""
    state: dict = {}
    if _no_logprobs(trace):
        state["no_logprobs"] = NO_LOGPROBS
    audit = trace.meta.get("audit")
    kind = trace.meta.get("numbers")
    why = trace.meta.get("numbers_from")
    if isinstance(audit, dict) and isinstance(audit.get("label"), str):
        state["badge"] = {"label": audit["label"], "kind": str(audit.get("kind", "")),
                          "positions": [int(i) for i in audit.get("positions", []) if 0 <= int(i) < len(trace)],
                          "explanation": str(audit.get("explanation", ""))}
        if audit.get("kind") in NUMBERS_LABELS:  # the audit overrules the reader's tag
            kind, why = audit["kind"], f"lv.audit: {audit.get('explanation', audit['kind'])}"
    if kind in NUMBERS_LABELS:
        state["numbers"] = NUMBERS_LABELS[kind]
        state["numbers_from"] = str(why or kind)
    return state


def _no_logprobs(trace: Trace) -> bool:
    if len(trace) == 0:
        return False
    for values in (trace.logprobs, trace.processed_logprobs):
        if values is not None and np.isfinite(np.asarray(values, dtype=np.float64)).any():
            return False
    return True  # tokens, and not one logprob
