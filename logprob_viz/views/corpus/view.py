"""The corpus view: a table of many traces over one LogprobView of the selected one (`lv.CorpusView`).

`CorpusView(corpus)` is a `PanelOverTrace` (a VBox of two widgets): the table (`CorpusTable`, an
anywidget; bundle ``js/corpus/`` in ``views/static/corpus.js``) and ONE `LogprobView`, whose
trace is set to the selected row's trace. The table is virtualised in the browser (only the
visible rows are in the DOM), sortable, filterable, with a surprisal sparkline per row; its
second tab is the surprise index, whose groups list their occurrences in context, and an
occurrence selects its trace and pins its token.

Everything the table shows is in its ``_payload`` trait (`payload.encode_corpus`), so a
saved notebook reopens the table without a kernel; the trace of a row is sent when the row is
selected (a trace is ~100x a table row), so selecting another row without a kernel says that
it needs one. The kernel confirms each selection through ``_shown_item`` (and each occurrence
list through ``_occurrences``): that is how the browser knows that no kernel answered.
"""

from __future__ import annotations

import logging

import traitlets as t

from ...records.corpus import Corpus
from ..bundled import Bundled
from ..logprob.view import LogprobView
from ..page import (
    FALLBACK_MAX_STATE_BYTES,
    detached,
    fallback_html,
    page,
    script_fragment,
    written,
)
from ..panel_over_trace import PanelOverTrace
from .payload import encode_corpus, encode_indexes, occurrence_rows
from .window import WINDOW_ROWS, WINDOWED_TRACES, RowOrder, windowed_payload

__all__ = ["CorpusView", "CorpusTable", "corpus_html"]

logger = logging.getLogger(__name__)

EAGER_INDEX_TRACES = 20_000  # up to this many, the index is in the view from the start (a saved view has it)
OCCURRENCES_SHOWN = 200  # occurrences listed per group (the most surprising); corpus.occurrences has all
SORTABLE = ("item", "label", "text", "tokens", "perplexity", "mean_logprob", "min_logprob", "max_surprisal",
            "mean_entropy", "flags", "predicted", "gold", "correct")  # the last three: a corpus of choices


class CorpusTable(Bundled, bundle="corpus"):
    """The table half of a `CorpusView` (use that): rows, sparklines, the surprise index.

    Attributes
    ----------
    selected_item : int
        The selected row's item (its position in the corpus), -1 for none.
    pinned : int
        The token pinned in the selected trace, -1 for none.
    sort : dict
        ``{"column": name, "descending": bool}``; column "" keeps the corpus's order.
    filters : dict
        ``{"text": str, "label": str, "ppl_min": float | None, "ppl_max": float | None, "predicted": str,
        "correct": "" | "right" | "wrong"}`` (the last two for a corpus of choices, `Choices.to_corpus`).
    tab : str
        ``"traces"`` or ``"index"``.
    index_by, index_group : str
        Which index the second tab shows ("token" or "class") and the group whose occurrences it lists.
    """

    _payload = t.Dict().tag(sync=True)
    # The surprise index ({"token", "class"}: payload.encode_indexes), {} until it is made: for
    # a corpus of more than EAGER_INDEX_TRACES traces when its tab is first opened (1M traces: seconds).
    _index = t.Dict({}).tag(sync=True)
    selected_item = t.Int(-1).tag(sync=True)
    pinned = t.Int(-1).tag(sync=True)
    sort = t.Dict({"column": "", "descending": False}).tag(sync=True)
    filters = t.Dict({"text": "", "label": "", "ppl_min": None, "ppl_max": None, "predicted": "",
                      "correct": ""}).tag(sync=True)
    tab = t.Enum(("traces", "index"), default_value="traces").tag(sync=True)
    index_by = t.Enum(("token", "class"), default_value="token").tag(sync=True)
    index_group = t.Unicode("").tag(sync=True)
    # What the kernel has shown: the LogprobView's item, the listed occurrences. The browser waits
    # for these after a click; when they do not follow (no kernel), it says that one is needed.
    _shown_item = t.Int(-1).tag(sync=True)
    _occurrences = t.Dict({"by": "", "group": "", "rows": [], "error": None}).tag(sync=True)
    # A large corpus (window.py): the positions the browser shows, and the kernel's rows for them.
    _view_rows = t.Dict({"start": 0, "count": WINDOW_ROWS}).tag(sync=True)
    _rows = t.Dict({}).tag(sync=True)

    @t.validate("sort")
    def _check_sort(self, proposal):
        value = dict(proposal["value"])
        extra = [name for name, _title in (self._payload.get("extra") or {}).get("columns", [])]
        if value.get("column", "") not in ("", *SORTABLE, *extra):
            raise t.TraitError(f"sort column must be one of {', '.join((*SORTABLE, *extra))} (or '' for none), "
                               f"got {value.get('column')!r}")
        return {"column": value.get("column", ""), "descending": bool(value.get("descending", False))}


