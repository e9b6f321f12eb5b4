// Unit tests of the lens view's pure helpers: `node --test lens/test/` in js/.
import assert from "node:assert/strict";
import { test } from "node:test";

import { answerAlternatives, color, decodeLens, inlineAlternatives, percent, typed, visible } from "../data.js";

/** Little-endian bytes of `values` as `Ctor`, placed at an odd offset inside a bigger buffer (as kernel buffers can be). */
function misaligned(Ctor, values) {
  const src = new Ctor(values);
  const bytes = new Uint8Array(src.byteLength + 1);
  bytes.set(new Uint8Array(src.buffer), 1);
  return new DataView(bytes.buffer, 1, src.byteLength);
}

// 2 layers x 3 tokens, K = 2; texts per id: entry 0 "" (none), 1 "A", 2 " b", 3 "\n"
const enc = new TextEncoder();
const payload = {
  n: 3, n_layers: 2, n_blocks: 2, layers: [0, 1], k: 2, inline: true,
  text: enc.encode("A b\n"),
  text_offsets: new Uint32Array([0, 0, 1, 3, 4]),
  token_text: misaligned(Uint32Array, [1, 2, 3]),
  logprobs: misaligned(Float32Array, [NaN, -2, -0.5, NaN, -0.1, -3]),
  ranks: new Int32Array([0, 3, 1, 0, 1, 2]),
  entropy: new Float32Array([NaN, 1, 1, NaN, 1, 1]),
  top1_text: new Uint32Array([0, 1, 3, 0, 2, 1]),
  top1_logprobs: new Float32Array([-Infinity, -0.2, -0.5, -Infinity, -0.1, -0.4]),
  // [L, N, K]: layer 0 token 1: "A", "\n" (the actual " b" is not among them); layer 1 token 2: "A", "\n"
  top_text: new Uint32Array([0, 0, 1, 3, 3, 1, 0, 0, 2, 1, 1, 3]),
  top_logprobs: new Float32Array([-Infinity, -Infinity, -0.2, -1.9, -0.5, -2, -Infinity, -Infinity, -0.1, -3, -0.4, -3]),
};

test("decodeLens reads misaligned buffers and the text table", () => {
  const d = decodeLens(payload);
  assert.deepEqual(d.texts, ["", "A", " b", "\n"]);
  assert.deepEqual([...d.tokenText], [1, 2, 3]);
  assert.equal(d.logprobs[4], Math.fround(-0.1));
  assert.ok(Number.isNaN(d.logprobs[0]));
  assert.equal(decodeLens(null), null);
});

test("inline alternatives mark the actual token by its text entry (one per id)", () => {
  const d = decodeLens(payload);
  assert.deepEqual(inlineAlternatives(d, 0, 1).map((a) => [a.text, a.chosen]), [["A", false], ["\n", false]]);
  assert.deepEqual(inlineAlternatives(d, 1, 1).map((a) => [a.text, a.chosen]), [[" b", true], ["A", false]]);
  assert.deepEqual(inlineAlternatives(d, 0, 0), []); // padding (-inf) is skipped
});

test("a kernel answer becomes per-layer alternatives, chosen by id", () => {
  const msg = { k: 2, token_id: 7, texts: [["x", "y"], ["y", "x"]] };
  const rows = answerAlternatives(msg, [misaligned(Float32Array, [-0.1, -2, -0.3, -1]), new Int32Array([5, 7, 7, 5])]);
  assert.deepEqual(rows.map((r) => r.map((a) => a.chosen)), [[false, true], [true, false]]);
  assert.equal(rows[1][1].logprob, -1);
});

test("formats and marks", () => {
  assert.equal(percent(Math.log(0.4129)), "41.3%");
  assert.equal(percent(-20), "<0.1%");
  assert.equal(percent(-Infinity), "0%");
  assert.equal(percent(NaN), "?");
  assert.equal(visible(" "), "␣");
  assert.equal(visible(" the"), " the");
  assert.equal(visible("a\nb"), "a↵b");
  assert.equal(color(NaN), null);
  assert.equal(color(0), "rgb(68, 1, 84)");
  assert.equal(color(1), "rgb(253, 231, 37)");
  assert.throws(() => typed(new Uint8Array(3), Float32Array), RangeError);
});
