import assert from "node:assert/strict";
import { test } from "node:test";
import { feedbackParts, progressText, rowCells, summaryText } from "../feedback.js";

const row = { position: 9, token: " over", n_guesses: 2, revealed: false, model_rank: 1, model_prob: 0.632, class_bits: 1, model_bits: 0.662 };

test("a right guess names the token as its own part and the model's numbers", () => {
  const parts = feedbackParts({ position: 9, guess: "over", correct: true, token: " over", n_guesses: 2 }, [row]);
  assert.deepEqual(parts[1], { token: " over" });
  assert.equal(parts[2].text, " in 2 guesses \u2014 the model gave it 63.2% (rank 1).");
});

test("a wrong guess is shown as text, never markup, with its number", () => {
  const parts = feedbackParts({ position: 9, guess: "<b>x</b>", correct: false, token: null, n_guesses: 1 }, []);
  assert.deepEqual(parts[0], { token: "<b>x</b>" });
  assert.match(parts[1].text, /is not it \(guess 1\)/);
});

test("a reveal says how many guesses were wrong", () => {
  const parts = feedbackParts({ position: 9, guess: null, correct: false, token: " over", n_guesses: 1 }, [row]);
  assert.equal(parts[2].text, " after 1 wrong guess \u2014 the model gave it 63.2% (rank 1).");
});

test("progress, totals and cells", () => {
  assert.equal(progressText(9, 20, { found: 1, revealed: 0, to_play: 11 }), "Guess token 10 of 20 \u00b7 1 found, 0 revealed, 11 to go");
  assert.match(progressText(20, 20, { found: 3, revealed: 1 }), /^Game over/);
  assert.match(summaryText({ class_bits_upper: 1.5, class_bits_lower: 0.5, found: 3, first_guess: 2, model_bits: 2.25 }), /Class: 1.50 bits\/token \(Shannon's upper bound; lower bound 0.50\)/);
  assert.match(summaryText({ class_bits_upper: 1.5, class_bits_lower: null, found: 3 }), /\(Shannon's upper bound\) over 3/);
  assert.deepEqual(rowCells({ ...row, class_bits: null, revealed: true }), ["revealed after 2 wrong", "?", "1", "63.2%", "0.66"]);
});
