// Unit tests of the compare view's pure helpers (node --test compare/).
import assert from "node:assert/strict";
import { test } from "node:test";

import { field, texts } from "../../toolkit/test/payload.js";
import { decodeComparison, divergingColor } from "../decode.js";

const u32 = (xs) => field(new Uint32Array(xs));
const i32 = (xs) => field(new Int32Array(xs));
const f32 = (xs) => field(new Float32Array(xs));

const payload = () => ({
  n_rows: 2, n_spans: 2,
  span_starts: u32([0, 7]), span_ends: u32([7, 11]), span_logprobs: { ...f32([NaN, -1, NaN, -2]), shape: [2, 2] },
  span_texts: texts(["The cat", " sat"]),
  rows: [
    { n: 4, tokens: texts(["The", " cat", " sat", "!"]), logprobs: f32([NaN, -0.5, -1, -3]), ranks: i32([0, 1, 2, 1]),
      span_of: i32([0, 0, 1, -1]), alt_start: u32([0, 0, 0, 2, 2]), alt_texts: texts([" sat", " lay"]),
      alt_logprobs: f32([-0.2, -1]), split_tokens: i32([]), split_texts: texts([]) },
    { n: 4, tokens: texts(["The c", "at", " sat", "?"]), logprobs: f32([NaN, -1, -2, -4]), ranks: i32([0, 1, 1, 1]),
      span_of: i32([0, 0, 1, -1]), alt_start: u32([0, 0, 0, 0, 0]), alt_texts: texts([]), alt_logprobs: f32([]),
      split_tokens: i32([0]), split_texts: texts(["The c"]) },
  ],
});

test("decodes spans, rows, tails and alternatives from self-describing arrays", () => {
  const d = decodeComparison(payload());
  assert.deepEqual(d.spanTexts, ["The cat", " sat"]);
  assert.deepEqual([...d.rows[0].spanFirst], [0, 2]);
  assert.deepEqual([...d.rows[0].spanEnd], [2, 3]);
  assert.equal(d.rows[0].tailFrom, 3);
  assert.deepEqual(d.rows[0].altTexts.slice(d.rows[0].altStart[2], d.rows[0].altStart[3]), [" sat", " lay"]);
  assert.deepEqual(d.rows[1].tokens, ["The c", "at", " sat", "?"]);
  assert.deepEqual([...d.rows[1].split], [1, 0, 0, 0]);
  assert.ok(Number.isNaN(d.spanLogprobs[0]));
  assert.equal(d.spanLogprobs[3], -2);
});

test("an array of the wrong length or dtype is an error that names it", () => {
  const short = payload();
  short.span_starts = u32([1, 2, 3]);
  assert.throws(() => decodeComparison(short), /span_starts has 3 values, expected 2/);
  const ragged = payload();
  ragged.rows[0].logprobs = { dtype: "float32", shape: [4], buffer: new DataView(new ArrayBuffer(6)) };
  assert.throws(() => decodeComparison(ragged), /multiple of 4/);
  const fewer = payload();
  fewer.rows[1].tokens = texts(["x"]);
  assert.throws(() => decodeComparison(fewer), /1 token texts, expected 4/);
});

test("the diverging scale: purple below 0, white at 0, orange above, unknown null", () => {
  const [r0, g0, b0] = divergingColor(-10, 4);
  const mid = divergingColor(0, 4);
  const [r1, , b1] = divergingColor(10, 4);
  assert.ok(b0 > r0 && b0 > g0);
  assert.deepEqual(mid, [247, 247, 247]);
  assert.ok(r1 > b1);
  assert.equal(divergingColor(NaN, 4), null);
});
