// The compare view's side-by-side panel: for the span on show, each row's tokens in it with
// their probability and first alternatives. Token text shows its whitespace with the toolkit's marks.

import { h } from "../toolkit/dom.js";
import { formatFixed, percentOfLogprob } from "../toolkit/format.js";
import { overText } from "./header.js";
import { visible } from "../toolkit/whitespace.js";

const ALTERNATIVES = 5; // per token in the side-by-side panel
const TOKENS_IN_PANEL = 12; // a span can hold many tokens of a fine tokenizer; list the first ones

function tokenBox(row, i) {
  const box = h("div", "lvc-token-box");
  const head = h("div", "lvc-token-head");
  const numbers = ` ${percentOfLogprob(row.logprobs[i])} (logprob ${formatFixed(row.logprobs[i])}, rank ${row.ranks[i] || "?"})`;
  head.append(h("code", "lvc-token-text", visible(row.tokens[i])), h("span", "lvc-token-lp", numbers));
  box.appendChild(head);
  const list = h("ol", "lvc-alts");
  const end = Math.min(row.altStart[i + 1], row.altStart[i] + ALTERNATIVES);
  for (let j = row.altStart[i]; j < end; j++) {
    const li = h("li", "lvc-alt");
    if (row.altTexts[j] === row.tokens[i]) li.classList.add("lvc-chosen");
    li.append(h("code", "lvc-alt-text", visible(row.altTexts[j])), h("span", "lvc-alt-p", ` ${percentOfLogprob(row.altLogprobs[j])}`));
    list.appendChild(li);
  }
  if (end > row.altStart[i]) box.appendChild(list);
  return box;
}

/** Fill `panel` for span s (-1: the placeholder) of decoded comparison `data`. */
export function showPanel(panel, data, s, labels, isPinned) {
  panel.replaceChildren();
  delete panel.dataset.row;
  if (s < 0) {
    panel.dataset.span = "-1";
    const tails = data.rows.some((row) => row.tailFrom < row.n);
    const more = tails ? "; hover a row's own continuation (after \u21b3) to see its numbers" : "";
    panel.appendChild(h("div", "lvc-placeholder", `Hover a span to see every row's tokens and alternatives there; click to pin it${more}.`));
    return;
  }
  panel.dataset.span = String(s);
  const title = h("div", "lvc-panel-title");
  title.append(h("span", null, `span ${s} \u00b7 bytes ${data.spanStarts[s]}\u2013${data.spanEnds[s]} \u00b7 `),
    h("code", "lvc-span-text", visible(data.spanTexts[s])), h("span", null, isPinned ? " \u00b7 pinned" : ""));
  const cols = h("div", "lvc-cols");
  data.rows.forEach((row, r) => {
    const col = h("div", "lvc-col");
    col.dataset.row = String(r);
    const sum = `logprob ${formatFixed(data.spanLogprobs[r * data.nSpans + s])} \u00b7 ${row.spanEnd[s] - row.spanFirst[s]} token(s)`;
    col.append(h("div", "lvc-col-label", labels[r] ?? String(r)), h("div", "lvc-col-sum", sum));
    const last = Math.min(row.spanEnd[s], row.spanFirst[s] + TOKENS_IN_PANEL);
    for (let i = row.spanFirst[s]; i >= 0 && i < last; i++) col.appendChild(tokenBox(row, i));
    if (row.spanEnd[s] > last) col.appendChild(h("div", "lvc-more", `\u2026 ${row.spanEnd[s] - last} more`));
    cols.appendChild(col);
  });
  panel.append(title, cols);
}

/** One row's own-continuation numbers in words: "1.2345 bits/byte · perplexity 3.21 · over 20 tokens, 77 bytes". */
export function ownNumbers(part) {
  if (!part) return "";
  if (part.reason) return part.reason;
  return `${formatFixed(part.bits_per_byte, 4)} bits/byte \u00b7 perplexity ${formatFixed(part.perplexity, 2)} \u00b7 ` +
    `over ${overText(part)} (\u2212\u03a3 log\u2082 p = ${formatFixed(part.bits, 2)} bits)`;
}

/** Fill `panel` for token i of row r's own continuation: every row's own numbers side by side, and the token. */
export function showTail(panel, data, r, i, labels, own) {
  panel.replaceChildren();
  panel.dataset.span = "tail";
  panel.dataset.row = String(r);
  const part = own[r];
  const title = h("div", "lvc-panel-title");
  const range = part ? ` \u00b7 bytes ${part.start}\u2013${part.end}` : "";
  title.append(h("span", null, `${labels[r] ?? r}: its own continuation${range} (after the part every row shares)`));
  const cols = h("div", "lvc-cols");
  data.rows.forEach((row, k) => {
    const col = h("div", k === r ? "lvc-col lvc-col-hovered" : "lvc-col");
    col.dataset.row = String(k);
    col.append(h("div", "lvc-col-label", labels[k] ?? String(k)), h("div", "lvc-col-sum lvc-own-sum", ownNumbers(own[k])));
    if (k === r) col.appendChild(tokenBox(row, i));
    cols.appendChild(col);
  });
  panel.append(title, cols);
}
