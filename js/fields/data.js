// The fields view's numbers and words, without the DOM (tested in node): which rows in which
// order, a value's colour on the probability scale, and the sentences of a value's detail.

import { scale } from "../logprob/modes.js";
import { styleOn } from "../toolkit/colors.js";
import { formatLogprob, formatPercent, known } from "../toolkit/format.js";
import { visible } from "../toolkit/whitespace.js";

/** The rows' indices as listed: as the JSON is written, or the least confident first. */
export function rowOrder(payload, order) {
  const n = payload.rows.length;
  if (order === "confidence" && Array.isArray(payload.order) && payload.order.length === n) return payload.order;
  return Array.from({ length: n }, (_, i) => i);
}

/** Background and text colour of a value with probability p: the LogprobView's probability scale,
 * on a light background or a dark one (`dark`: the unconfident end stands out, as in the view). */
export function probStyle(palette, p, dark = false) {
  return known(p) ? styleOn(scale("probability", palette, null, dark).rgb(p)) : null;
}

/** A token's position as the LogprobView shows it ("token 62 of 98"): counted from 1. */
export const shown = (position) => position + 1;

/** "get_weather, call 0" for a tool call's values; "" for a JSON in the text. */
export function groupOf(row) {
  if (row.call == null) return "";
  return `${row.function ?? "tool call"}, call ${row.call}`;
}

/** A token's text as a list shows it: whitespace marked, quoted. */
export const tokenLabel = (text) => `\u201c${visible(text)}\u201d`;

/** The sentences of a value's detail: its probability and tokens, the edge tokens, the weakest. */
export function describeRow(row) {
  const n = row.last - row.first + 1;
  const lines = [
    `p ${formatPercent(row.prob)} \u00b7 log p ${formatLogprob(row.logprob)}`,
    `the product over token${n === 1 ? ` ${shown(row.first)}` : `s ${shown(row.first)}\u2013${shown(row.last)} (${n})`}`,
  ];
  const edges = {
    start: "the first token also holds text before the value",
    end: "the last token also holds text after the value",
    both: "the first and last tokens also hold text outside the value",
  };
  if (edges[row.straddles]) lines.push(`(${edges[row.straddles]})`);
  lines.push(`least likely: ${tokenLabel(row.weakest_token)} (token ${shown(row.weakest)}) ${formatPercent(row.weakest_prob)}`);
  return lines;
}

/** The heading of the alternatives at a value's first content token. */
export const alternativesTitle = (row) => `At token ${shown(row.at)} (${tokenLabel(row.at_token)}) it weighed:`;

/** The heading of "What else?"'s values, in place of the alternatives. */
export const elseTitle = (row) => `After each alternative at token ${shown(row.at)} (${tokenLabel(row.at_token)}), it would write:`;

/** Over which tokens each "What else?" value's p is. */
export const elseOver = (row) => `each p: from token ${shown(row.at)} to the value's end, given the text before `
  + "(each alternative continued greedily)";
