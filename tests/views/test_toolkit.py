"""One trace with tricky tokens through every output: the same glyphs and the same percent strings.

The widget (its payload read by the JS toolkit in node, as the browser reads it), the offline
page's embedded state, the static HTML of a comparison, SVG, LaTeX, the plotly figure's hover
labels and the explorer's plain-text labels all show a bidi override as ``[RLO]``, a space as
``·``, a newline as ``↵``, ``<script>`` as text, and a probability as one string ("<0.1%" for
3e-5, "100.0%" for 0.9996): checked against the expectation written out by hand below, not
against the toolkit's own output.
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import logprob_viz as lv
import paths
from logprob_viz.views import toolkit
from logprob_viz.views.explorer.branches import BranchHere
from logprob_viz.views.explorer.forks import visible as label
from logprob_viz.views.explorer.host_panel import choice_labels
from logprob_viz.views.page import STATE_TYPE, view_state
from logprob_viz.views.pictures import to_latex
from logprob_viz.views.plots import plot
from logprob_viz.views.static_html import comparison_html

# token -> what every view shows for it (written out by hand)
GLYPHS = {"Hi": "Hi", "\u202e": "[RLO]", " ": "\u00b7", "\n": "\u21b5", "<script>": "<script>", " x": "\u00b7x"}
TOKENS = list(GLYPHS)
# each token's probability and its percent as a person reads it: one decimal, "<0.1%" below 0.05 %
PROBS = [None, 3e-5, 0.9996, math.exp(-1), 0.5, 0.123]
PERCENTS = ["?", "<0.1%", "100.0%", "36.8%", "50.0%", "12.3%"]
# every token's alternatives: (text, p, its percent)
ALTS = [("<script>", 0.9996, "100.0%"), ("\u202e", 3e-5, "<0.1%"), (" ", 0.0012, "0.1%")]
IDS = {text: 100 + i for i, text in enumerate(TOKENS)}


@pytest.fixture(scope="module")
def trace():
    n = len(TOKENS)
    return lv.Trace(
        tokens=TOKENS, token_ids=[IDS[t] for t in TOKENS],
        logprobs=[math.nan if p is None else math.log(p) for p in PROBS], ranks=[0, 2, 1, 4, 5, 6],
        top_tokens=[[] if i == 0 else [a for a, _, _ in ALTS] for i in range(n)],
        top_logprobs=[[-math.inf] * 3 if i == 0 else [math.log(p) for _, p, _ in ALTS] for i in range(n)],
        top_ids=[[-1] * 3 if i == 0 else [IDS[a] for a, _, _ in ALTS] for i in range(n)],
        prompt_len=1, meta={"model": "toolkit-test"},
    )


def test_the_expectation_itself_is_what_a_person_reads():
    # 3e-5 is 0.003 %: written "<0.1%", never "0.0%"; 0.9996 rounds to 100.0 %
    assert 3e-5 * 100 < 0.05 and round(0.9996 * 100, 1) == 100.0 and round(math.exp(-1) * 100, 1) == 36.8


# -- the JS toolkit, run in node ---------------------------------------------------------------------

JS_SHOW = """
const [ws, tk, fmt, data] = await Promise.all(process.argv.slice(1, 5).map((m) => import(m)));
const { setPath } = await import(process.argv[5]);
const input = JSON.parse(process.argv[6]);
const marked = new Set(["space", "tab", "newline", "cr"]);
// how js/logprob/text.js draws a token, from the toolkit's own pieces
const draw = (t) => t === "" ? ws.EMPTY_MARK : tk.segments(t).map((s) =>
  s.kind === "text" ? s.text : marked.has(s.kind) ? ws.WHITESPACE_MARKS[s.text] : tk.controlGlyph(s.text)).join("");
