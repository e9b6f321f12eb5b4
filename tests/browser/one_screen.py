"""What a class reads on the explorer's one screen, measured in the page (issue 49): the helpers of
test_one_screen_browser.py.

- `NAMES_JS`: every element holding a token's name, a column heading, a slider's label or the
  legend's parts, that wraps inside itself (its text on more than one line), overflows its own box,
  or reaches past the box that clips it (a panel, the column, the view, the window).
- `TOUCHING_JS`: headings and labels on one line closer than `GAP` px to the next one (the texts'
  own extents, not their boxes: "MODELPROB" is two boxes whose texts meet).
- `CHART_COLUMN_JS`: the pinned chart's second column, row by row ({token id: p, head, other}).
- `WORDS_JS`: the words of an element's text that its layout broke across lines (wraps inside a word).
- `APP_CELL`, `REFERENCE_CELL`: the explorer the one-screen tests open, and the independent model they
  check its numbers against (the default model loaded again with plain transformers).
"""

from __future__ import annotations

GAP = 4  # px: two labels on one line closer than this read as one word

APP_CELL = """\
import logprob_viz as lv
app = lv.explore(max_new_tokens=12, top_logprobs=5, temperature=0.8, seed=1)
app"""

REFERENCE_CELL = """\
import json, torch
from transformers import AutoModelForCausalLM
from logprob_viz.sources.local.default_model import default_model_path
reference = AutoModelForCausalLM.from_pretrained(default_model_path(), dtype=torch.float32).eval()
print("ready")"""

# The text of `e` as the lines it is laid out on (a Range's client rects, grouped by their top).
_LINES = """
const linesOf = (e) => {
  const range = document.createRange();
  range.selectNodeContents(e);
  const tops = [];
  for (const r of range.getClientRects()) {
    if (r.width < 0.5 || r.height < 0.5) continue;
    if (!tops.some((t) => Math.abs(t - r.top) < r.height / 2)) tops.push(r.top);
  }
  return tops.length;
};
const textBox = (e) => {
  const range = document.createRange();
  range.selectNodeContents(e);
  const rects = [...range.getClientRects()].filter((r) => r.width >= 0.5 && r.height >= 0.5);
  if (!rects.length) return null;
  return {left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)),
          top: Math.min(...rects.map((r) => r.top)), bottom: Math.max(...rects.map((r) => r.bottom))};
};
const clipperOf = (e) => {
  for (let p = e.parentElement; p; p = p.parentElement) {
    const s = getComputedStyle(p);
    if (s.overflowX !== 'visible' || p.classList.contains('lv-side') || p.classList.contains('lv-root')) return p;
  }
  return document.documentElement;
};
"""

NAMES = (".lv-chip, .lv-alt-token, .lv-side-tok, .lv-alt-head > span, .lv-side-name, .lv-side-value, "
         ".lv-legend select, .lv-legend input, .lv-legend-item, .lv-legend-ticks > span, .lv-side-status")

NAMES_JS = "app => {" + _LINES + f"""
  const bad = [];
  for (const e of app.querySelectorAll('{NAMES}')) {{
    const r = e.getBoundingClientRect();
    if (!r.width || !e.checkVisibility()) continue;
    const text = e.textContent.trim();
    const c = clipperOf(e).getBoundingClientRect();
    const why = [];
    const typed = e.tagName === 'SELECT' || e.tagName === 'INPUT';
    if (!typed && text && linesOf(e) > 1 && !e.classList.contains('lv-side-status')) why.push('wraps');
    if (e.tagName !== 'SELECT' && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).display !== 'inline')
      why.push(`overflows its box (${{e.scrollWidth}} > ${{e.clientWidth}})`);
    const px = (a, b) => `${{Math.round(a)}}-${{Math.round(b)}}`;
    if (r.right > c.right + 1 || r.left < c.left - 1)
      why.push(`past its clip box (${{px(r.left, r.right)}} in ${{px(c.left, c.right)}})`);
    if (r.right > window.innerWidth + 1) why.push('past the window');
    if (getComputedStyle(e).textOverflow === 'ellipsis') why.push('ellipsis');
    if (why.length) bad.push({{text: text || e.value || e.tagName, className: e.className, why}});
  }}
  return bad;
}}"""

# Labels that share a line: each chart's column headings, the sliders' names and values, the legend's ticks.
TOUCHING_JS = "app => {" + _LINES + f"""
  const groups = [...app.querySelectorAll('.lv-alt-head')].map((g) => [...g.children]);
  groups.push([...app.querySelectorAll('.lv-side-sliders .lv-side-name, .lv-side-sliders .lv-side-value')]);
  for (const ticks of app.querySelectorAll('.lv-legend-ticks')) groups.push([...ticks.children]);
  const close = [];
  for (const group of groups) {{
    const boxes = group.filter((e) => e.checkVisibility() && e.textContent.trim())
      .map((e) => ({{text: e.textContent.trim(), box: textBox(e)}})).filter((b) => b.box);
    for (let a = 0; a < boxes.length; a++) for (let b = 0; b < boxes.length; b++) {{
      if (a === b) continue;
      const [p, q] = [boxes[a].box, boxes[b].box];
      const sameLine = p.top < q.bottom - 2 && q.top < p.bottom - 2;
      const gap = q.left - p.right;
      if (sameLine && q.left >= p.left && gap < {GAP})
        close.push({{first: boxes[a].text, next: boxes[b].text, gap: Math.round(gap)}});
    }}
  }}
  return close;
}}"""

# The pinned chart's second column: its heading, and each row's p by token id (the explorer's
# readout numbers travel unrounded in data-p), the "other" row's text.
CHART_COLUMN_JS = """chart => {
  const table = chart.querySelector('.lv-alts');
  if (!table || !table.classList.contains('lv-alts-processed')) return null;
  const head = [...table.querySelectorAll('.lv-alt-head > span')].map((e) => e.textContent);
  const rows = {};
  for (const row of table.querySelectorAll('.lv-alt-row')) {
    const q = row.querySelector('.lv-alt-prob-processed');
    rows[row.dataset.tokenId] = {p: q.dataset.p === undefined ? null : Number(q.dataset.p), text: q.textContent};
  }
  const other = table.querySelector('.lv-alt-other .lv-alt-prob-processed');
  return {head, rows, other: other ? other.textContent : null,
          note: (chart.querySelector('.lv-column-note') || {}).textContent || ''};
}"""

# Words of an element's text that the layout broke across lines (a word's characters on more than one
# line): [] when it wraps between words only.
WORDS_JS = """e => {
  const broken = [];
  const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const m of node.data.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const tops = [];
      for (const r of range.getClientRects()) {
        if (r.width < 0.5 || r.height < 0.5) continue;
        if (!tops.some((t) => Math.abs(t - r.top) < r.height / 2)) tops.push(r.top);
      }
      if (tops.length > 1) broken.push(m[0]);
    }
  }
  return broken;
}"""
