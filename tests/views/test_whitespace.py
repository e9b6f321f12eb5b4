"""One visible-whitespace mapping: the browser's tables (js/toolkit/whitespace.js, and the invisible
characters' names in js/toolkit/tokens.js) and Python's (logprob_viz.views.whitespace, used by the
explorer's plain-text labels and by the SVG / LaTeX pictures) are the same."""

from __future__ import annotations

import json
import subprocess

import numpy as np

import logprob_viz as lv
import paths
from logprob_viz.views.explorer.forks import branch_label
from logprob_viz.views.explorer.forks import visible as label
from logprob_viz.views.pictures import shown_text
from logprob_viz.views.whitespace import EMPTY_MARK, INVISIBLE, WHITESPACE_MARKS, shown, visible

READ_TABLE = """
const m = await import(process.argv[1]);
console.log(JSON.stringify({ marks: m.WHITESPACE_MARKS, empty: m.EMPTY_MARK,
  shown: ["", " a\\tb\\n\\r\\u00a0", "<b>x</b>"].map(m.visible) }));
"""


# How the LogprobView draws a text (js/logprob/text.js appendText), put together here from the JS
# toolkit's own pieces: segments, the whitespace marks, controlGlyph, the empty mark.
READ_SHOWN = """
const ws = await import(process.argv[1]);
const tk = await import(process.argv[2]);
const marked = new Set(["space", "tab", "newline", "cr"]);
const draw = (t) => t === "" ? ws.EMPTY_MARK : tk.segments(t).map((s) =>
  s.kind === "text" ? s.text : marked.has(s.kind) ? ws.WHITESPACE_MARKS[s.text] : tk.controlGlyph(s.text)).join("");
console.log(JSON.stringify({ invisible: [...tk.INVISIBLE], shown: JSON.parse(process.argv[3]).map(draw) }));
"""
TEXTS = ["", " a\tb\n\r\u00a0", "<b>x</b>", "\x07bell\x1b\x7f\x85", "\u202eevil\u200b", "\ufeff\u00ad-\u2066",
         "日本 é"]


def run_node(script: str, *args: str) -> dict:
    out = subprocess.run(["node", "--input-type=module", "-e", script, *args], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def js_module(name: str) -> str:
    return (paths.REPO / "js" / "toolkit" / name).as_uri()


def test_the_browser_and_python_mark_whitespace_with_the_same_table():
    js = run_node(READ_TABLE, js_module("whitespace.js"))
    assert js["marks"] == WHITESPACE_MARKS and js["empty"] == EMPTY_MARK
    assert js["shown"] == [visible(t) for t in ["", " a\tb\n\r\u00a0", "<b>x</b>"]]


def test_the_marks_are_the_logprob_view_s_and_the_explorer_labels_use_them():
    # LogprobView's marks from before the toolkit: space ·, tab →, newline ↵ (and ␍ for a return).
    assert visible(" a\tb\n\r") == "\u00b7a\u2192b\u21b5\u240d" and visible("") == "\u2205"
    assert label(" Hi\tthere\n") == "·Hi→there↵"
    assert label("\x07") == "\\x07"  # other unprintable characters spelled out
    assert label("x" * 50).endswith("…") and len(label("x" * 50)) == 40


def test_the_invisible_characters_and_whole_texts_are_shown_as_the_browser_shows_them():
    js = run_node(READ_SHOWN, js_module("whitespace.js"), js_module("tokens.js"), json.dumps(TEXTS))
    assert {code: name for code, name in js["invisible"]} == INVISIBLE
    assert js["shown"] == [shown(t) for t in TEXTS]
    # the SVG picture prints the same characters (only a newline also breaks the line there)
    assert [shown_text(t)[0] for t in TEXTS] == js["shown"]


def test_the_branch_list_labels_mark_a_newline_and_a_tab_with_the_views_marks():
    tokens = ["Once", " upon", "\n", "a\ttime", "\u202e", " end"]
    trace = lv.Trace(tokens=tokens, logprobs=np.full(len(tokens), -0.5, dtype=np.float32), prompt_len=1)
    line = branch_label(1, trace, fork=1, prompt_len=1)
    # the row says where it forks (numbered from 1, as the chart numbers tokens), then its first words
    assert line.startswith("#1 \u21b3 token 2 ") and line.endswith(" · upon \u21b5 a \u2192 time[RLO] end"), line
    assert "\u23ce" not in line, "not the explorer's old newline mark"
    root = branch_label(0, trace, fork=None, prompt_len=1)
    assert root.startswith("#0 root") and root.endswith(" · upon \u21b5 a \u2192 time[RLO] end"), root
