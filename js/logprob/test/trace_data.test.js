// Unit tests of the LogprobView's trace as read from the wire (trace_data.js, toolkit/codec.js):
// `npm test` (node's built-in runner, no dependencies).
import assert from "node:assert/strict";
import { test } from "node:test";

import { paletteColor, readableOn } from "../../toolkit/colors.js";
import { readArray, typedArray } from "../../toolkit/codec.js";
import { hexBytes } from "../../toolkit/tokens.js";
import { DTYPE, utf8Table } from "../../toolkit/test/payload.js";
import { scale, tokenStyle } from "../modes.js";
import { alternatives, decodePayload } from "../trace_data.js";

/** Bytes of a little-endian typed array, placed at `offset` inside a larger buffer (as the kernel's message parts are). */
function bufferAt(typed, offset) {
  const src = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  const whole = new Uint8Array(offset + src.byteLength + 3);
  whole.set(src, offset);
  return new DataView(whole.buffer, offset, src.byteLength);
}


/** `{dtype, shape, buffer}` as views/codec.py writes it, the buffer at an odd offset of a larger one. */
function field(typed, shape = [typed.length], offset = 3) {
  return { dtype: DTYPE.get(typed.constructor), shape, buffer: bufferAt(typed, offset) };
}

/** A payload as encode_trace writes it: a table of (id, text) entries, references r = entry + 1 (0: none). */
function tablePayload(entries, { n, k, start, ...arrays }) {
  const { blob, offsets } = utf8Table(entries.map(([, t]) => t));
  const ids = new Uint16Array(entries.map(([id]) => id + 1));
  const out = { version: 2, id: "t", n, k, prompt_len: 0, summary: {}, meta: {}, flag_notes: {}, arrays: {} };
  if (start != null) out.start = start;
  out.arrays = { text: field(blob, [blob.length], 5), text_offsets: field(offsets, [offsets.length], 1), text_ids: field(ids) };
  for (const [name, typed] of Object.entries(arrays)) {
    const twoD = ["top_text", "top_logprobs", "processed_top_logprobs"].includes(name);
    out.arrays[name] = field(typed, twoD ? [typed.length / k, k] : [typed.length]);
  }
  return out;
}

test("typedArray reads a DataView at an aligned offset without copying", () => {
  const dv = bufferAt(new Float32Array([1.5, -2.25, NaN]), 8);
  const arr = typedArray(dv, Float32Array);
  assert.equal(arr.buffer, dv.buffer);
  assert.equal(arr.byteOffset, 8);
  assert.deepEqual([...arr.slice(0, 2)], [1.5, -2.25]);
  assert.ok(Number.isNaN(arr[2]));
});

test("typedArray copies a DataView at a misaligned offset, keeping the values", () => {
  const dv = bufferAt(new Int32Array([7, -1, 123456789]), 5);
  const arr = typedArray(dv, Int32Array);
  assert.notEqual(arr.buffer, dv.buffer);
  assert.deepEqual([...arr], [7, -1, 123456789]);
});

test("typedArray accepts ArrayBuffer and typed arrays, and rejects a ragged length", () => {
  assert.deepEqual([...typedArray(new Uint32Array([1, 2]).buffer, Uint32Array)], [1, 2]);
  assert.deepEqual([...typedArray(new Uint8Array([1, 0, 0, 0]), Int32Array)], [1]);
  assert.throws(() => typedArray(new Uint8Array(6), Float32Array), /multiple of 4/);
});