def _checked_corpus(corpus) -> Corpus:
    if not isinstance(corpus, Corpus) and callable(getattr(corpus, "to_corpus", None)):
        corpus = corpus.to_corpus()  # divergences, rollouts: a row per text, their figures as columns
    if not isinstance(corpus, Corpus):
        raise TypeError(f"CorpusView shows an lv.Corpus, got {type(corpus).__name__}; make one with "
                        "runner.score([...]), lv.Corpus([traces]) or lv.Corpus.from_responses(...)")
    if not len(corpus):
        raise ValueError("this corpus has no traces, so there is nothing to show; score some texts first")
    return corpus


class CorpusView(PanelOverTrace):
    """Many traces as a sortable, filterable table over one LogprobView of the selected trace.

    Parameters
    ----------
    corpus : Corpus, or anything with a ``to_corpus()`` (`Divergences`, `Rollouts`: a row per text or
        rollout, with its divergence figures as sortable columns)
    selected_item : int, default 0
        The row shown in the LogprobView first.
    pinned : int, default -1
        The token pinned in it.
    windowed : bool, optional
        Sort and filter in the kernel and send the browser only the rows in sight (window.py);
        default: for more than WINDOWED_TRACES traces (100,000).

    Attributes
    ----------
    table : CorpusTable
        The table widget (its traits: ``sort``, ``filters``, ``tab``, ``index_by``, ``index_group``).
    logprob_view : LogprobView
        The one view of the selected trace; ``logprob_view.selected`` is its pinned token.
    selected_item, pinned : int
        The selected item and its pinned token (-1: none); settable, synced with the browser.
    """

    def __init__(self, corpus: Corpus, selected_item: int = 0, pinned: int = -1, windowed: bool | None = None,
                 **kwargs) -> None:
        self._corpus = _checked_corpus(corpus)
        self._check_item(selected_item)
        eager = len(self._corpus) <= EAGER_INDEX_TRACES
        index = encode_indexes(self._corpus) if eager else {}
        windowed = len(self._corpus) > WINDOWED_TRACES if windowed is None else bool(windowed)
        self._order = RowOrder(self._corpus) if windowed else None
        if windowed:
            payload = windowed_payload(self._order)
            first = self._order.window({}, {}, 0, WINDOW_ROWS)
            table = CorpusTable(_payload=payload, _index=index, _rows=first)
            self._order.warm()
        else:
            table = CorpusTable(_payload=encode_corpus(self._corpus), _index=index)
        self._syncing = False
        super().__init__(self._corpus, table, LogprobView(self._corpus[selected_item]), **kwargs)
        self.table.observe(self._show_selection, names=["selected_item", "pinned"])
        self.table.observe(self._list_occurrences, names=["index_by", "index_group"])
        self.table.observe(self._make_index, names="tab")
        if windowed:
            self.table.observe(self._send_rows, names=["sort", "filters", "_view_rows"])
        self.logprob_view.observe(self._pin_from_view, names="selected")
        self._shown = selected_item
        self.table.selected_item = selected_item
        self.table.pinned = pinned
        self._show_selection()

    @property
    def corpus(self) -> Corpus:
        return self._corpus

    @property
    def table(self) -> CorpusTable:
        """The table widget: this view's panel."""
        return self.panel

    @property
    def selected_item(self) -> int:
        return self.table.selected_item

    @selected_item.setter
    def selected_item(self, item: int) -> None:
        self._check_item(item)
        with self.table.hold_sync():
            self.table.pinned = -1
            self.table.selected_item = int(item)

    @property
    def pinned(self) -> int:
        return self.table.pinned

    @pinned.setter
    def pinned(self, position: int) -> None:
        self.table.pinned = int(position)

    def select(self, item: int, position: int = -1) -> None:
        """Select `item` and pin its token at `position` (-1: none), as clicking an occurrence does."""
        self._check_item(item)
        with self.table.hold_sync():
            self.table.pinned = int(position)
            self.table.selected_item = int(item)

    def _check_item(self, item) -> None:
        n = len(self._corpus)
        if not -1 <= int(item) < n:
            raise ValueError(f"selected_item must be an item between 0 and {n - 1} (or -1 for none), got {item}")

    # -- keeping the table and the LogprobView together ----------------------------------------

    def _show_selection(self, _change=None) -> None:
        item, pinned = self.table.selected_item, self.table.pinned
        if item < 0:
            return
        self._syncing = True
        try:
            self.show(self._corpus[item], pinned, new=item != self._shown)  # (corpus[item] is a new Trace each time)
            self._shown = item
        finally:
            self._syncing = False
        if self.table.pinned != self.logprob_view.selected:
            self.table.pinned = self.logprob_view.selected  # a position beyond this trace: none
        self.table._shown_item = item

    def _send_rows(self, _change=None) -> None:
        table = self.table
        want = table._view_rows or {}
        table._rows = self._order.window(table.sort, table.filters, want.get("start", 0),
                                         want.get("count", WINDOW_ROWS))

    def _pin_from_view(self, change) -> None:
        if not self._syncing:  # a click in the LogprobView: the table's pinned follows it
            self.table.pinned = change["new"]

    def _make_index(self, _change=None, *, now: bool = False) -> None:
        if (now or self.table.tab == "index") and not self.table._index:
            self.table._index = encode_indexes(self._corpus)

    def _list_occurrences(self, _change=None) -> None:
        group = self.table.index_group
        if not group:
            self.table._occurrences = {"by": self.table.index_by, "group": "", "rows": [], "error": None}
            return
        self.table._occurrences = occurrence_rows(self._corpus, self.table.index_by, group, OCCURRENCES_SHOWN)

    # -- HTML ----------------------------------------------------------------------------------

    def to_html(self, path=None, *, title: str | None = None):
        """A standalone, offline page of the view: the table and the selected trace's LogprobView."""
        if self._order is not None:  # (a large corpus: the page has no kernel to send rows, so all of them)
            return corpus_html(self._corpus, path, selected_item=max(self.selected_item, 0), pinned=self.pinned,
                               title=title)
        self._make_index(now=True)  # (the page has no kernel to ask for it)
        body = _body(self.table, self.logprob_view)
        return written(page(body, title or _title(self._corpus)), path)

    def fallback_html(self) -> str:
        """Where no widget manager renders the view (nbconvert, viewers): the same table and
        LogprobView as self-contained HTML, or a note when that would be too large."""
        return _body(self.table, self.logprob_view, FALLBACK_MAX_STATE_BYTES)


