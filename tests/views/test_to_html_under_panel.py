"""`lv.to_html` inside a Panel app (issue 30): Panel's ipywidgets hook reads the comm of every widget
made while its document is current, and the HTML copy's detached comm had no `target_name`, so the
page failed with AttributeError: '_DetachedComm' object has no attribute 'target_name'.

The hook, once imported, changes how every later widget of the process is made, so the app runs in
a process of its own (as `panel serve` does), not in the test process."""

from __future__ import annotations

import subprocess
import sys

APP = """
import numpy as np
import panel.io.ipywidget  # the hook `panel serve` installs for ipywidgets (the dev extra has Panel)
from bokeh.document import Document
from panel.io.state import set_curdoc
import logprob_viz as lv

words = ["Hello", " <b>world</b>", "!"]
trace = lv.Trace(tokens=words, logprobs=np.log(np.array([0.5, 0.25, 0.9], np.float32)),
                 ranks=np.array([1, 2, 1]), prompt_len=1, meta={"model": "hand-made"})
with set_curdoc(Document()):
    page = lv.to_html(trace)
print("doctype", page.startswith("<!doctype html>"), "markup", "<b>world</b>" in page)
"""


def test_to_html_works_while_a_panel_document_is_current():
    done = subprocess.run([sys.executable, "-c", APP], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split()[-4:] == ["doctype", "True", "markup", "False"], done.stdout  # text is data
