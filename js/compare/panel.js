// The compare view's side-by-side panel: for the span on show, each row's tokens in it with
// their probability and first alternatives. Token text shows its whitespace with the toolkit's marks.

import { h } from "../toolkit/dom.js";
import { formatFixed, percentOfLogprob } from "../toolkit/format.js";
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
  if (s < 0) {
    panel.dataset.span = "-1";
    panel.appendChild(h("div", "lvc-placeholder", "Hover a span to see every row's tokens and alternatives there; click to pin it."));
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
