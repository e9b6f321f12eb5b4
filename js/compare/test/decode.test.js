// Unit tests of the compare view's pure helpers (node --test compare/).
import assert from "node:assert/strict";
import { test } from "node:test";

import { arrayOf, decodeComparison, divergingColor, percent, visible } from "../decode.js";

const enc = new TextEncoder();
const u32 = (xs) => new DataView(new Uint32Array(xs).buffer);
const i32 = (xs) => new DataView(new Int32Array(xs).buffer);
const f32 = (xs) => new DataView(new Float32Array(xs).buffer);
function blob(texts) {
  const parts = texts.map((t) => enc.encode(t));
  const offsets = [0];
  for (const p of parts) offsets.push(offsets[offsets.length - 1] + p.length);
  const all = new Uint8Array(offsets[offsets.length - 1]);
  parts.forEach((p, i) => all.set(p, offsets[i]));
  return [new DataView(all.buffer), u32(offsets)];
}

test("decodes spans, rows, tails and alternatives", () => {
  const [spanText, spanOffsets] = blob(["The cat", " sat"]);
  const [textA, offA] = blob(["The", " cat", " sat", "!"]);
  const [altA, altOffA] = blob([" sat", " lay"]);
  const [textB, offB] = blob(["The c", "at", " sat", "?"]);
  const [altB, altOffB] = blob([]);
  const d = decodeComparison({
    n_rows: 2, n_spans: 2,
    span_starts: u32([0, 7]), span_ends: u32([7, 11]), span_logprobs: f32([NaN, -1, NaN, -2]),
    span_text: spanText, span_text_offsets: spanOffsets,
    rows: [
      { n: 4, text: textA, text_offsets: offA, logprobs: f32([NaN, -0.5, -1, -3]), ranks: i32([0, 1, 2, 1]),
        span_of: i32([0, 0, 1, -1]), alt_start: u32([0, 0, 0, 2, 2]), alt_text: altA, alt_offsets: altOffA,
        alt_logprobs: f32([-0.2, -1]) },
      { n: 4, text: textB, text_offsets: offB, logprobs: f32([NaN, -1, -2, -4]), ranks: i32([0, 1, 1, 1]),
        span_of: i32([0, 0, 1, -1]), alt_start: u32([0, 0, 0, 0, 0]), alt_text: altB, alt_offsets: altOffB,
        alt_logprobs: f32([]) },
    ],
  });
  assert.deepEqual(d.spanTexts, ["The cat", " sat"]);
  assert.deepEqual([...d.rows[0].spanFirst], [0, 2]);
  assert.deepEqual([...d.rows[0].spanEnd], [2, 3]);
  assert.equal(d.rows[0].tailFrom, 3);
  assert.deepEqual(d.rows[0].altTexts.slice(d.rows[0].altStart[2], d.rows[0].altStart[3]), [" sat", " lay"]);
  assert.deepEqual(d.rows[1].tokens, ["The c", "at", " sat", "?"]);
  assert.ok(Number.isNaN(d.spanLogprobs[0]));
  assert.equal(d.spanLogprobs[3], -2);
});

test("a buffer of the wrong length is an error that names it", () => {
  assert.throws(() => arrayOf(new DataView(new ArrayBuffer(6)), Float32Array, "logprobs"), /logprobs/);
  assert.throws(() => arrayOf(u32([1, 2]), Uint32Array, "span_starts", 3), /span_starts: expected 3/);
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

test("formats", () => {
  assert.equal(percent(Math.log(0.5)), "50.0%");
  assert.equal(percent(-20), "<0.1%");
  assert.equal(percent(NaN), "?");
  assert.equal(visible(" a\tb\n"), "\u2423a\u21e5b\u21b5");
});
