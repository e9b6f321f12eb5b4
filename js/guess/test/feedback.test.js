import assert from "node:assert/strict";
import { test } from "node:test";
import { feedbackParts, progressText, rowCells, summaryText } from "../feedback.js";

const row = { token: 10, text: " over", class_guesses: 2, revealed: false, model_guesses: 1, model_prob: 0.632, model_bits: 0.662 };

test("a right guess names the token as its own part and the model's guesses beside the class's", () => {
  const parts = feedbackParts({ token: 10, guess: "over", correct: true, text: " over", n_guesses: 2 }, [row]);
  assert.deepEqual(parts[1], { token: " over" });
  assert.equal(parts[2].text, " in 2 guesses \u2014 the model needed 1 (its rank; it gave the token 63.2%).");
});

test("a wrong guess is shown as text, never markup, with its number", () => {
  const parts = feedbackParts({ token: 10, guess: "<b>x</b>", correct: false, text: null, n_guesses: 1 }, []);
  assert.deepEqual(parts[0], { token: "<b>x</b>" });
  assert.match(parts[1].text, /is not it \(guess 1\)/);
});

test("a reveal counts as more than the wrong guesses", () => {
  const parts = feedbackParts({ token: 10, guess: null, correct: false, text: " over", n_guesses: 1 }, [{ ...row, revealed: true, class_guesses: 1 }]);
  assert.equal(parts[2].text, ", revealed after 1 wrong guess (counts as more than 1) \u2014 the model needed 1 (its rank; it gave the token 63.2%).");
  const none = feedbackParts({ token: 10, guess: null, correct: false, text: " over", n_guesses: 0 }, []);
  assert.equal(none[2].text, ", revealed before any guess (counts as more than 0).");
});

test("progress, totals and cells", () => {
  assert.equal(progressText(9, 20, { found: 1, revealed: 0, to_play: 11 }), "Guess token 10 of 20 \u00b7 1 found, 0 revealed, 11 to go");
  assert.match(progressText(20, 20, { found: 3, revealed: 1 }), /^Game over/);
  const stats = { n: 4, found: 3, revealed: 1, class_score: 0.79, model_score: 0.25, class_lower: 0.5, class_upper: 1.5, model_n: 4, model_lower: 0.25, model_upper: 1, few: true };
  assert.equal(
    summaryText(stats),
    "Score over the 3 tokens found (1 revealed, not scored), the mean of log2(guesses) per token, 0 when every token takes 1 guess: " +
      "class 0.79 bits, model 0.25 bits (its ranks as guesses): the model guessed better. " +
      "Shannon's bounds on the text's entropy over the 4 tokens: too few tokens for a bound (3 found; play 20 or more).",
  );
  assert.doesNotMatch(summaryText({ ...stats, few: false }), /too few|nan/i);
  assert.match(summaryText({ ...stats, few: false }), /entropy over the 4 tokens: class 0.50 to 1.50 bits\/token, model 0.25 to 1.00 bits\/token\.$/);
  assert.match(summaryText({ ...stats, few: false, model_lower: null }), /model at most 1.00 bits\/token; a lower bound only where 1 guess/);
  // the score orders a class that found every token at once before one that needed 3 guesses each
  assert.match(summaryText({ ...stats, class_score: 0, model_score: Math.log2(3) }), /the class guessed better/);
  assert.match(summaryText({ ...stats, class_score: Math.log2(3), model_score: 0 }), /the model guessed better/);
  assert.match(summaryText({ ...stats, model_scored: 2 }), /\(its ranks as guesses, 2 of them with a rank\)/);
  assert.deepEqual(rowCells({ ...row, revealed: true, class_guesses: 2 }), ["> 2", "1", "63.2%"]);
  assert.deepEqual(rowCells({ ...row, model_guesses: 0 }), ["2", "?", "63.2%"]);
});
