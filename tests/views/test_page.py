"""Every view's HTML outside a widget manager (logprob_viz.views.page): offline pages, one file,
nothing fetched, the state intact; the notebook's HTML fallback; frontend files that must be there.

The page's behaviour in a real browser is tested in tests/browser/test_where_notebooks_live.py;
here: what the file holds, read back with the standard library alone.
"""

from __future__ import annotations

import base64
import html
import json
import re
import uuid
from html.parser import HTMLParser

import anywidget
import numpy as np
import pytest
import traitlets

import logprob_viz as lv
import wire
from logprob_viz.views import page as export
from logprob_viz.views.logprob.view import LogprobView
from logprob_viz.views.page import FALLBACK_MAX_STATE_BYTES, STATE_TYPE, fallback_html, to_html, with_html_fallback

BREAKOUT = "</script><script>window.__pwned=1</script>"
HOSTILE_IMG = '<img src=x onerror="window.__pwned=2">'
STATIC = export.STATIC


def mimebundle_with_fallback(view, bundle, max_state_bytes=FALLBACK_MAX_STATE_BYTES):
    """`bundle` with the view's HTML added as text/html, as a view's display adds it (`bundled.HtmlFallback`)."""
    return with_html_fallback(bundle, lambda: fallback_html(view, max_state_bytes=max_state_bytes))


def hostile_trace() -> lv.Trace:
    tokens = ["Say", " hi", BREAKOUT, HOSTILE_IMG, "</STYLE><!--", " 🤖"]
    top_tokens = [[], [" hi", " hello"], [BREAKOUT, "<b>x</b>"], [HOSTILE_IMG], ["</style>"], [" 🤖", " robot"]]
    k = 2
    top = np.full((len(tokens), k), -np.inf, dtype=np.float32)
    ids = np.full((len(tokens), k), -1)
    for i, row in enumerate(top_tokens):
        top[i, : len(row)] = [-0.25, -1.5][: len(row)]
        ids[i, : len(row)] = [10 * i + j for j in range(len(row))]
    return lv.Trace(
        tokens=tokens,
        token_ids=[1, 10, 20, 30, 40, 50],
        logprobs=[np.nan, -0.25, -0.25, -0.25, -0.25, -0.25],
        ranks=[0, 1, 1, 1, 1, 1],
        top_tokens=top_tokens,
        top_logprobs=top,
        top_ids=ids,
        prompt_len=1,
        meta={"model": "</script><b>model</b>", "source": "test"},
    )


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each <script>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self._in_script: dict | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)
            self.scripts.append((self._in_script, ""))

    def handle_data(self, data):
        if self._in_script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_script = None


def parse(page: str) -> Elements:
    p = Elements()
    p.feed(page)
    p.close()
    return p


def decode_state(page: str) -> dict:
    [(_, b64)] = [(a, t) for a, t in parse(page).scripts if a.get("type") == STATE_TYPE]
    assert re.fullmatch(r"[A-Za-z0-9+/=]+", b64.strip()), "the state is plain base64"
    return json.loads(base64.b64decode(b64).decode("utf-8"))


@pytest.fixture(scope="module")
def page_html(tmp_path_factory):
    path = tmp_path_factory.mktemp("export") / "view.html"
    # With a path, the page goes to the file and the path comes back (a cell does not print the page).
    assert to_html(hostile_trace(), str(path), color_mode="entropy", palette="magma", selected=2) == path
    return path.read_text(encoding="utf-8")


