"""plotly figures of a trace and of a comparison, and their link to a view.

Each figure's points are checked against the trace's own arrays (one point per token, in
order), with expected values computed here. Clicking a point in a real browser is in
tests/browser/test_compare_browser.py.
"""

from __future__ import annotations

import html
import math
import re
import subprocess
import sys

import numpy as np
import plotly  # noqa: F401  (the dev extra installs it: a missing one fails, not skips)
import pytest

import logprob_viz as lv
from logprob_viz.records.comparison import compare
from logprob_viz.views.plots import KINDS, figure_html, plot
from logprob_viz.views.toolkit import shown

TEXT = "A robot may not injure a human being, or, through inaction, allow a human being to come to harm."


@pytest.fixture(scope="module")
def scored(runner):
    return runner.score(TEXT, top_logprobs=5)


def gltr_bucket(rank: int) -> str:
    if rank <= 0:
        return "unknown"
    for top in (1, 10, 100, 1000):
        if rank <= top:
            return f"top {top}"
    return "> 1000"


def same(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all((np.isnan(a) & np.isnan(b)) | np.isclose(a, b, rtol=1e-6, atol=1e-6)))


def test_each_kind_has_one_point_per_token_with_the_trace_values(scored):
    n = len(scored)
    lps = [float(x) for x in scored.logprobs]
    expected = {
        "surprisal": [-x for x in lps],
        "entropy": [float(x) for x in scored.entropy],
    }
    running, cumulative = 0.0, []
    for x in lps:
        running += 0.0 if math.isnan(x) else -x
        cumulative.append(running)
    expected["cumulative"] = cumulative
    for kind in KINDS:
        fig = plot(scored, kind)
        points = fig.data[0]
        if kind == "rank":
            assert points.type == "histogram"
            assert list(points.x) == [gltr_bucket(int(r)) for r in scored.ranks]
            continue
        assert len(points.x) == len(points.y) == n, kind
        assert list(points.x) == list(range(n))
        assert same(points.y, expected[kind]), kind
        assert list(points.customdata) == list(range(n))
    assert math.isnan(plot(scored, "surprisal").data[0].y[0])  # the first token has no context: unknown


def test_hover_shows_token_text_and_alternatives_as_text(scored):
    hover = plot(scored, "surprisal").data[0].hovertext
    i = 3
    # as every view shows a token (a space as "·": tests/views/test_toolkit.py checks the glyphs)
    assert html.escape(shown(scored.tokens[i]), quote=False) in hover[i]
    for alt in scored.top_tokens[i][:5]:
        assert html.escape(shown(alt), quote=False) in hover[i]
    hostile = lv.Trace(tokens=["<b>x</b>", "<img src=x onerror=alert(1)>"], logprobs=[-1.0, -2.0],
                       top_tokens=[["<script>"], ["&amp;"]], top_logprobs=[[-1.0], [-2.0]])
    texts = plot(hostile, "surprisal").data[0].hovertext
    assert "<b>x</b>" not in texts[0] and "&lt;b&gt;x&lt;/b&gt;" in texts[0]
    assert "<script>" not in texts[0] and "&lt;script&gt;" in texts[0]
    assert "<img" not in texts[1] and "&amp;amp;" in texts[1]


def test_bad_kind_and_bad_input():
    t = lv.Trace(tokens=["a"], logprobs=[-1.0])
    with pytest.raises(ValueError, match="kind must be one of surprisal"):
        plot(t, "histogram")
    with pytest.raises(TypeError, match="Trace"):
        plot([1, 2], "surprisal")


def test_trace_plot_method(scored):
    fig = scored.plot(kind="entropy")
    assert same(fig.data[0].y, scored.entropy)


def test_comparison_figures(runner):
    a = runner.score(TEXT, top_logprobs=2)
    b = lv.Trace(tokens=list(a.tokens), token_bytes=list(a.token_bytes), logprobs=a.logprobs * 2)
    cmp = compare([a, b], labels=["x", "y"])
    fig = cmp.plot()
    assert same(fig.data[0].y, [float(p) - float(q) for p, q in zip(a.logprobs, b.logprobs, strict=True)])
    bpb = cmp.plot("bits_per_byte").data[0]
    assert list(bpb.x) == ["x", "y"]
    assert same(bpb.y, [cmp.bits_per_byte()["x"], cmp.bits_per_byte()["y"]])
    assert math.isclose(bpb.y[1], 2 * bpb.y[0], rel_tol=1e-6)  # b's logprobs are twice a's


def test_figure_html_is_offline(scored):
    html = figure_html(plot(scored, "surprisal"))
    # no script loaded from anywhere (plotly.js's own text names CDNs for maps, which we do not draw)
    assert not re.findall(r"<script[^>]*\bsrc=", html)
    assert "Plotly.newPlot" in html

    bundled = (plotly.__path__[0] + "/package_data/plotly.min.js")
    head = open(bundled, encoding="utf-8").read()[:200]
    assert head[:120] in html  # plotly.js itself, from the Python package
    with pytest.raises(ValueError, match="CDN"):
        figure_html(plot(scored, "surprisal"), include_plotlyjs="cdn")


def test_linked_view_marks_the_pinned_token(scored):
    from logprob_viz.views.plot_link import link

    view = lv.LogprobView(scored)
    linked = link(view, "surprisal")
    fig = linked.figure
    assert type(fig).__name__ == "FigureWidget"
    assert linked.pinned_point == -1 and list(fig.data[1].x) == []
    view.selected = 5
    assert list(fig.data[1].x) == [5] and same(fig.data[1].y, [-float(scored.logprobs[5])])
    assert linked.pinned_point == 5
    view.selected = -1
    assert list(fig.data[1].x) == []
    with pytest.raises(ValueError, match="histogram"):
        link(view, "rank")
    linked.unlink()
    view.selected = 2
    assert list(fig.data[1].x) == []


def test_import_logprob_viz_does_not_import_plotly():
    code = (
        "import sys, logprob_viz as lv\n"
        "from logprob_viz.records.comparison import compare\n"
        "t = lv.Trace(tokens=['a', 'b'], logprobs=[-1.0, -2.0])\n"
        "compare([t, t], labels=['x', 'y']).to_pandas()\n"
        "assert 'plotly' not in sys.modules, 'plotly was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_linked_compare_view_pins_spans(runner):
    from logprob_viz.views.plot_link import link

    a = runner.score(TEXT, top_logprobs=2)
    b = lv.Trace(tokens=list(a.tokens), token_bytes=list(a.token_bytes), logprobs=a.logprobs * 2)
    view = compare([a, b], labels=["x", "y"]).view()
    linked = link(view, "difference")
    bars = linked.figure.data[0]
    assert len(bars.x) == len(view.comparison)  # one bar per span
    view.selected = 4
    assert list(linked.figure.data[1].x) == [4]
    assert same(linked.figure.data[1].y, [float(a.logprobs[4]) - float(b.logprobs[4])])
    # a click on bar 7 (what plotly's widget calls with the clicked points) pins span 7
    from plotly.callbacks import Points

    linked._clicked(bars, Points(point_inds=[7], trace_name=bars.name, trace_index=0), None)
    assert view.selected == 7
