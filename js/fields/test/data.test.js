import assert from "node:assert/strict";
import { test } from "node:test";
import { paletteColor } from "../../toolkit/colors.js";
import { alternativesTitle, describeRow, elseOver, groupOf, probStyle, rowOrder, tokenLabel } from "../data.js";

const row = {
  path: "age", value: "45", prob: 0.1224, logprob: -2.1006, first: 61, last: 62, at: 61, straddles: "",
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
  assert.equal(lines[0], "p 12.2% \u00b7 log p -2.101");
  assert.equal(lines[1], "the product over tokens 62\u201363 (2)");
  assert.equal(lines[2], "(the first token also holds text before the value)");
  assert.equal(lines[3], "least likely: \u201c5\u201d (token 63) 31.4%");
  assert.equal(describeRow({ ...row, first: 3, last: 3 })[1], "the product over token 4");
  assert.equal(alternativesTitle(row), "At token 62 (\u201c4\u201d) it weighed:");
  assert.ok(elseOver(row).startsWith("each p: from token 62 to the value's end"));
});

test("tool calls group their values; token text shows its whitespace", () => {
  assert.equal(groupOf(row), "");
  assert.equal(groupOf({ ...row, call: 1, function: "get_weather" }), "get_weather, call 1");
  assert.equal(tokenLabel(" New"), "\u201c\u00b7New\u201d");
});
