"""trace.to_svg / view.to_svg / trace.to_latex: hostile tokens stay text, colours are the view's.

The SVG is parsed by xml.etree (a parse error fails the test) and every token must come back as
a text node equal to what the view shows; the LaTeX is compiled by pdflatex where it is
installed, and always read back by a small TeX reader written here, which accepts only the
escapes it knows and fails on any bare special character.
"""

import math
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import logprob_viz as lv
from logprob_viz.views.pictures import color_of

SVG = "{http://www.w3.org/2000/svg}"

# (token, what the picture must show for it with the view's visible whitespace)
HOSTILE = [
    ("<script>alert(1)</script>", "<script>alert(1)</script>"),
    ("]]>", "]]>"),
    (" &amp; &", "·&amp;·&"),
    ('"quoted"', '"quoted"'),
    ("\x07bell\x1b", "\\x07bell\\x1b"),
    ("\\", "\\"),
    ("}", "}"),
    ("{", "{"),
    ("$x^2_%#~", "$x^2_%#~"),
    ("\u202eevil", "[RLO]evil"),
    ("\u200b", "[ZWSP]"),
    ("<!--", "<!--"),
    ("a\tb", "a→b"),
    ("line\n", "line↵"),
    (" 日本", "·日本"),
    ("é|<>", "é|<>"),
]


def hostile_trace():
    n = len(HOSTILE)
    logprobs = np.log(np.linspace(0.9, 0.05, n)).astype(np.float32)
    logprobs[0] = np.nan  # unknown: drawn without colour
    tops = [[tok, "&<b>", "]]>"] for tok, _ in HOSTILE]
    top_lp = np.log(np.tile([0.5, 0.3, 0.1], (n, 1))).astype(np.float32)
    ranks = np.array([0] + [1] * (n - 1), dtype=np.int32)
    return lv.Trace(tokens=[t for t, _ in HOSTILE], logprobs=logprobs, ranks=ranks, top_tokens=tops,
                    top_logprobs=top_lp, prompt_len=0)


def token_groups(svg: str):
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    return root, [g for g in root.iter(f"{SVG}g") if g.get("class") == "lv-token"]


def test_svg_parses_and_every_token_is_a_text_node():
    svg = hostile_trace().to_svg(pinned=2)
    root, groups = token_groups(svg)
    assert [g.find(f"{SVG}text").text for g in groups] == [shown for _, shown in HOSTILE]
    # nothing but drawing elements; no scripts, handlers or links anywhere
    tags = {el.tag.removeprefix(SVG) for el in root.iter()}
    assert tags <= {"svg", "g", "rect", "text", "title", "defs", "linearGradient", "stop"}
    assert not [a for el in root.iter() for a in el.attrib if a.startswith("on") or a.endswith("href")]
    assert "<script>" not in svg and "]]>" not in svg.replace("]]&gt;", "")


def test_svg_colours_are_the_views_for_each_token():
    trace = lv.score("The capital of France is Paris, and the capital of Italy is Rome.", top_logprobs=5)
    _, groups = token_groups(trace.to_svg(palette="cividis"))
    for i, g in enumerate(groups):
        fill = g.find(f"{SVG}rect").get("fill")
        p = math.exp(float(trace.logprobs[i]))
        if math.isnan(p):
            assert fill == "none", "an unscored token is not coloured"
            continue
        # viridis/cividis at t = p, as js/colors.js paletteColor interpolates (checked against node elsewhere)
        stops = [(0, 34, 78), (64, 77, 107), (124, 123, 120), (188, 175, 111), (254, 232, 56)]
        x = p * 4
        lo = min(int(x), 4)
        hi = min(lo + 1, 4)
        want = tuple(math.floor(a + (b - a) * (x - lo) + 0.5) for a, b in zip(stops[lo], stops[hi], strict=True))
        assert fill == "#{:02x}{:02x}{:02x}".format(*want), (i, trace.tokens[i])


