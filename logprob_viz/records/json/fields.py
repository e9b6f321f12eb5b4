"""Confidence per JSON field: `Trace.fields` gives a row per leaf value of the JSON a model wrote.

    f = trace.fields()          # an `lv.Fields`
    f.to_pandas()               # path, value, first, last, logprob, prob, prob_with_quote, the weakest, alternatives
    f.least_confident()         # the row with the lowest prob
    f                           # the fields view (views/fields/view.py)

One value, two probabilities, never mixed: ``prob`` is the product over the tokens ``at..last``,
from the token where the value's content begins (a string's first character, past its opening
quote) to the token that closes it (a string's closing quote, often ``",``), given the text
before ``at``: P(this value | a value of its kind has begun), the measure ``what_else`` lists
its alternatives with, so the two agree on the written value. ``prob_with_quote`` is over
``first..last``: the opening quote's own token(s) ``first..at-1`` too, i.e. also the chance that a
string begins there at all. They differ only for a string whose opening quote is a token of its
own (``' "'``, p often near 1 but not always); for numbers, literals and ``{}``/``[]`` ``at`` is
``first`` and they are equal.

Where the JSON is: the first complete object or array in the completion (the tokens after
``prompt_len``), or in the whole text when the trace has no completion (a scored text). A
``{``/``[`` that starts no valid JSON (prose in brackets) is skipped; when no JSON is complete, the
broken one that completed the most values is read up to its break, and ``Fields.error`` says where
it broke. A text with no ``{`` or ``[`` at all gives no rows and an ``error`` saying so (``missing``),
the same shape, so a loop over generations needs no try/except. The byte spans come from `spans`
(the text's own bytes, never re-serialised).

Tool calls: a trace whose ``meta["tool_calls"]`` holds a response's ``tool_calls`` (read by
`lv.read` from an OpenAI-compatible Chat response, streamed or not) gives the rows of each call's
``function.arguments`` instead, found in the tokens' text as the JSON value equal to the parsed
arguments (a server may write the arguments inside its template's markup, e.g.
``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, and re-serialise them in the message):
see the README's "Confidence per JSON field" for which servers' logprobs cover tool calls.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

import numpy as np

from ..tokens import display_token
from ..viewable import Viewable, show
from .alternatives import what_else
from .spans import Scan, Span, find_json, scan, scans

__all__ = ["Fields", "FieldRow", "JSONBreak", "fields_of"]


@dataclass(frozen=True)
class FieldRow:
    """One leaf value of the JSON (a string, number, true/false/null, or an empty {} / [])."""

    path: str  # name, address.city, items[2].qty; a key that is no identifier in brackets: a["b c"]
    value: str  # its JSON text, as written (a string with its quotes)
    first: int  # the first token covering the value's bytes (its opening quote for a string)
    last: int  # the last token covering them
    straddles: str  # "", "start", "end" or "both": which of first / last also holds bytes outside the value
    logprob: float  # the sum of the trace's logprobs over tokens at..last: the value itself (NaN when one is unknown)
    prob: float  # exp(logprob): P(this value | the text before `at`), the measure `what_else` lists
    logprob_with_quote: float  # the sum over first..last: the opening quote's own token(s) first..at-1 too
    prob_with_quote: float  # exp(logprob_with_quote); equals prob when at == first (numbers, literals, ...)
    at: int  # the token where the value's content begins (a string's first character, past its quote)
    weakest: int  # the least likely token of at..last (the tokens of `prob`)
    weakest_token: str
    weakest_prob: float
    alternatives: tuple  # ((token text, p), ...) at `at`, most likely first: what else it weighed there
    call: int | None = None  # the tool call whose arguments hold the value (None: a JSON in the text)
    function: str | None = None  # that tool call's function name
    start: int = 0  # the value's bytes: b"".join(trace.token_bytes)[start:end]
    end: int = 0

    @property
    def tokens(self) -> range:
        return range(self.first, self.last + 1)


@dataclass(frozen=True)
class JSONBreak:
    """Where a JSON stopped being valid: a byte offset in the trace's bytes, the token holding it."""

    message: str  # what was wrong there, in words
    offset: int  # byte offset in b"".join(trace.token_bytes)
    token: int  # the token holding that byte (the last token when the text ended first)
    call: int | None = None
    missing: bool = False  # True: no JSON at all (no '{' or '['); offset is then the text's end

    def __str__(self) -> str:
        return self.message


