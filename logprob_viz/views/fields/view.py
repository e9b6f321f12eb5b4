"""The fields view: a JSON's values by key, coloured by probability, over the trace (`lv.Fields.view()`).

`FieldsView(fields, runner=None)` is a `PanelOverTrace` (a VBox of two widgets): the panel
(`FieldsPanel`, an anywidget; bundle ``js/fields/`` in ``views/static/fields.js``) and ONE
`LogprobView` of the fields' trace. The panel lists each leaf value by its path, its chip
coloured by its probability in the LogprobView's palette (the probability mode's scale), the
least confident value first and marked. Each p is the row's ``prob`` (the value from its first
character, ``row.at``, to its end: the p "What else?" lists), named in the head; the detail shows
``prob_with_quote`` beside it where a string's opening quote is a token of its own. Clicking a
value selects it (``selected``) and pins the
token where its content begins (``row.at``) in the LogprobView; clicking a token of a value in
the LogprobView selects that value. The selected value's detail (its tokens, weakest token,
alternatives at ``row.at``) sits beside the list in a box of fixed height, so nothing moves.
With a runner that continues from token ids, "What else?" asks the kernel to branch the value
from each alternative (`records/json/alternatives.what_else`) and lists the values with their probabilities.
"""

from __future__ import annotations

import html
import math

import traitlets as t

from ...records.json import Fields
from ..bundled import Bundled
from ..defaults import check_size, settings
from ..logprob.view import LogprobView
from ..page import detached, page, written
from ..panel_over_trace import PanelOverTrace
from ..toolkit import percent

__all__ = ["FieldsView", "FieldsPanel", "fields_payload", "fields_html"]

IDLE = {"row": -1, "state": "", "items": [], "over": "", "error": None}


def _finite(x: float):
    return None if x is None or not math.isfinite(x) else float(x)


def fields_payload(fields: Fields, can_branch: bool) -> dict:
    """What the panel shows, as JSON: a row per value (document order), the least confident, the break."""
    rows = []
    for r in fields.rows:
        rows.append({
            "path": r.path, "value": r.value, "prob": _finite(r.prob), "logprob": _finite(r.logprob),
            "prob_with_quote": _finite(r.prob_with_quote), "logprob_with_quote": _finite(r.logprob_with_quote),
            "first": r.first, "last": r.last, "at": r.at, "straddles": r.straddles, "weakest": r.weakest,
            "weakest_token": r.weakest_token, "weakest_prob": _finite(r.weakest_prob),
            "at_token": fields.trace.tokens[r.at],
            "alternatives": [[tok, _finite(p)] for tok, p in r.alternatives], "call": r.call, "function": r.function,
        })
    least = fields.least_confident()
    return {
        "rows": rows,
        "order": [fields.rows.index(r) for r in fields.ranked()],
        "least": fields.rows.index(least) if least is not None else -1,
        "source": fields.source,
        "error": str(fields.error) if fields.error else None,
        "warnings": [w for w in fields.warnings if not fields.error or w != str(fields.error)],
        "can_branch": bool(can_branch),
    }


class FieldsPanel(Bundled, bundle="fields"):
    """The panel half of a `FieldsView` (use that).

    Attributes
    ----------
    selected : int
        The selected value's row (-1: none).
    order : str
        ``"document"`` (as the JSON is written) or ``"confidence"`` (least confident first).
    palette, size : str
        Follow the LogprobView's.
    """

    _payload = t.Dict().tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    order = t.Enum(("document", "confidence"), default_value="document").tag(sync=True)
    palette = t.Unicode("viridis").tag(sync=True)
    size = t.Unicode("normal").tag(sync=True)
    _what_else = t.Dict(dict(IDLE)).tag(sync=True)  # the kernel's answer to "What else?" for a row

    @t.validate("size")
    def _check_size(self, proposal):
        return check_size(proposal["value"])