test("decodePayload reads token and alternative texts and ids from the table of distinct texts", () => {
  // entries: 1 (5, "Hé"), 2 (6, "Ha"), 3 (9, " <b>"), 4 (10, "\n"); 2 tokens, K=3, token 1 has 2 alternatives.
  const payload = tablePayload([[5, "Hé"], [6, "Ha"], [9, " <b>"], [10, "\n"]], {
    n: 2,
    k: 3,
    token_text: new Uint16Array([1, 3]),
    top_text: new Uint16Array([1, 2, 3, 3, 4, 0]),
    logprobs: new Float32Array([NaN, -0.5]),
    ranks: new Int32Array([0, 1]),
    top_logprobs: new Float32Array([-0.1, -2.4, -3, -0.5, -1.5, -Infinity]),
  });
  const d = decodePayload(payload);
  assert.deepEqual(d.tokens, ["Hé", " <b>"]);
  assert.deepEqual(d.shown, d.tokens, "no split characters: the text shows the tokens");
  assert.deepEqual([...d.tokenIds], [5, 9]);
  assert.equal(d.altText(0, 1), "Ha");
  assert.equal(d.altId(0, 2), 9);
  assert.equal(d.altText(1, 1), "\n");
  assert.equal(d.altText(1, 2), "");
  assert.equal(d.altId(1, 2), -1);
  assert.deepEqual([d.topCount(0), d.topCount(1)], [3, 2]);
  assert.ok(Number.isNaN(d.entropy[0]), "a missing field reads as unknown");
  assert.equal(d.processedLogprobs, null);
  assert.equal(d.splitOf(1), null);
  const alts = alternatives(d, 1);
  assert.equal(alts.chosenIndex, 0);
  assert.equal(alts.extra, null);
  assert.deepEqual(alts.rows.map((r) => [r.text, r.id]), [[" <b>", 9], ["\n", 10]]);
});

test("readArray reads any dtype from the field itself, and rejects a wrong length or an unknown dtype", () => {
  assert.deepEqual([...readArray(field(new Uint32Array([1, 70000])))], [1, 70000]);
  assert.deepEqual([...readArray(field(new Int32Array([-5, 7]), [1, 2]))], [-5, 7]);
  assert.throws(() => readArray(field(new Uint32Array([1, 2]), [3]), "top_text"), /top_text holds 2 values; its shape \[3\] says 3/);
  assert.throws(() => readArray({ dtype: "float64", shape: [1], buffer: new Uint8Array(8) }, "logprobs"), /dtype "float64", not one of/);
  const base = { n: 1, k: 1, logprobs: new Float32Array([-1]), top_logprobs: new Float32Array([-1]), top_text: new Uint32Array([1]) };
  const d = decodePayload(tablePayload([[-1, "x"]], { ...base, token_text: new Uint32Array([1]) }));
  assert.deepEqual([d.tokens, d.altText(0, 0), d.topCount(0)], [["x"], "x", 1]);
  assert.throws(() => decodePayload(tablePayload([[-1, "x"]], { ...base, token_text: new Uint32Array([1, 1]) })), /token_text has 2 values, expected 1/);
});

test("a character split across tokens is shown whole on its last piece; each piece keeps its bytes", () => {
  // " 🤖" as the model's tokens: " \xf0\x9f", "\xa4", "\x96"; then "!".
  const entries = [[1, " \\xf0\\x9f"], [2, "\\xa4"], [3, "\\x96"], [4, "!"], [-1, " "], [-1, ""], [-1, "🤖"]];
  const bytes = new Uint8Array([0x20, 0xf0, 0x9f, 0xa4, 0x96]);
  const d = decodePayload(tablePayload(entries, {
    n: 4,
    k: 0,
    token_text: new Uint16Array([1, 2, 3, 4]),
    logprobs: new Float32Array([-1, -2, -3, -4]),
    split_starts: new Int32Array([0]),
    split_ends: new Int32Array([3]),
    split_text: new Uint16Array([5, 6, 7]),
    split_bytes: bytes,
    split_byte_offsets: new Uint32Array([0, 3, 4, 5]),
  }));
  assert.deepEqual(d.tokens, [" \\xf0\\x9f", "\\xa4", "\\x96", "!"]);
  assert.deepEqual(d.shown, [" ", "", "🤖", "!"]);
  const first = d.splitOf(0);
  assert.deepEqual([first.start, first.end, first.piece, first.text, hexBytes(first.bytes)], [0, 3, 0, " 🤖", "20 F0 9F"]);
  assert.equal(hexBytes(d.splitOf(1).bytes), "A4");
  assert.equal(d.splitOf(2).piece, 2);
  assert.equal(d.splitOf(3), null);
});

test("alternatives adds the chosen token as an extra row when it is not in the top-K", () => {
  const d = decodePayload(
    tablePayload([[-1, "x"], [-1, "a"], [-1, "b"]], {
      n: 1,
      k: 2,
      logprobs: new Float32Array([-4]),
      ranks: new Int32Array([17]),
      token_text: new Uint16Array([1]),
      top_logprobs: new Float32Array([-0.2, -1.9]),
      top_text: new Uint16Array([2, 3]),
    }),
  );
  const alts = alternatives(d, 0);
  assert.equal(alts.chosenIndex, -1);
  assert.equal(alts.extra.text, "x");
  assert.equal(alts.extra.rank, 17);
  assert.ok(alts.rows.every((r) => !r.chosen));
});

