"""The compare view and a plotly figure linked to a view, in a real JupyterLab and chromium.

Two hand-made traces of the same text cut at different places (and a hostile token) are
compared; the aligned spans, their differences and the panel's token lists are computed here,
independently of logprob_viz. The linked figure is plotly's own FigureWidget: a click on its
point must pin the token in the view (Python's `view.selected` changes), and pinning a token in
the view must move the figure's "pinned" marker onto that token's point.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from browser.expected import expected_marks
from browser.lab import (
    HAND_MADE_TIMEOUT,
    MODEL_TIMEOUT,
    cell,
    open_notebook,
    python_prints,
    run_cell,
    save_screenshot,
    wait_for_output,
    write_notebook,
)

pytestmark = pytest.mark.browser

NAN = math.nan
HOSTILE_A = ["<img src=x onerror=window.__pwned=1>"]
HOSTILE_B = ["<img src=x ", "onerror=window.__pwned=1>"]
TOKENS_A = ["The", " cat", " sat", " on", " the", " mat", ".", *HOSTILE_A]
TOKENS_B = ["Th", "e c", "at", " sat on", " the", " m", "at.", *HOSTILE_B]
LP_A = [NAN, -1.0, -2.0, -0.5, -0.3, -4.0, -0.2, -3.0]
LP_B = [NAN, -0.5, -0.7, -1.5, -0.1, -2.0, -1.0, -1.0, -2.5]

COMPARE_CELL = f"""\
import numpy as np
import logprob_viz as lv
from logprob_viz.records.comparison import compare
nan = float("nan")
a = lv.Trace(tokens={TOKENS_A!r}, logprobs={LP_A!r}, top_tokens=[[], [], [" sat", " lay", "<b>bold</b>"]] + [[]] * 5,
             top_logprobs=[[-np.inf] * 3] * 2 + [[-0.5, -1.0, -2.0]] + [[-np.inf] * 3] * 5, meta={{"model": "a"}})
