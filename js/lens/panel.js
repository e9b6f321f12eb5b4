// The alternatives panel: one cell's layer, its numbers, and that layer's top guesses with the
// actual token highlighted (added below with its rank when it is not among them).

import { h as el } from "../toolkit/dom.js";
import { formatLogprob, percentOfLogprob as percent } from "../toolkit/format.js";
import { isBlank, visible } from "../toolkit/whitespace.js";
import { tokenAt } from "./data.js";

/** "space", "2 spaces", "newline", "tab + space", ...: what a whitespace-only token holds. */
function blankKind(text) {
  if (text === "") return "empty";
  const names = { " ": "space", "\n": "newline", "\t": "tab", "\r": "return" };
  const parts = [];
  for (const run of text.match(/( +|\n+|\t+|\r+|[^ \n\t\r]+)/g)) {
    const name = names[run[0]] ?? "whitespace";
    parts.push(run.length === 1 ? name : `${run.length} ${name}s`);
  }
  return parts.join(" + ");
}

function altRow(text, logprob, chosen, best) {
  const row = el("div", "lvl-alt-row");
  if (chosen) row.classList.add("lvl-chosen");
  const bar = el("div", "lvl-alt-bar");
  const share = Number.isFinite(best) ? Math.exp(logprob - best) : 0; // bar length relative to the top guess
  bar.style.width = `${Math.max(0, Math.min(1, share)) * 100}%`;
  const cellText = el("span", "lvl-alt-text");
  const token = el("span", "lvl-alt-token", text);
  cellText.append(token);
  if (isBlank(text)) {
    token.classList.add("lvl-blank"); // a box shows where the whitespace is, and words say what it is
    cellText.append(el("span", "lvl-alt-kind", blankKind(text)));
  }
  row.append(cellText, el("span", "lvl-alt-prob", percent(logprob)), el("span", "lvl-alt-logprob", formatLogprob(logprob)));
  row.prepend(bar);
  return row;
}

/**
 * Fill `box` with row r (index into d.layers) of token i.
 * alts: {state: "ok", rows: [{text, logprob, chosen}]} | {state: "waiting"} | {state: "error", message}
 *       | {state: "ask"} (not loaded: pin the token to ask the kernel).
 */
export function showCell(box, d, r, i, alts) {
  box.replaceChildren();
  box.dataset.row = String(r);
  box.dataset.layer = String(d.layers[r]);
  box.dataset.index = String(i);
  const at = r * d.n + i;
  const head = el("div", "lvl-detail-head");
  const last = d.layers[r] === d.nBlocks - 1;
  head.append(
    el("span", "lvl-detail-layer", last ? `layer ${d.layers[r]} (output)` : `layer ${d.layers[r]}`),
    el("span", "lvl-detail-sep", " · token "),
    el("span", "lvl-detail-token", tokenAt(d, i)),
  );
  box.append(head);
  if (i === 0) {
    box.append(el("div", "lvl-note", "the first token has nothing before it to predict it from"));
    return;
  }
  const stats = el("div", "lvl-detail-stats");
  stats.append(
    el("span", "lvl-stat-prob", `p ${percent(d.logprobs[at])}`),
    el("span", "lvl-rank", `rank ${d.ranks[at]}`),
    el("span", "lvl-stat-entropy", `entropy ${Number.isNaN(d.entropy[at]) ? "?" : d.entropy[at].toFixed(2)} nats`),
  );
  box.append(stats);
  const list = el("div", "lvl-alts");
  box.append(list);
  if (alts.state === "ok") {
    const best = alts.rows.length ? alts.rows[0].logprob : NaN;
    let chosenSeen = false;
    for (const a of alts.rows) {
      const chosen = a.chosen && !chosenSeen;
      chosenSeen ||= chosen;
      list.append(altRow(a.text, a.logprob, chosen, best));
    }
    if (!chosenSeen) {
      const extra = altRow(tokenAt(d, i), d.logprobs[at], true, best);
      extra.classList.add("lvl-extra");
      extra.append(el("span", "lvl-alt-rank", `rank ${d.ranks[at]}`));
      list.append(extra);
    }
    return;
  }
  // Not loaded: the layer's top guess is always known; the rest comes from the kernel.
  list.append(altRow(d.texts[d.top1Text[at]], d.top1Logprobs[at], d.ranks[at] === 1, d.top1Logprobs[at]));
  if (alts.state === "waiting") list.append(el("div", "lvl-waiting", "asking the kernel for this token's alternatives…"));
  else if (alts.state === "error") list.append(el("div", "lvl-error", alts.message));
  else list.append(el("div", "lvl-note", "click the token to load every layer's alternatives from the kernel"));
}

/** The caption over the pinned token's plots. */
export function plotCaption(d, i) {
  const cap = el("div", "lvl-plot-caption");
  cap.append(el("span", "", "how the model came to "), el("span", "lvl-detail-token", visible(tokenAt(d, i))), el("span", "", ` (token ${i}), layer by layer`));
  return cap;
}