/** Tokens "a".."e" with K=1 (the alternative: the token itself), from `from` to `to`, as one payload or an append. */
function letters(from, to, start) {
  const names = "abcdefghij".slice(from, to).split("");
  const entries = names.map((c, j) => [from + j, c]);
  const refs = new Uint16Array(names.map((_, j) => j + 1));
  return tablePayload(entries, {
    n: to,
    k: 1,
    start,
    token_text: refs,
    top_text: refs,
    logprobs: Float32Array.from(names, (_, j) => -(from + j)),
    top_logprobs: Float32Array.from(names, (_, j) => -(from + j)),
    ranks: Int32Array.from(names, () => 1),
  });
}

test("an append keeps the tokens before its start and adds its own, as the whole trace would read", () => {
  const whole = decodePayload(letters(0, 6));
  const grown = decodePayload(letters(0, 2));
  grown.apply(letters(2, 4, 2));
  grown.apply(letters(3, 6, 3)); // resends token 3 (as a completed split character would)
  assert.equal(grown.n, 6);
  assert.deepEqual(grown.tokens, whole.tokens);
  assert.deepEqual([...grown.tokenIds], [...whole.tokenIds]);
  assert.deepEqual([...grown.logprobs], [...whole.logprobs]);
  assert.deepEqual([...grown.topLogprobs], [...whole.topLogprobs]);
  for (let i = 0; i < 6; i++) assert.deepEqual([grown.altText(i, 0), grown.altId(i, 0), grown.topCount(i)], [whole.altText(i, 0), whole.altId(i, 0), 1]);
  assert.throws(() => grown.apply(letters(8, 9, 8)), /does not follow the 6 tokens/);
  const wider = letters(6, 7, 6);
  wider.k = 2;
  assert.throws(() => grown.apply(wider), /K=2/);
});

test("references of an append past 65,535 table entries do not wrap around", () => {
  const many = 70000;
  const names = Array.from({ length: many }, (_, i) => `t${i}`);
  const refs = Uint32Array.from(names, (_, i) => i + 1);
  const d = decodePayload(tablePayload(names.map((t, i) => [i, t]), { n: many, k: 0, token_text: refs }));
  d.apply(tablePayload([[7, "x"]], { n: many + 1, k: 0, start: many, token_text: new Uint16Array([1]) }));
  assert.equal(d.tokens[many], "x");
  assert.equal(d.tokenIds[many], 7);
  assert.equal(d.tokens[many - 1], `t${many - 1}`);
});

test("viridis runs from dark purple to yellow; unknown logprobs get no colour", () => {
  assert.deepEqual(paletteColor("viridis", 0), [68, 1, 84]);
  assert.deepEqual(paletteColor("viridis", 1), [253, 231, 37]);
  assert.deepEqual(paletteColor("viridis", -3), paletteColor("viridis", 0));
  const sc = scale("probability");
  const data = { logprobs: new Float32Array([NaN, 0]) };
  assert.equal(tokenStyle(sc, data, 0), null);
  assert.equal(tokenStyle(sc, data, 1).background, "rgb(253,231,37)");
  assert.equal(readableOn(paletteColor("viridis", 0)), "#fff");
  assert.equal(readableOn(paletteColor("viridis", 1)), "#000");
});

test("the header leaves out a number the source did not give, rather than showing '?'", async () => {
  const { headerText } = await import("../header.js");
  const data = { n: 6, promptLen: 1, summary: { perplexity: 3.456, mean_logprob: -1.2401, mean_entropy: null }, meta: { source: "vllm" } };
  assert.equal(headerText(data), "6 tokens (1 prompt, 5 completion) \u00b7 perplexity 3.46 \u00b7 mean logprob -1.240 \u00b7 vllm");
  assert.equal(headerText({ n: 2, promptLen: 0, summary: {}, meta: {} }), "2 tokens (0 prompt, 2 completion)");
  // with the logprobs: over which tokens (from 1) the perplexity is, the first one's being unknown
  const scored = { ...data, logprobs: new Float32Array([NaN, -1, -2, -1, -1, -1.2]) };
  assert.ok(headerText(scored).startsWith("6 tokens (1 prompt, 5 completion) \u00b7 perplexity 3.46 over tokens 2\u20136 \u00b7"));
});