b = lv.Trace(tokens={TOKENS_B!r}, logprobs={LP_B!r}, meta={{"model": "b"}})
v = compare([a, b], labels=["model a", "model b"]).view()
v"""

LINK_CELL = """\
import numpy as np
import logprob_viz as lv
from logprob_viz.views.plot_link import link
lps = -np.linspace(0.1, 5, 12)
lps[0] = np.nan
t = lv.Trace(tokens=[f" w{i}" for i in range(12)], logprobs=lps, ranks=[0] + [1] * 11)
view = lv.LogprobView(t)
linked = link(view, "surprisal")
linked"""


def expected_spans() -> list[tuple[int, int]]:
    def bounds(tokens):
        out, at = {0}, 0
        for tok in tokens:
            at += len(tok.encode())
            out.add(at)
        return out

    cuts = sorted(bounds(TOKENS_A) & bounds(TOKENS_B))
    return list(zip(cuts[:-1], cuts[1:], strict=True))


def tokens_in(tokens, a, b) -> list[int]:
    out, at = [], 0
    for i, tok in enumerate(tokens):
        if a <= at < b:
            out.append(i)
        at += len(tok.encode())
    return out


def span_logprob(tokens, lps, a, b) -> float:
    return sum(lps[i] for i in tokens_in(tokens, a, b))  # NaN in, NaN out


visible = expected_marks  # what the panel promises to show for token text: whitespace marked


def rgb_of(css: str) -> tuple[int, int, int] | None:
    m = re.match(r"rgb\((\d+), (\d+), (\d+)\)", css)
    return tuple(int(x) for x in m.groups()) if m else None


def test_hover_highlights_aligned_spans_and_difference_mode(page, lab_server):
    write_notebook(lab_server, "compare.ipynb", [COMPARE_CELL, "print('selected', v.selected)"])
    open_notebook(page, lab_server, "compare.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvc-root", HAND_MADE_TIMEOUT)
    root = cell(page, 0).locator(".lvc-root")
    spans = expected_spans()
    assert spans[:4] == [(0, 7), (7, 14), (14, 18), (18, 23)]
    for r in (0, 1):
        assert root.locator(f".lvc-row[data-row='{r}'] .lvc-span").count() == len(spans)
    # token text is text: the hostile token is shown, not run
    assert page.evaluate("window.__pwned") is None
    assert HOSTILE_A[0] in root.locator(".lvc-row[data-row='0'] .lvc-text").text_content()

    # hover span 1 in row 0: span 1 of every row lights up, and the panel lists each row's tokens there
    root.locator(".lvc-row[data-row='0'] .lvc-span[data-span='1']").hover()
    page.wait_for_function("el => el.dataset.span === '1'", arg=root.locator(".lvc-panel").element_handle())
    for r in (0, 1):
        lit = root.locator(f".lvc-row[data-row='{r}'] .lvc-span.lvc-hl")
        assert lit.count() == 1 and lit.get_attribute("data-span") == "1"
    a, b = spans[1]
    for r, tokens in ((0, TOKENS_A), (1, TOKENS_B)):
        shown = root.locator(f".lvc-panel .lvc-col[data-row='{r}'] .lvc-token-text").all_text_contents()
        assert shown == [visible(tokens[i]) for i in tokens_in(tokens, a, b)]
    # row 0's " sat" has alternatives, the hostile one as text
    alts = root.locator(".lvc-panel .lvc-col[data-row='0'] .lvc-alt-text").all_text_contents()
    assert alts == [visible(x) for x in [" sat", " lay", "<b>bold</b>"]]
    # hovering row 1 moves the highlight in row 0 too
    root.locator(".lvc-row[data-row='1'] .lvc-span[data-span='3']").hover()
    page.wait_for_function("el => el.dataset.span === '3'", arg=root.locator(".lvc-panel").element_handle())
    assert root.locator(".lvc-row[data-row='0'] .lvc-span.lvc-hl").get_attribute("data-span") == "3"

    # difference mode: every span coloured by logprob(a) - logprob(b), the same in both rows
    root.locator("select.lvc-mode").select_option("difference")
    page.wait_for_function("el => el.classList.contains('lvc-mode-diff')", arg=root.element_handle())
    for s, (a, b) in enumerate(spans):
        d = span_logprob(TOKENS_A, LP_A, a, b) - span_logprob(TOKENS_B, LP_B, a, b)
        colours = []
        for r in (0, 1):
            el = root.locator(f".lvc-row[data-row='{r}'] .lvc-span[data-span='{s}']")
            assert el.get_attribute("data-diff") == ("unknown" if math.isnan(d) else f"{d:.4f}")
            colours.append(rgb_of(el.evaluate("e => getComputedStyle(e).backgroundColor")))
        assert colours[0] == colours[1]
        if math.isnan(d):
            assert colours[0] is None  # unknown stays uncoloured (transparent)
        elif d > 0.5:
            assert colours[0][0] > colours[0][2], (s, d, colours)  # orange side: a likelier
        elif d < -0.5:
            assert colours[0][2] > colours[0][0], (s, d, colours)  # purple side: b likelier
    save_screenshot(page, "compare-difference.png", ".lvc-root:visible")

    # click pins the span for Python too
    root.locator(".lvc-row[data-row='1'] .lvc-span[data-span='2']").click()
    python_prints(page, lab_server, 1, "selected 2")
    assert root.locator(".lvc-span.lvc-pinned").count() == 2
    assert page.page_errors == []


POINTS_JS = """(plot) => {
  const traces = plot.querySelectorAll('.scatterlayer .trace');
  const centre = (el) => { const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; };
  return [...traces].map(t => [...t.querySelectorAll('path.point')].map(centre));
}"""


def test_plotly_point_pins_the_token_and_the_reverse(page, lab_server):
    write_notebook(lab_server, "linked.ipynb", [LINK_CELL, "print('selected', view.selected)"])
    open_notebook(page, lab_server, "linked.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lv-root", HAND_MADE_TIMEOUT)
    # plotly's FigureWidget loads its own bundle (plotly.js inside, ~4.5 MB) after the view shows
    plot = cell(page, 0).locator(".js-plotly-plot").first
    plot.locator(".scatterlayer path.point").first.wait_for(timeout=HAND_MADE_TIMEOUT * 1000)
    points = plot.evaluate(POINTS_JS)
    assert len(points[0]) == 11  # 12 tokens, the first unknown (NaN) has no point
    # plotly draws no point for NaN; point k on screen is token k + 1, in x order
    x, y = points[0][4]  # token 5
    page.mouse.move(x, y)
    page.mouse.click(x, y)
    python_prints(page, lab_server, 1, "selected 5")
    view = cell(page, 0).locator(".lv-root")
    view.locator(".lv-token[data-index='5'].lv-pinned").wait_for(timeout=30_000)
    # the figure marks the pinned point
    page.wait_for_function(
        "plot => plot.querySelectorAll('.scatterlayer .trace')[1].querySelectorAll('path.point').length === 1",
        arg=plot.element_handle(),
    )
    # read both where they are now: running the print cell may scroll the notebook to it (the
    # view's panel keeps its room, so that cell can lie below the fold), which moves the figure whole
    points, (marker,) = plot.evaluate(POINTS_JS)
    assert abs(marker[0] - points[4][0]) < 2 and abs(marker[1] - points[4][1]) < 2

    # the reverse: pin token 9 in the view, the marker moves onto point 9
    view.locator(".lv-token[data-index='9']").click()
    python_prints(page, lab_server, 1, "selected 9")
    target = plot.evaluate(POINTS_JS)[0][8]
    page.wait_for_function(
        """([plot, tx]) => {
             const p = plot.querySelectorAll('.scatterlayer .trace')[1].querySelector('path.point');
             if (!p) return false;
             const r = p.getBoundingClientRect();
             return Math.abs(r.x + r.width / 2 - tx) < 2;
           }""",
        arg=[plot.element_handle(), target[0]],
    )
    save_screenshot(page, "compare-linked-plot.png", ".jp-OutputArea-output:visible")
    assert page.page_errors == []


NBCONVERT_CELLS = [
    """\
