// The guessing game's words: the feedback line after a guess, the results table's cells, the
// totals. Pure functions over the widget's traits (no DOM), so `npm test` runs them in node.
// Token text is returned as its own part ({ token }) for the view to insert as text, never markup.
//
// Class and model are counted the same way: the class's guesses at a token beside the model's
// (its rank of the token: a model guessing in order of probability needs that many). A revealed
// token took more than the guesses made there ("> k"). Tokens are numbered from 1, as the header,
// the chart and Python's game.results number them.

import { formatFixed, formatPercent } from "../toolkit/format.js";

const FEW_TOKENS = 20; // (guess_scoring.FEW_TOKENS) under this many found tokens the bounds mean little
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "es"}`;

/** The model's guesses at a played row: its rank of the token ("?" when the source gave none). */
export const modelGuesses = (row) => (row.model_guesses > 0 ? String(row.model_guesses) : "?");

/** The class's guesses at a played row: "3", or "> 2" when it was revealed after 2 wrong guesses. */
export const classGuesses = (row) => (row.revealed ? `> ${row.class_guesses}` : String(row.class_guesses));

/** The model beside the class: "the model needed 1 (its rank; it gave the token 63.2%)". */
function modelSays(row) {
  if (!row) return ".";
  const needed = row.model_guesses > 0 ? `the model needed ${row.model_guesses}` : "the model's rank is not known";
  return ` \u2014 ${needed} (its rank; it gave the token ${formatPercent(row.model_prob)}).`;
}

/**
 * The feedback line as parts: `{ text }` and `{ token }` (token text, shown as a chip).
 * `last`: the last Outcome (trait: token number, guess, correct, text, n_guesses); `rows`: the
 * played rows, to find the model's numbers.
 */
export function feedbackParts(last, rows) {
  if (!last) return [{ text: "Type the next token and press Enter, or pick a button." }];
  const row = (rows || []).find((r) => r.token === last.token);
  if (last.guess == null) {
    const when = last.n_guesses ? `after ${plural(last.n_guesses, "wrong guess")}` : "before any guess";
    return [{ text: "It was " }, { token: last.text }, { text: `, revealed ${when} (counts as more than ${last.n_guesses})${modelSays(row)}` }];
  }
  if (last.correct) {
    return [{ text: "Right: " }, { token: last.text }, { text: ` in ${plural(last.n_guesses, "guess")}${modelSays(row)}` }];
  }
  return [{ token: last.guess }, { text: ` is not it (guess ${last.n_guesses}). Try again, pick a button, or reveal.` }];
}

/** The header: where the game is. */
export function progressText(position, nTokens, stats) {
  const s = stats || {};
  if (position >= nTokens) return `Game over \u00b7 ${s.found ?? 0} found, ${s.revealed ?? 0} revealed`;
  return `Guess token ${position + 1} of ${nTokens} \u00b7 ${s.found ?? 0} found, ${s.revealed ?? 0} revealed, ${s.to_play ?? nTokens - position} to go`;
}

const known = (x) => x != null && Number.isFinite(x);
function bounds(lower, upper) {
  if (!known(upper)) return "? bits/token";
  return known(lower) ? `${formatFixed(lower, 2)} to ${formatFixed(upper, 2)} bits/token` : `at most ${formatFixed(upper, 2)} bits/token`;
}

/** Who guessed better, by the score (fewer guesses, fewer bits). */
function verdict(s) {
  if (!known(s.class_score) || !known(s.model_score)) return "";
  if (s.class_score === s.model_score) return ": as well as each other";
  return s.class_score < s.model_score ? ": the class guessed better" : ": the model guessed better";
}

/**
 * The totals under the results table (the words of Python's guess chart summary_line): the game's
 * score for the class and the model, the mean of log2(guesses) per token (fewer guesses, less), and
 * who did better; then Shannon's bounds on the text's entropy, named as such, and only with enough
 * found tokens for a bound (under 20: "too few tokens for a bound").
 */
export function summaryText(stats) {
  const s = stats || {};
  const n = s.n ?? 0;
  const bits = (x) => (known(x) ? `${formatFixed(x, 2)} bits` : "? bits");
  const found = s.found ?? 0;
  const scored = s.model_scored ?? found;
  const ranks = scored === found ? "" : `, ${scored} of them with a rank`;
  let line =
    `Score over the ${found} tokens found (${s.revealed ?? 0} revealed, not scored), the mean of log2(guesses) per token, ` +
    `0 when every token takes 1 guess: class ${bits(s.class_score)}, model ${bits(s.model_score)} (its ranks as guesses${ranks})${verdict(s)}. ` +
    `Shannon's bounds on the text's entropy over the ${n} tokens: `;
  if (s.few) return `${line}too few tokens for a bound (${s.found ?? 0} found; play ${FEW_TOKENS} or more).`;
  line += `class ${bounds(s.class_lower, s.class_upper)}, model ${bounds(s.model_lower, s.model_upper)}`;
  // Shannon's lower bound is an ideal guesser's: right most often at the first guess, then the second...
  if (!known(s.class_lower) || !known(s.model_lower)) line += "; a lower bound only where 1 guess was the most common, then 2, and so on";
  return `${line}.`;
}

/** One results row's cells after its number and text: class guesses, model guesses, model p. */
export function rowCells(row) {
  return [classGuesses(row), modelGuesses(row), formatPercent(row.model_prob)];
}

export const RESULT_HEADS = ["token", "text", "class guesses", "model guesses (rank)", "model p"];