def test_svg_pinned_chart_lists_the_alternatives():
    trace = hostile_trace()
    root, groups = token_groups(trace.to_svg(pinned=3))
    assert groups[3].find(f"{SVG}rect").get("stroke") == "#000"
    chart = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "lv-chart")
    texts = [t.text for t in chart.iter(f"{SVG}text")]
    assert texts[0] == 'token 4 of 16: "quoted"'
    for label in ['"quoted"', "&<b>", "]]>", "other", "50.0%", "30.0%", "10.0%"]:
        assert label in texts
    bold = [t.text for t in chart.iter(f"{SVG}text") if t.get("font-weight") == "bold"]
    assert bold[0] == '"quoted"', "the chosen token is marked"


def test_view_to_svg_uses_the_views_settings():
    trace = lv.score("Once upon a time there was a robot.", top_logprobs=5)
    view = lv.LogprobView(trace, color_mode="rank", palette="magma", selected=4)
    root, groups = token_groups(view.to_svg())
    okabe = {"#56b4e9", "#009e73", "#f0e442", "#e69f00", "#cc79a7"}
    fills = {g.find(f"{SVG}rect").get("fill") for g in groups} - {"none"}
    assert fills <= okabe, "rank mode paints the GLTR buckets"
    assert groups[4].find(f"{SVG}rect").get("stroke") == "#000"
    assert any(g.get("class") == "lv-chart" for g in root.iter(f"{SVG}g"))
    view.color_mode, view.selected = "logprob", -1
    root, groups = token_groups(view.to_svg())
    assert not any(g.get("class") == "lv-chart" for g in root.iter(f"{SVG}g"))
    surprisal = -float(trace.logprobs[3])
    assert groups[3].find(f"{SVG}rect").get("fill") == "#{:02x}{:02x}{:02x}".format(
        *color_of(surprisal, "logprob", "magma"))


def test_svg_bad_arguments_say_what_to_do():
    trace = hostile_trace()
    with pytest.raises(ValueError, match="color_mode must be one of"):
        trace.to_svg(color_mode="heat")
    with pytest.raises(ValueError, match="palette must be one of"):
        trace.to_svg(palette="jet")
    with pytest.raises(ValueError, match="pinned must be None or a token index between 0 and 15"):
        trace.to_svg(pinned=16)
    for not_an_index in (True, False, 1.0, "1"):  # a bool is not a token index (True would pin token 1)
        with pytest.raises(TypeError, match=r"pinned must be None or a token index \(a whole number\), got"):
            trace.to_svg(pinned=not_an_index)
    assert 'data-index="1"><title>' in trace.to_svg(pinned=np.int64(1))  # numpy's whole numbers are
    with pytest.raises(ValueError, match="give at least"):
        trace.to_svg(width=200, pinned=1)


# ---- LaTeX -------------------------------------------------------------------------------------

ESCAPES = {r"\ ": " ", r"\{": "{", r"\}": "}", r"\$": "$", r"\&": "&", r"\#": "#", r"\_": "_", r"\%": "%",
           r"\textbackslash{}": "\\", r"\^{}": "^", r"\~{}": "~", r"\textless{}": "<", r"\textgreater{}": ">",
           r"\textbar{}": "|"}
SPECIALS = set("\\{}$&#^_%~")


def read_group(src: str, at: int) -> tuple[str, int]:
    """The raw content of the brace group opening at src[at], and the index after it (escapes skipped)."""
    assert src[at] == "{", src[at:at + 30]
    depth, i = 0, at
    while True:
        ch = src[i]
        if ch == "\\":
            i += 2
            continue
        depth += ch == "{"
        depth -= ch == "}"
        i += 1
        if depth == 0:
            return src[at + 1 : i - 1], i


def decode_text(tex: str) -> str:
    """Token text back from its escaped form; fails on any command or special it does not know."""
    out, i = [], 0
    while i < len(tex):
        for escaped, ch in ESCAPES.items():
            if tex.startswith(escaped, i):
                out.append(ch)
                i += len(escaped)
                break
        else:
            assert tex[i] not in SPECIALS, f"bare {tex[i]!r} in {tex!r}"
            out.append(tex[i])
            i += 1
    return "".join(out)