import plotly.io as pio
pio.renderers.default = "plotly_mimetype+notebook"  # figures also as HTML with plotly.js inlined, for nbconvert
import numpy as np
import logprob_viz as lv
from logprob_viz.records.comparison import compare
from logprob_viz.views.plot_link import link
from logprob_viz.views.plots import plot
lps = -np.linspace(0.1, 5, 12)
lps[0] = np.nan
t = lv.Trace(tokens=[" w0", " <script>window.__pwned=1</script>"] + [f" w{i}" for i in range(2, 12)], logprobs=lps)
plot(t, "surprisal")""",
    "compare([t, lv.Trace(tokens=[''.join(t.tokens[:6])] + t.tokens[6:], logprobs=[np.nan] + list(lps[6:]))])",
    'link(lv.LogprobView(t), "cumulative")',
]


def test_nbconvert_html_shows_figures_and_comparison_offline(page, tmp_path):
    """An executed notebook (no widget state saved) converted by nbconvert, opened with the network cut."""
    import subprocess
    import sys

    import nbclient
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in NBCONVERT_CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", store_widget_state=False,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    path = tmp_path / "figures.ipynb"
    nbformat.write(nb, path)
    exe = sys.executable.rsplit("/", 1)[0] + "/jupyter-nbconvert"
    done = subprocess.run([exe, "--to", "html", str(path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    asked: list[str] = []

    def only_local(route):
        asked.append(route.request.url)
        return route.continue_() if route.request.url.startswith("file:") else route.abort()

    page.route("**/*", only_local)
    page.goto(path.with_suffix(".html").as_uri())
    # the plain figure (plotly's notebook renderer) and the linked one (our text/html): plotted offline
    page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=60_000)
    counts = page.evaluate(
        "() => [...document.querySelectorAll('.js-plotly-plot')].map(p => "
        "p.querySelectorAll('.scatterlayer .trace')[0].querySelectorAll('path.point').length)"
    )
    assert counts[:2] == [11, 12]  # surprisal: the NaN token has no point; cumulative: every token
    static = page.locator(".lvc-static")
    assert static.count() == 1 and "<script>window.__pwned=1</script>" in static.inner_text()
    assert page.evaluate("window.__pwned") is None
    blocked = [u for u in asked if not u.startswith("file:")]
    assert all("cdnjs.cloudflare.com" in u for u in blocked), blocked  # nbconvert's own template asks for these


CROSS_TOKENIZER_CELL = """\
import json, pathlib
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
import logprob_viz as lv
from logprob_viz.records.comparison import compare
corpus = ("A robot may not injure a human being or, through inaction, allow a human being to come to harm. "
          "Größe café — naïve 東京 über straße.\\n") * 4
