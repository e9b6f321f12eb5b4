import assert from "node:assert/strict";
import { test } from "node:test";
import { paletteColor } from "../../toolkit/colors.js";
import {
  alternativesTitle, describeRow, elseOver, groupOf, probStyle, probTitle, rowOrder, tokenLabel,
} from "../data.js";

const row = {
  path: "age", value: "45", prob: 0.1224, logprob: -2.1006, prob_with_quote: 0.1224, logprob_with_quote: -2.1006, first: 61, last: 62, at: 61, straddles: "",
  weakest: 62, weakest_token: "5", weakest_prob: 0.3135, at_token: "4", call: null, function: null,
};

test("rows are listed as written, or least confident first from the kernel's order", () => {
  const payload = { rows: [row, row, row], order: [2, 0, 1] };
  assert.deepEqual(rowOrder(payload, "document"), [0, 1, 2]);
  assert.deepEqual(rowOrder(payload, "confidence"), [2, 0, 1]);
  assert.deepEqual(rowOrder({ rows: [row], order: [] }, "confidence"), [0]); // a wrong order: as written
});

test("a value is coloured on the LogprobView's probability scale, reversed on a dark background", () => {
  const c = paletteColor("viridis", 0.1224);
  assert.equal(probStyle("viridis", 0.1224).background, `rgb(${c.join(",")})`);
  const d = paletteColor("viridis", 1 - 0.1224);
  assert.equal(probStyle("viridis", 0.1224, true).background, `rgb(${d.join(",")})`);
  assert.equal(probStyle("viridis", null), null);
  assert.equal(probStyle("viridis", NaN), null);
});

test("the detail says over which tokens p is (counted from 1, as the LogprobView does), the edges, the weakest", () => {
  const lines = describeRow({ ...row, straddles: "start" });
  assert.equal(lines[0], "p\u00a012.2% \u00b7 log\u00a0p\u00a0-2.101");
  assert.equal(lines[1], "over tokens 62\u201363 (2), from its first character to its end");
  assert.equal(lines[2], "(the first token also holds text before the value)");
  assert.equal(lines[3], "least likely: \u201c5\u201d (token 63) 31.4%");
  assert.equal(describeRow({ ...row, first: 3, at: 3, last: 3 })[1],
    "over token 4, from its first character to its end");
  assert.equal(alternativesTitle(row), "At token 62 (\u201c4\u201d) it weighed:");
  assert.ok(elseOver(row).startsWith("each p: from token 62 to the value's end"));
});

test("tool calls group their values; token text shows its whitespace", () => {
  assert.equal(groupOf(row), "");
  assert.equal(groupOf({ ...row, call: 1, function: "get_weather" }), "get_weather, call 1");
  assert.equal(tokenLabel(" New"), "\u201c\u00b7New\u201d");
});

test("a string whose opening quote is a token of its own: p is the value's, with the quote beside it", () => {
  // tokens 60 ' "', 61 'Maria', 62 ' Lopez', 63 '",' (0-based): p over 61..63, with the quote over 60..63
  const name = { ...row, path: "name", value: '"Maria Lopez"', first: 60, at: 61, last: 63, straddles: "both",
    prob: 0.648, logprob: Math.log(0.648), prob_with_quote: 0.55, logprob_with_quote: Math.log(0.55),
    weakest: 62, weakest_token: " Lopez", weakest_prob: 0.7 };
  const lines = describeRow(name);
  assert.equal(lines[0], "p\u00a064.8% \u00b7 log\u00a0p\u00a0-0.434");
  assert.equal(lines[1], "over tokens 62\u201364 (3), from its first character to its end");
  assert.equal(lines[2], "with its opening quote (token 61): p\u00a055.0%");
  assert.equal(lines[3], "(the last token also holds text after the value)"); // the text before is in the quote's token
  assert.equal(probTitle(name), "p of the value: the product over tokens 62\u201364 (3), from its first character "
    + "to its end; with its opening quote (token 61): 55.0%");
  assert.equal(probTitle(row), "p of the value: the product over tokens 62\u201363 (2), from its first character to its end");
});