def test_the_page_is_self_contained(page_html):
    elements = parse(page_html)
    # Nothing to load: no src/href attribute at all, no URL the browser would fetch.
    loading = [(tag, attrs) for tag, attrs in elements.tags if {"src", "href", "srcset", "data", "action"} & set(attrs)]
    assert loading == []
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page_html, re.IGNORECASE)
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", page_html, re.IGNORECASE)
    state = [t for a, t in elements.scripts if a.get("type") == STATE_TYPE][0]
    markup = page_html.replace(state, "")  # base64 may spell anything by chance
    assert not re.search(r"unpkg|jsdelivr|cdnjs|https?://", markup, re.IGNORECASE)
    # The CSP forbids any fetch, should something try.
    assert "default-src 'none'" in page_html
    # The bundle and the CSS are inlined, whole.
    bundle = (STATIC / "standalone.js").read_text(encoding="utf-8")
    css = (STATIC / "widget.css").read_text(encoding="utf-8")
    assert [t for a, t in elements.scripts if not a.get("type")] == [bundle]
    assert f"<style>{css}</style>" in page_html
    # Beyond the bundle and the CSS, only this small trace's state and the page template (~4 KB):
    # nothing else is inlined.
    assert len(page_html.encode()) < len(bundle.encode()) + len(css.encode()) + 8_000


def payload_of(state: dict, paths: list, buffers: list[bytes]) -> dict:
    """The page's `_payload` with its buffers back at their paths (as standalone.js does)."""
    return wire.put_back(state, paths, buffers)["_payload"]


def column(payload: dict, name: str) -> np.ndarray:
    return wire.array(payload["arrays"][name])


def test_the_state_round_trips(page_html):
    got = decode_state(page_html)
    assert got["state"]["color_mode"] == "entropy" and got["state"]["selected"] == 2
    assert got["state"]["palette"] == "magma"
    assert not {"_esm", "_css", "layout"} & set(got["state"])
    buffers = [base64.b64decode(b) for b in got["buffers"]]
    payload = payload_of(got["state"], got["buffer_paths"], buffers)
    trace = hostile_trace()
    assert (payload["n"], payload["k"], payload["prompt_len"]) == (6, 2, 1)
    # The tokens' texts, read back from the table of distinct texts, byte for byte.
    blob, offsets = column(payload, "text").tobytes(), column(payload, "text_offsets")
    table = [blob[offsets[e] : offsets[e + 1]].decode("utf-8") for e in range(len(offsets) - 1)]
    assert [table[r - 1] for r in column(payload, "token_text")] == trace.tokens
    top = column(payload, "top_text")
    assert [[table[r - 1] for r in row if r] for row in top] == trace.top_tokens
    np.testing.assert_array_equal(column(payload, "logprobs"), trace.logprobs)
    np.testing.assert_array_equal(column(payload, "top_logprobs"), trace.top_logprobs)
    assert payload["summary"]["perplexity"] == pytest.approx(trace.perplexity())


def test_hostile_text_never_reaches_the_markup(page_html):
    # Token text only exists base64-encoded: no literal copy of it anywhere in the page.
    for s in (BREAKOUT, HOSTILE_IMG, "<b>x</b>", "window.__pwned", "</STYLE><!--"):
        assert s not in page_html
    # The page has exactly the scripts we put there: the state (not run) and the bundle.
    assert [a.get("type") for a, _ in parse(page_html).scripts] == [STATE_TYPE, None]
    assert page_html.lower().count("<script") == 2 and page_html.lower().count("</script") == 2
    # The model name (meta) is in the title, escaped.
    assert "<title>logprob_viz: &lt;/script&gt;&lt;b&gt;model&lt;/b&gt;</title>" in page_html


def test_a_view_is_exported_with_its_current_traits():
    view = LogprobView(hostile_trace())
    try:
        view.selected = 4
        view.color_mode = "rank"
        state = decode_state(to_html(view))["state"]
    finally:
        view.close()
    assert (state["selected"], state["color_mode"]) == (4, "rank")
    with pytest.raises(TypeError, match="Trace"):
        to_html({"tokens": []})
    with pytest.raises(Exception, match="color_mode"):
        to_html(hostile_trace(), color_mode="nope")


