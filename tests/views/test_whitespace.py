"""One visible-whitespace mapping: the browser's table (js/toolkit/whitespace.js) and Python's
(logprob_viz.views.whitespace, used by the explorer's plain-text labels) are the same."""

from __future__ import annotations

import json
import subprocess

import paths
from logprob_viz.views.explorer.branching import visible as label
from logprob_viz.views.whitespace import EMPTY_MARK, WHITESPACE_MARKS, visible

READ_TABLE = """
const m = await import(process.argv[1]);
console.log(JSON.stringify({ marks: m.WHITESPACE_MARKS, empty: m.EMPTY_MARK,
  shown: ["", " a\\tb\\n\\r\\u00a0", "<b>x</b>"].map(m.visible) }));
"""


def test_the_browser_and_python_mark_whitespace_with_the_same_table():
    module = (paths.REPO / "js" / "toolkit" / "whitespace.js").as_uri()
    out = subprocess.run(
        ["node", "--input-type=module", "-e", READ_TABLE, module], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    js = json.loads(out.stdout)
    assert js["marks"] == WHITESPACE_MARKS and js["empty"] == EMPTY_MARK
    assert js["shown"] == [visible(t) for t in ["", " a\tb\n\r\u00a0", "<b>x</b>"]]


def test_the_marks_are_the_logprob_view_s_and_the_explorer_labels_use_them():
    # LogprobView's marks from before the toolkit: space ·, tab →, newline ↵ (and ␍ for a return).
    assert visible(" a\tb\n\r") == "\u00b7a\u2192b\u21b5\u240d" and visible("") == "\u2205"
    assert label(" Hi\tthere\n") == "·Hi→there↵"
    assert label("\x07") == "\\x07"  # other unprintable characters spelled out
    assert label("x" * 50).endswith("…") and len(label("x" * 50)) == 40