def read_latex(tex: str):
    """[(colour name or None, ink, text)] per token, and the defined colours {name: (r, g, b)}."""
    defined = re.findall(r"\\definecolor\{(\w+)\}\{RGB\}\{(\d+),(\d+),(\d+)\}", tex)
    colors = {m[0]: tuple(map(int, m[1:])) for m in defined}
    body = tex[tex.index(r"\noindent") + len(r"\noindent") : tex.rindex("%\n}")]
    tokens = []
    for part in re.split(r"%\n\\(?:allowbreak|newline(?:\\newline)*)%\n", "%\n" + body.strip("\n")):
        part = part.removeprefix("%\n")
        if not part:
            continue
        if part.startswith(r"\colorbox"):
            name, at = read_group(part, len(r"\colorbox"))
            inner, end = read_group(part, at)
            assert end == len(part), part
            assert inner.startswith(r"\strut\textcolor"), inner
            ink, at = read_group(inner, len(r"\strut\textcolor"))
            text, end = read_group(inner, at)
            assert end == len(inner)
            tokens.append((name, ink, decode_text(text)))
        else:
            assert part.startswith(r"\strut{}"), part
            tokens.append((None, None, decode_text(part.removeprefix(r"\strut{}"))))
    return tokens, colors


def test_latex_escapes_every_special_and_reads_back():
    trace = hostile_trace()
    tex = trace.to_latex()
    tokens, colors = read_latex(tex)
    # plain whitespace: spaces kept, a tab four spaces, a newline a line break (not text)
    want = [t.replace("\t", "    ").replace("\n", "") for t, _ in HOSTILE]
    want = [re.sub(r"[\x00-\x1f]", lambda m: f"\\x{ord(m[0]):02x}", w) for w in want]
    want = [w.replace("\u202e", "[RLO]").replace("\u200b", "[ZWSP]") for w in want]
    assert [text for _, _, text in tokens] == want
    assert tokens[0][0] is None, "the unscored first token is not coloured"
    for i, (name, ink, _) in enumerate(tokens[1:], start=1):
        rgb = color_of(math.exp(float(trace.logprobs[i])), "probability", "viridis")
        assert colors[name] == rgb
        assert ink in ("black", "white")
    assert tex.count(r"\newline") == 1 and "line" in tokens[13][2]


def test_latex_shows_whitespace_on_request():
    trace = lv.Trace(tokens=["a b", "\t", "\n", "x\ry", ""], logprobs=[-0.1, -0.2, -0.3, -0.4, -0.5])
    tex = trace.to_latex(show_whitespace=True)
    assert r"a$\cdot$b" in tex and r"$\rightarrow$" in tex and r"$\hookleftarrow$" in tex
    assert r"x{\scriptsize CR}y" in tex and r"{$\emptyset$}}" in tex, "a return, an empty token: as the views"
    assert trace.to_latex().rstrip().endswith("{}}%\n}"), "without marks an empty token is an empty box"


def test_every_mark_of_the_views_has_its_latex_and_svg_shows_the_empty_token():
    # a mark changed in views/whitespace.py (and js/toolkit/whitespace.js) must get its LaTeX too
    from logprob_viz.views.pictures import _LATEX_MARKS
    from logprob_viz.views.whitespace import EMPTY_MARK, WHITESPACE_MARKS

    assert set(_LATEX_MARKS) == {*WHITESPACE_MARKS.values(), EMPTY_MARK}
    _, groups = token_groups(lv.Trace(tokens=["a", ""], logprobs=[-0.1, -0.2]).to_svg())
    assert [g.find(f"{SVG}text").text for g in groups] == ["a", "\u2205"]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed here")
def test_latex_compiles(tmp_path):
    body = hostile_trace().to_latex()
    doc = "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage{xcolor}\\begin{document}\n" + body
    # pdflatex has no glyphs for CJK: the document drops that token, which is what the docstring says
    doc = doc.replace("日本", "") + "\\end{document}\n"
    (tmp_path / "t.tex").write_text(doc, encoding="utf-8")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "t.tex"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
