// The choices view's data in node: the payload read through the toolkit's codec (arrays built
// here by hand), the predicted option, a bar's words and the prompt's tail.
import assert from "node:assert/strict";
import { test } from "node:test";
import { texts } from "../../toolkit/test/payload.js";
import { barWords, decodeChoices, predictedOption, promptTail } from "../data.js";

const field = (dtype, values) => ({ dtype, shape: [values.length], buffer: new Uint8Array(values.buffer) });
const payload = {
  n_rows: 2, n_options: 3, length: "per_token",
  prompts: texts(["Review: fine. Sentiment:", "<b>x</b>"]), options: texts([" positive", " negative", " 🤖"]),
  probs: field("float32", Float32Array.from([0.2, 0.5, 0.3, 0.7, 0.1, 0.2])),
  logprobs: field("float32", Float32Array.from([-1.5, -0.5, -1, -0.25, -2, -1.75])),
  n_tokens: field("int32", Int32Array.from([1, 1, 2, 1, 1, 2])),
  gold: field("int32", Int32Array.from([0, -1])),
  flagged: field("uint8", Uint8Array.from([0, 0, 1, 0, 0, 0])),
};

test("the payload decodes to rows x options", () => {
  const data = decodeChoices(payload);
  assert.deepEqual(data.options, [" positive", " negative", " 🤖"]);
  assert.equal(data.prompts[1], "<b>x</b>");
  assert.ok(Math.abs(data.prob(1, 0) - 0.7) < 1e-6);
  assert.equal(data.tokens(0, 2), 2);
  assert.equal(data.flagged(0, 2), true);
  assert.equal(data.flagged(1, 2), false);
  assert.deepEqual([...data.gold], [0, -1]);
});

test("each row's own options (per_prompt): R x N texts, one row after the other", () => {
  const data = decodeChoices({ ...payload, per_prompt: true, options: texts([" a", " b", " c", " Kraków", " Łódź", " x"]) });
  assert.equal(data.perPrompt, true);
  assert.equal(data.option(0, 2), " c");
  assert.equal(data.option(1, 0), " Kraków");
  assert.equal(decodeChoices(payload).option(1, 2), " 🤖"); // shared options: the same for every row
});

test("the predicted option is the most likely one, and a bar says its numbers", () => {
  const data = decodeChoices(payload);
  assert.equal(predictedOption(data, 0), 1);
  assert.equal(predictedOption(data, 1), 0);
  const words = barWords(data, 0, 2);
  assert.equal(words.percent, "30.0%");
  assert.match(words.title, /^logprob -1\.000 over 2 tokens \(probability from the logprob per token\); a token is flagged/);
});

test("a long prompt shows its end, which the options follow", () => {
  assert.equal(promptTail("short\nprompt"), "short prompt");
  const tail = promptTail("a".repeat(100) + "END", 10);
  assert.equal(tail.length, 10);
  assert.ok(tail.startsWith("…") && tail.endsWith("END")); // one word longer than the room: its end
  // a cut falls between words: the words shown are whole words of the prompt
  const prompt = "Review: the children were humming for weeks after we had seen it. Sentiment:";
  const cut = promptTail(prompt, 40);
  assert.ok(cut.startsWith("…") && cut.length <= 40, cut);
  const words = prompt.split(" ");
  for (const w of cut.slice(1).split(" ")) assert.ok(words.includes(w), `${w} is not a whole word of the prompt`);
  assert.equal(cut, "…weeks after we had seen it. Sentiment:");
});