class FieldsView(PanelOverTrace):
    """A JSON's values, coloured by probability, over a LogprobView of the trace; click a value to pin it.

    Parameters
    ----------
    fields : lv.Fields
        ``trace.fields()``.
    runner : optional
        A runner that continues from token ids (``lv.load()``, a vLLM or llama.cpp server): it makes
        "What else?" available (branches from each alternative at the value's start).
    selected : int, default -1
        The value selected (and its token pinned) at first.
    order : str
        ``"document"`` or ``"confidence"``.
    k : int, default 5
        Alternatives that "What else?" continues.

    Attributes
    ----------
    panel : FieldsPanel
    logprob_view : LogprobView
    """

    def __init__(self, fields: Fields, runner=None, selected: int = -1, order: str = "document", k: int = 5,
                 **kwargs) -> None:
        if not isinstance(fields, Fields):
            raise TypeError(f"FieldsView shows an lv.Fields (trace.fields()), got {type(fields).__name__}")
        self.fields, self.runner, self.k = fields, runner, int(k)
        logprob_view = LogprobView(fields.trace)
        can_branch = bool(getattr(getattr(runner, "capabilities", None), "can_continue_from_ids", False))
        panel = FieldsPanel(_payload=fields_payload(fields, can_branch), order=order,
                            palette=logprob_view.palette, size=kwargs.pop("size", settings.size))
        super().__init__(fields, panel, logprob_view, **kwargs)
        self.logprob_view.size = self.panel.size
        self.panel.observe(self._pin, names="selected")
        self.logprob_view.observe(self._select_from_token, names="selected")
        self.logprob_view.observe(self._follow_view, names=["palette", "size"])
        self.panel.on_msg(self._on_msg)
        self.select(selected)

    def select(self, row: int) -> None:
        """Select value `row` (-1: none) and pin the token where its content begins."""
        n = len(self.fields.rows)
        if not -1 <= int(row) < n:
            raise ValueError(f"row must be a value between 0 and {n - 1} (or -1 for none), got {row}")
        self.panel.selected = int(row)
        self._pin()

    def _pin(self, _change=None) -> None:
        row = self.panel.selected
        if row >= 0 and self.panel._what_else.get("row") != row:
            self.panel._what_else = dict(IDLE)
        self.show(self.fields.trace, self.fields.rows[row].at if row >= 0 else -1, new=False)  # (one trace)

    def _select_from_token(self, change) -> None:
        position = change["new"]
        current = self.panel.selected
        if current >= 0 and self.fields.rows[current].first <= position <= self.fields.rows[current].last:
            return  # a token of the selected value: it stays selected
        hit = next((i for i, r in enumerate(self.fields.rows) if r.first <= position <= r.last), -1)
        if hit >= 0:
            self.panel.selected = hit

    def _follow_view(self, change) -> None:
        setattr(self.panel, change["name"], change["new"])

    def _on_msg(self, _widget, content, _buffers) -> None:
        if not isinstance(content, dict) or content.get("type") != "what_else":
            return
        row = int(content.get("row", -1))
        if not (self.runner is not None and 0 <= row < len(self.fields.rows)):
            self.panel._what_else = {**IDLE, "row": row, "state": "error",
                                     "error": "no runner: FieldsView(fields, runner=lv.load()) can branch a value"}
            return
        self.panel._what_else = {**IDLE, "row": row, "state": "running"}
        try:
            result = self.fields.what_else(row, self.runner, k=self.k)
        except Exception as error:  # noqa: BLE001  (shown in the panel, where the click was)
            self.panel._what_else = {**IDLE, "row": row, "state": "error", "error": f"{type(error).__name__}: {error}"}
            return
        items = [{key: item[key] for key in ("token", "value", "prob", "logprob", "tokens", "complete", "chosen",
                                              "note")} for item in result["items"]]
        self.panel._what_else = {"row": row, "state": "done", "items": items, "over": result["over"], "error": None}

    # -- HTML ----------------------------------------------------------------------------------

    def to_html(self, path=None, *, title: str | None = None):
        """A standalone, offline page: the values as a static list over the trace's LogprobView."""
        return fields_html(self.fields, path, title=title, selected=self.panel.selected)

    def fallback_html(self) -> str:
        """Where no widget manager renders the view (nbconvert, viewers): the values as a static list
        over the trace's LogprobView."""
        return _static_body(self.fields, self.panel.selected)


def _static_list(fields: Fields) -> str:
    """The values as static HTML (every text escaped), least confident marked: for pages without a kernel."""
    least = fields.least_confident()
    items = []
    for r in fields.rows:
        p = html.escape(percent(r.prob))  # "<0.1%" is text, not a tag
        quote = f", with its opening quote {html.escape(percent(r.prob_with_quote))}" if r.at > r.first else ""
        mark = " (least confident)" if r is least else ""
        items.append(f"<li><code>{html.escape(r.path)}</code>: <code>{html.escape(r.value)}</code> "
                     f"p = {p}{quote}{mark}</li>")
    note = f"<p>{html.escape(str(fields.error))}</p>" if fields.error else ""
    legend = ("<p>p: the value from its first character to its end (a string's opening quote apart), "
              "the p that <code>what_else</code> lists</p>")
    return f'<div class="lvf-static">{legend}<ul>{"".join(items)}</ul>{note}</div>'


def _static_body(fields: Fields, selected: int = -1) -> str:
    pinned = fields.rows[selected].at if 0 <= selected < len(fields.rows) else -1
    with detached(LogprobView, fields.trace, selected=pinned) as view:
        return _static_list(fields) + view.page_html()


def fields_html(fields: Fields, path=None, *, title: str | None = None, selected: int = -1):
    """`Fields.to_html`: the values as a static list over the trace's LogprobView, as one offline page."""
    model = fields.trace.meta.get("model") or "trace"
    return written(page(_static_body(fields, selected), title or f"logprob_viz: fields of {model}"), path)
