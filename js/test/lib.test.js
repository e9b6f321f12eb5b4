// Unit tests of the pure helpers: `npm test` (node's built-in runner, no dependencies).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  alternatives,
  decodePayload,
  formatLogprob,
  formatPercent,
  hexBytes,
  segments,
  typedArray,
} from "../lib.js";
import { paletteColor, readableOn, scale, tokenStyle } from "../colors.js";

/** Bytes of a little-endian typed array, placed at `offset` inside a larger buffer (as the kernel's message parts are). */
function bufferAt(typed, offset) {
  const src = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  const whole = new Uint8Array(offset + src.byteLength + 3);
  whole.set(src, offset);
  return new DataView(whole.buffer, offset, src.byteLength);
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

/** A payload as encode_trace writes it: a table of (id, text) entries, references r = entry + 1 (0: none). */
function tablePayload(entries, extra) {
  const enc = new TextEncoder();
  const parts = entries.map(([, t]) => enc.encode(t));
  const offsets = new Uint32Array(parts.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i] + p.length));
  const blob = new Uint8Array(offsets[parts.length]);
  parts.forEach((p, i) => blob.set(p, offsets[i]));
  const ids = new Uint16Array(entries.map(([id]) => id + 1));
  return { dtypes: { refs: "u2", text_ids: "u2" }, text: bufferAt(blob, 3), text_offsets: bufferAt(offsets, 1), text_ids: bufferAt(ids, 5), ...extra };
}

test("decodePayload reads token and alternative texts and ids from the table of distinct texts", () => {
  // entries: 1 (5, "Hé"), 2 (6, "Ha"), 3 (9, " <b>"), 4 (10, "\n"); 2 tokens, K=3, token 1 has 2 alternatives.
  const payload = tablePayload([[5, "Hé"], [6, "Ha"], [9, " <b>"], [10, "\n"]], {
    n: 2,
    k: 3,
    token_text: bufferAt(new Uint16Array([1, 3]), 3),
    top_text: bufferAt(new Uint16Array([1, 2, 3, 3, 4, 0]), 1),
    logprobs: bufferAt(new Float32Array([NaN, -0.5]), 4),
    ranks: bufferAt(new Int32Array([0, 1]), 4),
    top_logprobs: bufferAt(new Float32Array([-0.1, -2.4, -3, -0.5, -1.5, -Infinity]), 4),
  });
  const d = decodePayload(payload);
  assert.deepEqual(d.tokens, ["Hé", " <b>"]);
  assert.equal(d.shown, d.tokens, "no split characters: the text shows the tokens");
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

test("decodePayload reads uint32 references and rejects a field of the wrong length", () => {
  const base = { n: 1, k: 1, dtypes: { refs: "u4", text_ids: "u2", text_offsets: "u2" }, logprobs: new Float32Array([-1]), top_logprobs: new Float32Array([-1]) };
  const d = decodePayload(tablePayload([[-1, "x"]], { ...base, text_offsets: new Uint16Array([0, 1]), token_text: new Uint32Array([1]), top_text: new Uint32Array([1]) }));
  assert.deepEqual([d.tokens, d.altText(0, 0), d.topCount(0)], [["x"], "x", 1]);
  assert.throws(() => decodePayload(tablePayload([[-1, "x"]], { ...base, text_offsets: new Uint16Array([0, 1]), token_text: new Uint32Array([1, 1]), top_text: new Uint32Array([1]) })), /token_text has 2 values, expected 1/);
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
    split_bytes: bufferAt(bytes, 1),
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

test("percentages and logprobs are formatted as the chart shows them", () => {
  assert.equal(formatPercent(Math.exp(-0.884)), "41.3%");
  assert.equal(formatPercent(1), "100.0%");
  assert.equal(formatPercent(0.00042), "<0.1%");
  assert.equal(formatPercent(0.0005), "0.1%");
  assert.equal(formatPercent(0), "0%");
  assert.equal(formatLogprob(-0.8841), "-0.884");
  assert.equal(formatLogprob(-0.0001), "0.000");
  assert.equal(formatLogprob(-Infinity), "-inf");
  assert.equal(formatLogprob(NaN), "?");
});

test("segments splits whitespace into single visible characters", () => {
  assert.deepEqual(segments(" a\tb\n\n"), [
    { kind: "space", text: " " },
    { kind: "text", text: "a" },
    { kind: "tab", text: "\t" },
    { kind: "text", text: "b" },
    { kind: "newline", text: "\n" },
    { kind: "newline", text: "\n" },
  ]);
  assert.deepEqual(segments("<script>"), [{ kind: "text", text: "<script>" }]);
  assert.deepEqual(segments("a\r\x07"), [
    { kind: "text", text: "a" },
    { kind: "cr", text: "\r" },
    { kind: "control", text: "\x07" },
  ]);
  assert.deepEqual(segments(""), []);
});
