// The compare view's rows: each trace's tokens grouped by aligned span, in blocks laid out only
// near the view, and the tail where a row's text differs from the others.

import { h } from "../toolkit/dom.js";

// Spans per block: a block is laid out and painted only near the view (content-visibility), so a
// hover repaints a few hundred tokens, not a whole 10,000-byte row.
const BLOCK = 100;

/** Token i of a row in the text: a piece of a split character shows the character on its last piece. */
function tokenEl(row, i, tokenClass) {
  const tok = h("span", tokenClass(row.logprobs[i]) + (row.split[i] ? " lvc-split" : ""), row.shown[i]);
  if (row.split[i]) tok.title = `a piece of a character split across tokens: ${row.tokens[i]}`;
  tok.dataset.index = String(i);
  return tok;
}

/** Row r's text element and its span elements ([span] -> element); its tail (own continuation) holds `data-row`. */
function buildRow(data, row, r, tokenClass) {
  const text = h("div", "lvc-text");
  const frag = document.createDocumentFragment();
  const spans = new Array(data.nSpans);
  let block = null;
  for (let s = 0; s < data.nSpans; s++) {
    if (s % BLOCK === 0) {
      block = h("div", "lvc-block");
      frag.appendChild(block);
    }
    const spanEl = h("span", "lvc-span");
    spanEl.dataset.span = String(s);
    for (let i = row.spanFirst[s]; i >= 0 && i < row.spanEnd[s]; i++) spanEl.appendChild(tokenEl(row, i, tokenClass));
    spans[s] = spanEl;
    block.appendChild(spanEl);
  }
  if (row.tailFrom < row.n) {
    const tail = h("div", "lvc-block lvc-tail");
    tail.dataset.row = String(r);
    // U+21B3 (DejaVu Sans has it; U+2442, used before, is a missing-glyph box in Debian chromium)
    const fork = h("span", "lvc-fork", "\u21b3 own continuation:");
    fork.title = "this row differs from the others from here: its own text, coloured by its own probability";
    tail.appendChild(fork);
    frag.appendChild(tail);
    for (let i = row.tailFrom; i < row.n; i++) tail.appendChild(tokenEl(row, i, tokenClass));
  }
  text.appendChild(frag);
  return { text, spans };
}

/** Every row: `{el, spanEls}` ([row][span] -> element); `tokenClass(logprob)` colours a token. */
export function buildRows(data, labels, tokenClass) {
  const el = h("div", "lvc-rows");
  const spanEls = [];
  data.rows.forEach((row, r) => {
    const rowEl = h("div", "lvc-row");
    rowEl.dataset.row = String(r);
    const { text, spans } = buildRow(data, row, r, tokenClass);
    rowEl.append(h("div", "lvc-row-label", labels[r] ?? String(r)), text);
    el.appendChild(rowEl);
    spanEls.push(spans);
  });
  return { el, spanEls };
}
