"""What the view must show for a trace, computed here independently of the view's code.

The view formats numbers as js/ documents it (percent with one decimal, logprob with three,
JavaScript's toFixed rounding); these functions redo that from the trace's own numbers, so a
browser test compares the page with an independent computation, not with the view's output.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Decimal


def js_to_fixed(x: float, digits: int) -> str:
    """JavaScript's Number.prototype.toFixed: exact decimal value, ties away from zero."""
    d = Decimal(abs(x)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return ("-" if x < 0 else "") + f"{d:.{digits}f}"


def expected_percent(logprob: float) -> str:
    pct = math.exp(logprob) * 100
    if pct == 0:
        return "0%"
    return "<0.1%" if pct < 0.05 else js_to_fixed(pct, 1) + "%"


def expected_logprob(logprob: float) -> str:
    if logprob == -math.inf:
        return "-inf"
    s = js_to_fixed(logprob, 3)
    return "0.000" if s == "-0.000" else s


def as_float(x) -> float:
    return float(x)  # to_dict writes non-finite values as "nan" / "-inf"


def expected_rows(trace: dict, i: int) -> list[tuple[str, str, str, bool]]:
    """(text, percent, logprob, chosen) of each alternative of token i, as the chart must list them.

    `trace` is the trace's `to_dict()` (what the notebook wrote to a JSON file): the view's input.
    """
    rows, chosen_seen = [], False
    token_id = trace["token_ids"][i]
    for j, text in enumerate(trace["top_tokens"][i]):
        lp = as_float(trace["top_logprobs"][i][j])
        alt_id = trace["top_ids"][i][j]
        same = token_id == alt_id if token_id >= 0 and alt_id >= 0 else text == trace["tokens"][i]
        chosen = not chosen_seen and same
        chosen_seen |= chosen
        rows.append((text, expected_percent(lp), expected_logprob(lp), chosen))
    if not chosen_seen:
        lp = as_float(trace["logprobs"][i])
        rows.append((trace["tokens"][i], expected_percent(lp), expected_logprob(lp), True))
    return rows


# The one visible-whitespace mapping every view promises (LogprobView's marks), restated here.
WHITESPACE_MARKS = {" ": "\u00b7", "\u00a0": "\u00b7", "\t": "\u2192", "\n": "\u21b5", "\r": "\u240d"}
EMPTY_MARK = "\u2205"


def expected_marks(text: str) -> str:
    """Token text as a view shows it where whitespace is marked in the text itself."""
    return "".join(WHITESPACE_MARKS.get(ch, ch) for ch in text) if text else EMPTY_MARK