def test_mimebundle_with_fallback_adds_the_view_as_html():
    view = LogprobView(hostile_trace())
    try:
        bundle = anywidget.AnyWidget._repr_mimebundle_(view)  # the widget's own, without the fallback
        data, metadata = mimebundle_with_fallback(view, bundle)
        plain = mimebundle_with_fallback(view, bundle[0])
    finally:
        view.close()
    assert data["application/vnd.jupyter.widget-view+json"] == bundle[0]["application/vnd.jupyter.widget-view+json"]
    assert data["text/plain"] == bundle[0]["text/plain"]
    assert metadata == bundle[1]
    fragment = data["text/html"]
    assert fragment.startswith('<div class="lv-standalone"') and fragment.endswith("</div>")
    assert "<html" not in fragment.lower()
    assert decode_state(fragment)["state"]["_payload"]["n"] == 6
    assert set(plain) == set(data) and "text/html" not in bundle[0]  # the input is not changed
    assert mimebundle_with_fallback(view, None) is None


def test_fragment_size_is_bundle_plus_state():
    trace = hostile_trace()
    fixed = len((STATIC / "standalone.js").read_bytes()) + len((STATIC / "widget.css").read_bytes())
    size = len(fallback_html(trace).encode())
    assert fixed < size < fixed + 4000


def test_a_large_state_gets_a_text_note_instead_of_the_view():
    view = LogprobView(hostile_trace())
    try:
        data, _ = mimebundle_with_fallback(view, view._repr_mimebundle_(), max_state_bytes=100)
    finally:
        view.close()
    fragment = data["text/html"]
    assert "<script" not in fragment and "too large to embed" in fragment
    assert "&lt;/script&gt;&lt;b&gt;model&lt;/b&gt;" in fragment  # the repr, escaped


def test_without_the_standalone_bundle_the_widget_shows_alone(monkeypatch, tmp_path):
    view = LogprobView(hostile_trace())
    monkeypatch.setattr(export, "STATIC", tmp_path)  # nothing built there
    try:
        bundle = view._repr_mimebundle_()
        assert mimebundle_with_fallback(view, bundle) is bundle
        with pytest.raises(FileNotFoundError, match="npm run build"):
            to_html(view)
    finally:
        view.close()


def test_a_bundle_that_would_end_its_script_early_is_refused(monkeypatch, tmp_path):
    for name in ("widget.js", "widget.css"):
        (tmp_path / name).write_text((STATIC / name).read_text(encoding="utf-8"))
    (tmp_path / "standalone.js").write_text('console.log("</SCRIPT><script>alert(1)//")')
    monkeypatch.setattr(export, "STATIC", tmp_path)
    with pytest.raises(ValueError, match="cannot be inlined"):
        to_html(hostile_trace())


def test_a_trace_shown_in_a_notebook_carries_the_html_fallback():
    data, _ = hostile_trace()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert decode_state(data["text/html"])["state"]["_payload"]["n"] == 6


def test_a_view_exported_mid_stream_holds_every_token():
    trace = hostile_trace()
    view = LogprobView(trace[:2])
    try:
        view.send = lambda *args, **kwargs: None  # no kernel in a unit test: the appends go nowhere
        view.trace = trace[:4]
        view.trace = trace  # held for the next batch: not in the widget's state yet
        assert view._payload["n"] == 2
        got = decode_state(to_html(view))
    finally:
        view.close()
    payload = payload_of(got["state"], got["buffer_paths"], [base64.b64decode(b) for b in got["buffers"]])
    blob, offsets = column(payload, "text").tobytes(), column(payload, "text_offsets")
    table = [blob[offsets[e] : offsets[e + 1]].decode("utf-8") for e in range(len(offsets) - 1)]
    assert payload["n"] == 6 and [table[r - 1] for r in column(payload, "token_text")] == trace.tokens


@pytest.mark.parametrize("missing", ["widget.js", "widget.css"])
def test_a_view_without_its_script_or_stylesheet_names_the_file_and_the_build(monkeypatch, tmp_path, missing):
    for name in ("widget.js", "widget.css"):
        if name != missing:
            (tmp_path / name).write_text((STATIC / name).read_text(encoding="utf-8"))
    monkeypatch.setattr(export, "STATIC", tmp_path)
    with pytest.raises(FileNotFoundError, match=rf"{re.escape(str(tmp_path / missing))} is missing.*npm run build"):
        LogprobView(hostile_trace())


