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

/** The tokens of a row's p, "tokens 62\u201363 (2)" or "token 62", counted from 1. */
function tokensOf(from, to) {
  const n = to - from + 1;
  return n === 1 ? `token ${shown(from)}` : `tokens ${shown(from)}\u2013${shown(to)} (${n})`;
}

/** Whether a row's opening quote is a token (or tokens) of its own, before `at`: then p leaves it out. */
export const quoteApart = (row) => row.at > row.first;

/** What the list's p is, named once in the head (its tooltip: `P_MEANING`). */
export const P_LEGEND = "p: the value from its first character";
export const P_MEANING = "p of each value: the product of its tokens' probabilities from the token where its "
  + "content begins (a string's first character, past its opening quote) to the token that closes it, given "
  + "the text before: the same p \u201cWhat else?\u201d lists. A string whose opening quote is a token of its own "
  + "also has p with the quote (that token's probability too: that a string begins there); the detail shows both.";

/** A list row's p tooltip: its tokens, and its p with the opening quote when that differs. */
export function probTitle(row) {
  const own = `p of the value: the product over ${tokensOf(row.at, row.last)}, from its first character to its end`;
  if (!quoteApart(row)) return own;
  return `${own}; with its opening quote (${tokensOf(row.first, row.at - 1)}): ${formatPercent(row.prob_with_quote)}`;
}

/** The sentences of a value's detail: its probability and tokens, the opening quote's apart, the edges,
 * the weakest. */
export function describeRow(row) {
  const lines = [
    `p\u00a0${formatPercent(row.prob)} \u00b7 log\u00a0p\u00a0${formatLogprob(row.logprob)}`, // (no break in a number)
    `over ${tokensOf(row.at, row.last)}, from its first character to its end`,
  ];
  if (quoteApart(row)) lines.push(`with its opening quote (${tokensOf(row.first, row.at - 1)}): p\u00a0${formatPercent(row.prob_with_quote)}`);
  const edges = {
    start: "the first token also holds text before the value",
    end: "the last token also holds text after the value",
    both: "the first and last tokens also hold text outside the value",
  };
  // with the quote apart, the text before the value sits in the quote's token, which p leaves out
  const straddles = quoteApart(row) ? { both: "end", start: "" }[row.straddles] ?? row.straddles : row.straddles;
  if (edges[straddles]) lines.push(`(${edges[straddles]})`);
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