const out = { percents: input.probs.map(fmt.formatPercent), glyphs: input.texts.map(draw) };
if (input.view) {
  const { state, buffer_paths, buffers } = input.view;
  buffer_paths.forEach((p, i) => setPath(state, p, new Uint8Array(Buffer.from(buffers[i], "base64"))));
  const d = data.decodePayload(state._payload);
  out.tokens = d.tokens.map(draw);
  out.token_percents = Array.from(d.logprobs, fmt.percentOfLogprob);
  const row = (r) => [draw(r.text), fmt.percentOfLogprob(r.logprob)];
  out.alternatives = d.tokens.map((_, i) => data.alternatives(d, i).rows.map(row));
}
console.log(JSON.stringify(out));
"""


def run_js(probs=(), texts=(), view=None) -> dict:
    js = paths.REPO / "js"
    modules = [js / "toolkit" / "whitespace.js", js / "toolkit" / "tokens.js", js / "toolkit" / "format.js",
               js / "logprob" / "trace_data.js", js / "toolkit" / "model.js"]
    payload = json.dumps({"probs": list(probs), "texts": list(texts), "view": view})
    out = subprocess.run(["node", "--input-type=module", "-e", JS_SHOW, *(m.as_uri() for m in modules), payload],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_python_and_js_write_the_same_percents_and_glyphs():
    # 0.0025 * 100 is exactly 0.25: JS toFixed rounds that half up ("0.3"), Python's format to even ("0.2")
    probs = [3e-5, 0.0004999, 0.0005, 0.9996, 0.0025, 0.5, 0.0, 1.0, 0.123456]
    hand = ["<0.1%", "<0.1%", "0.1%", "100.0%", "0.3%", "50.0%", "0%", "100.0%", "12.3%"]
    js = run_js(probs, TOKENS)
    assert js["percents"] == hand
    assert [toolkit.percent(p) for p in probs] == hand
    assert toolkit.percent(math.nan) == toolkit.percent(None) == toolkit.percent_of_logprob(math.nan) == "?"
    assert js["glyphs"] == list(GLYPHS.values()) == [toolkit.shown(t) for t in TOKENS]


def test_the_widget_payload_reads_the_same_in_the_browser_s_toolkit(trace):
    view = trace.view()
    try:
        js = run_js(view=view_state(view))
    finally:
        view.close()
    assert js["tokens"] == list(GLYPHS.values())
    assert js["token_percents"] == PERCENTS
    assert js["alternatives"][0] == []
    assert all(row == [[GLYPHS[a], pct] for a, _, pct in ALTS] for row in js["alternatives"][1:])


def test_the_offline_page_carries_the_same_trace(trace):
    page = lv.to_html(trace)
    state = re.search(rf'<script type="{re.escape(STATE_TYPE)}">([^<]*)</script>', page).group(1)
    js = run_js(view=json.loads(base64.b64decode(state)))
    assert js["tokens"] == list(GLYPHS.values()) and js["token_percents"] == PERCENTS


# -- the Python outputs ------------------------------------------------------------------------------


class _Spans(HTMLParser):
    """(text, title) of every coloured or dashed <span> of a static comparison row."""

    def __init__(self):
        super().__init__()
        self.spans, self._open = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "span":
            self._open = [dict(attrs).get("title", ""), ""]

    def handle_data(self, data):
        if self._open is not None:
            self._open[1] += data

    def handle_endtag(self, tag):
        if tag == "span" and self._open is not None:
            self.spans.append((self._open[1], self._open[0]))
            self._open = None


def test_the_static_html_of_a_comparison(trace):
    parser = _Spans()
    parser.feed(comparison_html(lv.compare([trace, trace], labels=["a", "b"])))
    row = parser.spans[: len(TOKENS)]
    assert [text.rstrip("\n") for text, _ in row] == list(GLYPHS.values())  # a newline still breaks the line
    assert row[0][1] == ""  # the first token: no logprob, no colour
    assert [title.split(",")[0] for _, title in row[1:]] == [f"p {pct}" for pct in PERCENTS[1:]]
    assert "\u202e" not in "".join(text for text, _ in parser.spans)


def test_the_svg_picture(trace):
    svg = ET.fromstring(trace.to_svg(pinned=1))
    ns = {"s": "http://www.w3.org/2000/svg"}
    tokens = svg.findall(".//s:g[@class='lv-token']", ns)
    assert [g.find("s:text", ns).text for g in tokens] == list(GLYPHS.values())
    titles = [g.find("s:title", ns).text for g in tokens]
    for title, token, pct in zip(titles, TOKENS, PERCENTS, strict=True):
        assert f": {GLYPHS[token]} p {pct} rank" in title, title
    chart = [t.text for t in svg.findall(".//s:g[@class='lv-chart']/s:text", ns)]
    assert "token 2 of 6: [RLO]" in chart and f"p {PERCENTS[1]} · rank 2" in chart
    for alt, _, pct in ALTS:
        assert GLYPHS[alt] in chart and pct in chart, (alt, chart)


def test_the_latex_picture(trace):
    latex = to_latex(trace, show_whitespace=True)
    assert "\u202e" not in latex and "{[RLO]}" in latex  # the glyph, as the box's text
    assert r"{$\cdot$}" in latex and r"{\textless{}script\textgreater{}}" in latex and r"{$\cdot$x}" in latex


def test_the_plotly_figure_s_hover_labels(trace):
    hover = plot(trace, "surprisal").data[0].hovertext
    for i, (token, pct) in enumerate(zip(TOKENS, PERCENTS, strict=True)):
        lines = [html.unescape(line) for line in hover[i].split("<br>")]  # plotly shows the entities as text
        assert lines[0].startswith(f"<b>#{i}</b> {GLYPHS[token]}")
        assert f"· p {pct} ·" in lines[1]
        if i:
            assert lines[-3:] == [f"   {GLYPHS[a]}  {p}" for a, _, p in ALTS]


def test_the_explorer_s_labels(trace):
    assert [label(t) for t in TOKENS] == list(GLYPHS.values())  # buttons and lists: "[RLO]", not "\\x202e"
    here = BranchHere()
    here.show(trace, 1)
    chosen = {IDS["\u202e"]}  # token 1 is the bidi override, listed second
    expected = [f"{GLYPHS[a]}  {pct}" + (" (chosen)" if IDS[a] in chosen else "") for a, _, pct in ALTS]
    assert [text for text, _ in here.alternative.options] == expected
    # the host panel's next-token choices (the app's manual decoding, where ipywidgets do not render)
    choices = choice_labels([(IDS[a], a, math.log(p)) for a, p, _ in ALTS])
    assert choices == [(IDS[a], f"{GLYPHS[a]}  {pct}") for a, _, pct in ALTS]

