// The guessing game's words: the feedback line after a guess, the results table's cells, the
// totals. Pure functions over the widget's traits (no DOM), so `npm test` runs them in node.
// Token text is returned as its own part ({ token }) for the view to insert as text, never markup.

import { formatFixed, formatPercent } from "../toolkit/format.js";

const bits = (x) => formatFixed(x, 2); // bits per token: two decimals, "?" when unknown
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "es"}`;

/** The model's view of a played row: "the model gave it 63.2% (rank 1)". */
function modelSays(row) {
  if (!row) return "";
  const rank = row.model_rank > 0 ? `rank ${row.model_rank}` : "rank ?";
  return ` \u2014 the model gave it ${formatPercent(row.model_prob)} (${rank}).`;
}

/**
 * The feedback line as parts: `{ text }` and `{ token }` (token text, shown as a chip).
 * `last`: the last Outcome (trait); `rows`: the played rows, to find the model's numbers.
 */
export function feedbackParts(last, rows) {
  if (!last) return [{ text: "Type the next token and press Enter, or pick a button." }];
  const row = (rows || []).find((r) => r.position === last.position);
  if (last.guess == null) {
    const tried = last.n_guesses ? ` after ${plural(last.n_guesses, "wrong guess")}` : "";
    return [{ text: "It was " }, { token: last.token }, { text: `${tried}${modelSays(row)}` }];
  }
  if (last.correct) {
    return [{ text: "Right: " }, { token: last.token }, { text: ` in ${plural(last.n_guesses, "guess")}${modelSays(row)}` }];
  }
  return [{ token: last.guess }, { text: ` is not it (guess ${last.n_guesses}). Try again, pick a button, or reveal.` }];
}

/** The header: where the game is. */
export function progressText(position, nTokens, stats) {
  const s = stats || {};
  if (position >= nTokens) return `Game over \u00b7 ${s.found ?? 0} found, ${s.revealed ?? 0} revealed`;
  return `Guess token ${position + 1} of ${nTokens} \u00b7 ${s.found ?? 0} found, ${s.revealed ?? 0} revealed, ${s.to_play ?? nTokens - position} to go`;
}

/** The totals under the results table (Shannon's bounds for the class, the model's bits). */
export function summaryText(stats) {
  const s = stats || {};
  // Shannon's lower bound needs q_1 >= q_2 >= ... (an ideal guesser); a short game seldom has it.
  const lower = s.class_bits_lower == null ? "" : `; lower bound ${bits(s.class_bits_lower)}`;
  return (
    `Class: ${bits(s.class_bits_upper)} bits/token (Shannon's upper bound${lower}) over ${s.found ?? 0} found tokens, ` +
    `${s.first_guess ?? 0} at the first guess. Model: ${bits(s.model_bits)} bits/token over the same tokens ` +
    `(its ranks give ${bits(s.model_rank_bits_upper)}).`
  );
}

/** One results row's cells after its text: guesses, class bits, model rank, model p, model bits. */
export function rowCells(row) {
  const revealed = row.n_guesses ? `revealed after ${row.n_guesses} wrong` : "revealed";
  return [
    row.revealed ? revealed : String(row.n_guesses),
    bits(row.class_bits),
    row.model_rank > 0 ? String(row.model_rank) : "?",
    formatPercent(row.model_prob),
    bits(row.model_bits),
  ];
}

// "token" is numbered from 1, as in the header and the chart ("token 8 of 19"); Python's
// game.results has the 0-based index as "position".
export const RESULT_HEADS = ["token", "text", "guesses", "class bits", "model rank", "model p", "model bits"];