bpe = Tokenizer(models.BPE())
bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
bpe.decoder = decoders.ByteLevel()
bpe.train_from_iterator([corpus], trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
tok = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>")
torch.manual_seed(0)
tiny = LlamaForCausalLM(LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                                    num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512)).eval()
text = "Größe, café — naïve 東京 日本 🙂🦀. A robot may not injure a human being, or allow harm."
smol_trace = lv.load().score(text, top_logprobs=3)
tiny_trace = lv.load((tiny, tok)).score(text, top_logprobs=3)
pathlib.Path("cross.json").write_text(json.dumps([smol_trace.to_dict(), tiny_trace.to_dict()]))
v = compare([smol_trace, tiny_trace], labels=["SmolLM2-135M", "tiny BPE + random Llama"]).view()
v"""


def test_cross_tokenizer_comparison_on_real_models(page, lab_server):
    write_notebook(lab_server, "cross.ipynb", [CROSS_TOKENIZER_CELL])
    open_notebook(page, lab_server, "cross.ipynb")
    run_cell(page, 0)
    wait_for_output(page, lab_server, 0, ".lvc-root", MODEL_TIMEOUT)
    smol, tiny = json.loads((lab_server.root / "cross.json").read_text())
    rows = [[bytes.fromhex(h) for h in t["token_bytes"]] for t in (smol, tiny)]
    text = b"".join(rows[0])
    assert text == b"".join(rows[1]) and [len(r) for r in rows[0]] != [len(r) for r in rows[1]]
    # the spans, computed here: common token boundaries that are not inside a UTF-8 character
    starts = []
    for r in rows:
        at, own = 0, set()
        for b in r:
            own.add(at)
            at += len(b)
        starts.append(own | {at})
    cuts = sorted(c for c in starts[0] & starts[1] if c == len(text) or text[c] >> 6 != 0b10)
    root = cell(page, 0).locator(".lvc-root")
    for r in (0, 1):
        assert root.locator(f".lvc-row[data-row='{r}'] .lvc-span").count() == len(cuts) - 1
    # hover the span holding the crab (4 bytes, split into bytes by both tokenizers) in the tiny row
    crab = text.index("🦀".encode())
    s = max(i for i, c in enumerate(cuts[:-1]) if c <= crab)
    root.locator(f".lvc-row[data-row='1'] .lvc-span[data-span='{s}']").hover()
    page.wait_for_function(f"el => el.dataset.span === '{s}'", arg=root.locator(".lvc-panel").element_handle())
    assert root.locator(".lvc-row[data-row='0'] .lvc-span.lvc-hl").get_attribute("data-span") == str(s)
    assert "🦀" in root.locator(".lvc-panel .lvc-span-text").text_content()  # the span's text is whole
    for r, trace in enumerate((smol, tiny)):
        at, mine = 0, []
        for i, b in enumerate(rows[r]):
            if cuts[s] <= at < cuts[s + 1]:
                mine.append(trace["tokens"][i])
            at += len(b)
        shown = root.locator(f".lvc-panel .lvc-col[data-row='{r}'] .lvc-token-text").all_text_contents()
        assert shown == [visible(t) for t in mine]
    # pinned, the panel stays for the picture (JupyterLab's news toast may take the pointer away)
    root.locator(f".lvc-row[data-row='1'] .lvc-span[data-span='{s}']").click()
    root.locator(".lvc-span.lvc-pinned").nth(1).wait_for()
    no_news = page.get_by_role("button", name="No", exact=True)
    if no_news.count():
        no_news.first.click()
    save_screenshot(page, "compare-cross-tokenizer.png", ".lvc-root:visible")
    assert page.page_errors == []