_NOTE_LARGE = ("(logprob_viz: this corpus is too large to embed in the notebook as HTML; "
               "export it with corpus.to_html('corpus.html'))")


def _table_fragment(table: CorpusTable, max_state_bytes: int | None = None) -> str:
    # the page's one state encoding and box (`page.script_fragment`), mounted by js/corpus/standalone.js
    return script_fragment(table, box="lvx-standalone", css="corpus.css", script="corpus_standalone.js",
                           text=f"<Corpus of {table._payload.get('n', 0)} traces>", large_note=_NOTE_LARGE,
                           what="corpus view", max_state_bytes=max_state_bytes)


def _body(table: CorpusTable, logprob_view: LogprobView, max_state_bytes: int | None = None) -> str:
    return _table_fragment(table, max_state_bytes) + fallback_html(logprob_view, max_state_bytes=max_state_bytes)


def _title(corpus: Corpus) -> str:
    models = sorted({str(tr.meta.get("model", "")) for tr in corpus.traces} - {""})
    return f"logprob_viz: corpus of {len(corpus)} traces" + (f" ({', '.join(models[:2])})" if models else "")


def corpus_html(corpus: Corpus, path=None, *, selected_item: int = 0, pinned: int = -1, title: str | None = None):
    """`Corpus.to_html`: the page of a corpus view, made without opening one in the notebook."""
    corpus = _checked_corpus(corpus)
    with (detached(CorpusTable, _payload=encode_corpus(corpus), _index=encode_indexes(corpus),
                   selected_item=selected_item, pinned=pinned, _shown_item=selected_item) as table,
          detached(LogprobView, corpus[selected_item], selected=pinned) as detail):
        body = _body(table, detail)
    return written(page(body, title or _title(corpus)), path)