def test_every_record_has_a_view_and_an_offline_page(tmp_path):
    from logprob_viz.views.compare.view import CompareView

    trace = hostile_trace()
    view = trace.view(color_mode="rank")
    try:
        assert isinstance(view, LogprobView) and view.color_mode == "rank"
    finally:
        view.close()
    cmp = lv.compare([trace, trace[:4]], labels=["<i>all</i>", "head"])
    page = cmp.to_html()
    assert page.startswith("<!doctype html>") and "default-src 'none'" in page and "<script" not in page.lower()
    assert "&lt;i&gt;all&lt;/i&gt;" in page and "<i>all</i>" not in page  # labels and tokens are escaped
    for hostile in (BREAKOUT, HOSTILE_IMG):  # (its spaces shown as every view shows them, "·")
        assert hostile not in page and html.escape(hostile.replace(" ", "\u00b7")) in page
    cmp_view = cmp.view()
    try:
        assert isinstance(cmp_view, CompareView)
        path = lv.to_html(cmp_view, tmp_path / "compare.html")
        assert path == tmp_path / "compare.html" and "bits / byte" in path.read_text(encoding="utf-8")
    finally:
        cmp_view.close()
    # a record's page is its view's (`page_html`): traits go to that view, and are checked there
    assert 'background: rgb' in lv.to_html(cmp, color_mode="difference")
    with pytest.raises(traitlets.TraitError, match="'color_mode' trait of a CompareView"):
        lv.to_html(cmp, color_mode="rank")
    with pytest.raises(TypeError, match="set them on the CompareView instead"):
        lv.to_html(cmp_view, color_mode="difference")


def test_an_html_copy_of_a_trace_announces_no_widget_to_the_browser(monkeypatch):
    # A view made only for its HTML copy must open no comm: the browser's widget manager would try to
    # build a model that the kernel closes at once ("[anywidget] Failed to initialize model").
    import comm
    from ipywidgets.widgets.widget import _instances

    opened = []
    real = comm.create_comm
    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: opened.append(k) or real(*a, **k))
    before = set(_instances)
    fragment = export.fallback_html(hostile_trace())
    assert STATE_TYPE in fragment and opened == [] and set(_instances) == before
    view = LogprobView(hostile_trace())  # a view for display opens its comms (the observation above can see them)
    assert [o["data"]["state"]["_model_name"] for o in opened] == ["LayoutModel", "AnyModel"]
    view.close()


def test_view_to_html_keeps_the_views_colours_size_and_pin_and_returns_the_path(tmp_path):
    view = LogprobView(hostile_trace())
    try:
        view.color_mode, view.palette, view.color_range = "logprob", "cividis", [0, 2]
        view.size, view.selected = "projector", 3
        written_to = view.to_html(tmp_path / "view.html")
        state = decode_state((tmp_path / "view.html").read_text(encoding="utf-8"))["state"]
    finally:
        view.close()
    assert written_to == tmp_path / "view.html", "a cell's last line shows the path, not 175,000 characters"
    assert (state["color_mode"], state["palette"], state["color_range"]) == ("logprob", "cividis", [0, 2])
    assert (state["size"], state["selected"]) == ("projector", 3)


def test_lv_to_html_is_the_objects_own_to_html(tmp_path, monkeypatch):
    class App:  # an app with a page of its own (the explorer's shape)
        def to_html(self, path=None, **options):
            return ("own page", path, options)

    assert lv.to_html(App(), tmp_path / "a.html", title="T") == ("own page", tmp_path / "a.html", {"title": "T"})
    monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=0))  # the view's and the page's ids, the same twice
    trace = hostile_trace()
    by_lv = lv.to_html(trace, tmp_path / "lv.html", palette="magma", selected=2)
    by_trace = trace.to_html(tmp_path / "trace.html", palette="magma", selected=2)
    assert by_lv.read_text(encoding="utf-8") == by_trace.read_text(encoding="utf-8")