class Fields(Viewable):
    """A row per leaf value of a trace's JSON (or of its tool calls' arguments), in document order.

    ``rows`` (`FieldRow`), ``trace``, ``error`` (a `JSONBreak` when the JSON broke or there is none,
    else None),
    ``warnings`` (sentences), ``to_pandas()``, ``least_confident()``, ``view()``, ``to_html()``.
    """

    def __init__(self, trace, rows: list[FieldRow], error: JSONBreak | None = None, warnings=(),
                 source: str = "completion"):
        self.trace = trace
        self.rows = list(rows)
        self.error = error
        self.warnings = list(warnings)
        self.source = source  # "completion", "text" or "tool_calls": where the JSON was looked for

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __getitem__(self, key: int | str) -> FieldRow:
        if isinstance(key, str):
            for row in self.rows:
                if row.path == key:
                    return row
            raise KeyError(f"no field {key!r}; the paths are: {', '.join(r.path for r in self.rows[:20])}")
        return self.rows[key]

    def __repr__(self) -> str:
        broke = f", broke at token {self.error.token}" if self.error else ""
        if self.error and self.error.missing:
            broke = ", no JSON object or array"
        weakest = self.least_confident()
        low = f", least confident {weakest.path} (p={weakest.prob:.3g})" if weakest is not None else ""
        return f"<Fields {len(self.rows)} values from the {self.source}{low}{broke}>"

    def least_confident(self) -> FieldRow | None:
        """The row with the lowest ``prob`` (rows whose prob is unknown come last); None without rows."""
        ranked = self.ranked()
        return ranked[0] if ranked else None

    def ranked(self) -> list[FieldRow]:
        """The rows from the least confident to the most (unknown probabilities last)."""
        return sorted(self.rows, key=lambda r: (math.isnan(r.prob), r.prob))

    def to_pandas(self):
        """One row per value, in document order (``alternatives`` a list of (token, p) per row)."""
        import pandas as pd  # optional dependency: only the table needs it

        columns = [f for f in FieldRow.__dataclass_fields__]
        frame = pd.DataFrame([asdict(r) for r in self.rows], columns=columns)
        frame["alternatives"] = [list(r.alternatives) for r in self.rows]
        return frame

    def what_else(self, row, runner, *, k: int = 5, max_new_tokens: int | None = None) -> dict:
        """What the model would have written in `row` (index or path) after each of the top `k`
        alternatives at its first content token, continued greedily by `runner` (a local runner, or a
        server that continues from token ids): see `logprob_viz.records.json.alternatives`."""
        return what_else(self, row, runner, k=k, max_new_tokens=max_new_tokens)

    def view(self, **traits):
        """The fields view: the JSON by key, each value coloured by its probability, beside the trace."""
        return show(self, "view", **traits)

    def to_html(self, path=None, *, title: str | None = None, selected: int = -1):
        """The values (a static list, least confident marked) over the trace's LogprobView, as one offline
        page: written to `path` (and the path returned), or returned as a string."""
        return show(self, "to_html", path, title=title, selected=selected)


# -- building -------------------------------------------------------------------------------


def _offsets(trace) -> np.ndarray:
    """offsets[i]: the byte where token i starts in the trace's bytes; offsets[N]: their length."""
    return np.concatenate([[0], np.cumsum([len(b) for b in trace.token_bytes], dtype=np.int64)])


def _token_at(offsets: np.ndarray, byte: int) -> int:
    """The token whose bytes hold ``byte`` (tokens without bytes hold none)."""
    return int(np.searchsorted(offsets, byte, side="right")) - 1


def _exp(logprob: float) -> float:
    return math.nan if math.isnan(logprob) else math.exp(logprob)


def _content_start(data: bytes, span: Span) -> int:
    """Where a value's content begins: past a string's opening quote (its closing quote if empty)."""
    return span.start + 1 if data[span.start:span.start + 1] == b'"' else span.start


def _row(trace, offsets, data: bytes, base: int, span: Span, path: str, call=None, function=None) -> FieldRow:
    b0, b1 = base + span.start, base + span.end
    first, last = _token_at(offsets, b0), _token_at(offsets, b1 - 1)
    at = _token_at(offsets, base + _content_start(data, span))
    straddles = {(False, False): "", (True, False): "start", (False, True): "end", (True, True): "both"}[
        (bool(offsets[first] < b0), bool(offsets[last + 1] > b1))]
    # prob is over at..last, summed exactly as `what_else` sums its values (so the two agree bit for bit);
    # the opening quote's token(s) first..at-1 only say that a string begins: they go in prob_with_quote
    lps = trace.logprobs[at:last + 1].astype(np.float64)
    logprob = float(lps.sum())
    with_quote = float(trace.logprobs[first:last + 1].astype(np.float64).sum())
    known = ~np.isnan(lps)
    weakest = at + int(np.argmin(np.where(known, lps, np.inf))) if known.any() else at
    k_row = trace.top_logprobs[at]
    alternatives = tuple((str(tok), float(np.exp(lp))) for tok, lp in zip(trace.top_tokens[at], k_row, strict=False)
                         if np.isfinite(lp))
    return FieldRow(
        path=path, value=display_token(data[span.start:span.end]), first=first, last=last, straddles=straddles,
        logprob=logprob, prob=_exp(logprob), logprob_with_quote=with_quote, prob_with_quote=_exp(with_quote),
        at=at,
        weakest=weakest, weakest_token=trace.tokens[weakest], weakest_prob=float(np.exp(trace.logprobs[weakest])),
        alternatives=alternatives, call=call, function=function, start=b0, end=b1)


