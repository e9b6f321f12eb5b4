// Unit tests of the lens grid's column widths: `node --test lens/test/` in js/.
import assert from "node:assert/strict";
import { test } from "node:test";

import { columnAt, columnLefts, MIN_COL_WIDTH } from "../columns.js";

// 2 layers x 3 tokens; texts per id: 0 "", 1 "A", 2 " a very long guess", 3 "tok"
const d = {
  n: 3, L: 2,
  texts: ["", "A", " a very long guess", "tok"],
  tokenText: [3, 1, 3],
  top1Text: [2, 2, 1, 2, 1, 3], // row by row: layer 0 then layer 1 (index r * n + i)
};
const perChar = (text, role) => [...text].length * (role === "token" ? 7 : 6);

test("a column is as wide as its longest text, and never narrower than the minimum", () => {
  const lefts = columnLefts(d, perChar);
  // column 0: no prediction, only the token "tok" (21 px) -> the minimum
  assert.equal(lefts[1] - lefts[0], MIN_COL_WIDTH);
  // column 1: layer 0's guess "·a very long guess" (18 chars, 108 px) + the cell's box
  assert.equal(lefts[2] - lefts[1], 108 + 6);
  // column 2: "A" and "tok" -> the minimum
  assert.equal(lefts[3] - lefts[2], MIN_COL_WIDTH);
});

test("each text entry is measured once per role", () => {
  const seen = [];
  columnLefts(d, (text, role) => (seen.push(`${role}:${text}`), 10));
  assert.equal(seen.length, new Set(seen).size);
});

test("columnAt finds the column under an x, clamped at both ends", () => {
  const lefts = Float64Array.from([0, 40, 154, 194]);
  assert.deepEqual([-5, 0, 39.9, 40, 153, 154, 193, 500].map((x) => columnAt(lefts, x)), [0, 0, 0, 1, 1, 2, 2, 2]);
});
