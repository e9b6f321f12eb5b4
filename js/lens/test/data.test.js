// Unit tests of the lens view's pure helpers: `node --test lens/test/` in js/.
import assert from "node:assert/strict";
import { test } from "node:test";

import { answerAlternatives, cellStyle, decodeLens, inlineAlternatives } from "../data.js";

const DTYPE = new Map([[Float32Array, "float32"], [Int32Array, "int32"], [Uint8Array, "uint8"], [Uint32Array, "uint32"]]);
/** `{dtype, shape, buffer}` of `values` as `Ctor`, the buffer at an odd offset inside a bigger one (as kernel buffers can be). */
function field(Ctor, values, shape = [values.length]) {
  const src = new Ctor(values);
  const bytes = new Uint8Array(src.byteLength + 1);
  bytes.set(new Uint8Array(src.buffer), 1);
  return { dtype: DTYPE.get(Ctor), shape, buffer: new DataView(bytes.buffer, 1, src.byteLength) };
}

// 2 layers x 3 tokens, K = 2; texts per id: entry 0 "" (none), 1 "A", 2 " b", 3 "\n"
const payload = {
  n: 3, n_layers: 2, n_blocks: 2, layers: [0, 1], k: 2, inline: true,
  texts: { blob: field(Uint8Array, new TextEncoder().encode("A b\n")), offsets: field(Uint32Array, [0, 0, 1, 3, 4]) },
  token_text: field(Uint32Array, [1, 2, 3]),
  logprobs: field(Float32Array, [NaN, -2, -0.5, NaN, -0.1, -3], [2, 3]),
  ranks: field(Int32Array, [0, 3, 1, 0, 1, 2], [2, 3]),
  entropy: field(Float32Array, [NaN, 1, 1, NaN, 1, 1], [2, 3]),
  top1_text: field(Uint32Array, [0, 1, 3, 0, 2, 1], [2, 3]),
  top1_logprobs: field(Float32Array, [-Infinity, -0.2, -0.5, -Infinity, -0.1, -0.4], [2, 3]),
  // [L, N, K]: layer 0 token 1: "A", "\n" (the actual " b" is not among them); layer 1 token 1: " b", "A"
  top_text: field(Uint32Array, [0, 0, 1, 3, 3, 1, 0, 0, 2, 1, 1, 3], [2, 3, 2]),
  top_logprobs: field(Float32Array, [-Infinity, -Infinity, -0.2, -1.9, -0.5, -2, -Infinity, -Infinity, -0.1, -3, -0.4, -3], [2, 3, 2]),
};

test("decodeLens reads misaligned buffers and the text table", () => {
  const d = decodeLens(payload);
  assert.deepEqual(d.texts, ["", "A", " b", "\n"]);
  assert.deepEqual([...d.tokenText], [1, 2, 3]);
  assert.equal(d.logprobs[4], Math.fround(-0.1));
  assert.ok(Number.isNaN(d.logprobs[0]));
  assert.equal(decodeLens(null), null);
  assert.throws(() => decodeLens({ ...payload, ranks: field(Int32Array, [1, 2]) }), /ranks has 2 values, expected 6/);
});

test("inline alternatives mark the actual token by its text entry (one per id)", () => {
  const d = decodeLens(payload);
  assert.deepEqual(inlineAlternatives(d, 0, 1).map((a) => [a.text, a.chosen]), [["A", false], ["\n", false]]);
  assert.deepEqual(inlineAlternatives(d, 1, 1).map((a) => [a.text, a.chosen]), [[" b", true], ["A", false]]);
  assert.deepEqual(inlineAlternatives(d, 0, 0), []); // padding (-inf) is skipped
});

test("a kernel answer becomes per-layer alternatives, chosen by id, K read from the array's shape", () => {
  const answer = {
    position: 1, token_id: 7, texts: [["x", "y"], ["y", "x"]],
    top_logprobs: field(Float32Array, [-0.1, -2, -0.3, -1], [2, 2]),
    top_ids: field(Int32Array, [5, 7, 7, 5], [2, 2]),
  };
  const rows = answerAlternatives(answer);
  assert.deepEqual(rows.map((r) => r.map((a) => a.chosen)), [[false, true], [true, false]]);
  assert.equal(rows[1][1].logprob, -1);
  assert.throws(() => answerAlternatives({ ...answer, top_ids: field(Int32Array, [5]) }), /top_ids has 1 values, expected 4/);
});

test("cells are coloured by viridis with readable text; unknown has no colour", () => {
  assert.equal(cellStyle(NaN), null);
  assert.deepEqual(cellStyle(0), { background: "rgb(68,1,84)", color: "#fff" });
  assert.deepEqual(cellStyle(1), { background: "rgb(253,231,37)", color: "#000" });
});

test("per-layer rows: the mean over tokens 1..n-1 skipping NaN, or one token's column", async () => {
  const { perLayer } = await import("../layers.js");
  // 2 layers x 4 tokens, row by row; column 0 is NaN (nothing predicts the first token).
  const values = new Float32Array([NaN, 1, 2, NaN, NaN, 0.5, 0.25, 0.25]);
  const means = perLayer(values, 2, 4);
  assert.equal(means[0], (1 + 2) / 2);
  assert.equal(means[1], (0.5 + 0.25 + 0.25) / 3);
  assert.deepEqual([...perLayer(values, 2, 4, 2)], [2, 0.25]);
});