def _break(result: Scan, offsets, base: int, n_tokens: int, where: str, call=None) -> JSONBreak:
    offset = base + result.break_at
    token = min(_token_at(offsets, offset), n_tokens - 1)
    return JSONBreak(f"the JSON in the {where} breaks at token {token} (byte {offset}): {result.reason}; "
                     f"the {len(result.leaves)} values before it are kept", offset, token, call)


def _region(trace) -> tuple[int, str]:
    """(first token to search, its name): the completion, or the whole text when there is none."""
    if trace.prompt_len < len(trace):
        return trace.prompt_len, "completion"
    return 0, "text"


def fields_of(trace) -> Fields:
    """`Trace.fields`: see this module's docstring."""
    start, where = _region(trace)
    offsets = _offsets(trace)
    base = int(offsets[start])
    data = b"".join(trace.token_bytes[start:])
    if trace.meta.get("tool_calls"):
        return _tool_call_fields(trace, offsets, data, base, where)
    result = find_json(data)
    if result is None:
        return _no_json(trace, offsets, data, where)
    rows = [_row(trace, offsets, data, base, s, s.path) for s in result.leaves]
    error = None if result.complete else _break(result, offsets, base, len(trace), where)
    return Fields(trace, rows, error, [str(error)] if error else [], source=where)


def _no_json(trace, offsets, data: bytes, where: str) -> Fields:
    """No rows, and an error that says no JSON is there: the shape of a broken JSON's `Fields`."""
    shown = f"{display_token(data[:80])!r}{'...' if len(data) > 80 else ''}"
    error = JSONBreak(f"the {where} holds no JSON object or array (no '{{' or '['): {shown}; "
                      "ask the model for JSON, or slice the trace to the part that holds it",
                      int(offsets[-1]), max(len(trace) - 1, 0), missing=True)
    return Fields(trace, [], error, [str(error)], source=where)


def _relative(path: str, prefix: str) -> str:
    if not prefix:
        return path
    rest = path[len(prefix):]
    return rest[1:] if rest.startswith(".") else rest


def _parsed(text: bytes):
    try:
        return json.loads(text)
    except ValueError:  # (the scanner lets invalid UTF-8 through inside strings; json does not)
        return _NOTHING


_NOTHING = object()


def _find_arguments(data: bytes, arguments: str, after: int) -> tuple[Scan, Span | None]:
    """The container in ``data[after:]`` equal to the parsed ``arguments`` (a scan from the arguments'
    own text when they do not parse: the model's broken JSON, read up to its break)."""
    try:
        wanted = json.loads(arguments)
    except (TypeError, ValueError):
        wanted = None
    else:
        for result in scans(data, after):
            for c in result.containers:
                if _parsed(data[c.start:c.end]) == wanted:
                    return result, c
    at = data.find(arguments.encode("utf-8"), after) if isinstance(arguments, str) and arguments else -1
    if wanted is None and at >= 0:
        return scan(data, at), None
    return None, None


def _tool_call_fields(trace, offsets, data: bytes, base: int, where: str) -> Fields:
    rows, warnings, error, after = [], [], None, 0
    for i, call in enumerate(trace.meta["tool_calls"]):
        name, arguments = call.get("name"), call.get("arguments")
        result, container = _find_arguments(data, arguments, after)
        if result is None:
            warnings.append(f"tool call {i} ({name}): its arguments are not in the tokens' text, so they have no "
                            "logprobs here (the server's logprobs do not cover them: OpenAI gives none for tool "
                            "calls; a vLLM stream leaves out the tokens its tool parser held back)")
            continue
        if container is None:  # the arguments did not parse: scanned from their own text, up to the break
            spans = [(s, s.path) for s in result.leaves]
            if not result.complete:
                broke = _break(result, offsets, base, len(trace), f"tool call {i}'s arguments", i)
                error = error or broke
                warnings.append(str(broke))
        else:
            spans = [(s, _relative(s.path, container.path)) for s in result.leaves
                     if container.start <= s.start and s.end <= container.end]
            after = container.end
        rows += [_row(trace, offsets, data, base, s, p, call=i, function=name) for s, p in spans]
    return Fields(trace, rows, error, warnings, source="tool_calls")
