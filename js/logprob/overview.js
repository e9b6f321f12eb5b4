// What the chart panel holds while no token is shown (before any hover or pin, and when the
// pointer leaves the text with nothing pinned): the hint, where the model hesitated (the tokens
// it gave the lowest probability, each a button that pins its token: events.js) and the
// completion's mean probability and perplexity. It lives in the panel's fixed box (scrolling
// inside it if it must) so that a first hover changes what the box holds, never its size.
// Built once per change of the trace (panel.js keeps it), not on every hover.

import { h } from "../toolkit/dom.js";
import { formatLogprob, formatPercent, formatStat } from "../toolkit/format.js";
import { overviewOf } from "./stats.js";
import { appendText } from "./text.js";

export const HINT = "Hover a token to see what the model was choosing between; click to pin it.";
export const OVERVIEW_ROWS = 5; // (5 rows, the heading and the summary fit the panel at K=5, also at projector size)

const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** Over which tokens, in words: "over the 35 generated tokens", "over all 12 tokens of the scored text". */
export function overWhich(o) {
  const over = o.scored ? `over all ${plural(o.known, "token")} of the text` : `over the ${plural(o.known, "generated token")}`;
  return o.unknown ? `${over} with a logprob (${o.unknown} without)` : over;
}

/** The summary line: the mean probability of the chosen tokens and their perplexity, and over which. */
export function summaryText(o) {
  const ppl = Number.isFinite(o.perplexity) ? formatStat(o.perplexity, 2) : "\u221e"; // (a token of p 0)
  return `mean p ${formatPercent(o.meanP)} \u00b7 perplexity ${ppl}, ${overWhich(o)}`;
}

/**
 * A row of the list: the token (as the chart's title shows it), its probability and logprob (as
 * the chart's rows show them: the logprob tells apart the tokens a percent shows as "<0.1%"), and
 * its position (numbered from 1, as the chart's title numbers it).
 */
function row(data, i, style) {
  const el = h("button", "lv-overview-row");
  el.type = "button";
  el.dataset.index = String(i);
  el.title = `pin token ${i + 1}: ${JSON.stringify(data.tokens[i])}`; // (a property: plain text; the chip may be cut short)
  const chip = h("span", "lv-chip");
  appendText(chip, data.tokens[i]); // text nodes and marks, never HTML: a token can be `<img onerror>`
  if (style) Object.assign(chip.style, { background: style.background, color: style.color });
  const lp = data.logprobs[i];
  el.append(chip, h("span", "lv-overview-p", formatPercent(Math.exp(lp))), h("span", "lv-overview-logprob", formatLogprob(lp)));
  el.appendChild(h("span", "lv-overview-where", `token ${i + 1}`));
  return el;
}

/** The overview of `data`; `style(i)`: token i's colours in the text (or null), so a row reads as its token. */
export function buildOverview(data, style, rows = OVERVIEW_ROWS) {
  const el = h("div", "lv-overview");
  el.appendChild(h("div", "lv-chart-empty lv-overview-hint", HINT));
  const o = overviewOf(data, rows);
  if (!o.least.length) return el; // (no token with a known logprob: the hint alone)
  const head = h("div", "lv-overview-head", o.scored ? "Least expected" : "Where it hesitated");
  head.title = o.scored ? "the tokens of the text the model found least likely" : "the generated tokens the model gave the lowest probability";
  const list = h("div", "lv-overview-list");
  for (const i of o.least) list.appendChild(row(data, i, style(i)));
  el.append(head, list, h("div", "lv-overview-summary", summaryText(o)));
  return el;
}
