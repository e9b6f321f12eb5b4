// Unit tests of the pure helpers: `npm test` (node's built-in runner, no dependencies).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  alternatives,
  decodePayload,
  formatLogprob,
  formatPercent,
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

function utf8Payload(texts, extra) {
  const enc = new TextEncoder();
  const parts = texts.map((t) => enc.encode(t));
  const offsets = new Uint32Array(parts.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i] + p.length));
  const blob = new Uint8Array(offsets[parts.length]);
  parts.forEach((p, i) => blob.set(p, offsets[i]));
  return { text: bufferAt(blob, 3), text_offsets: bufferAt(offsets, 1), ...extra };
}

test("decodePayload decodes token and alternative texts from one UTF-8 blob", () => {
  // 2 tokens, K=2: tokens first, then the alternatives row by row.
  const payload = utf8Payload(["Hé", " <b>", "Hé", "Ha", " <b>", "\n"], {
    n: 2,
    k: 2,
    logprobs: bufferAt(new Float32Array([NaN, -0.5]), 4),
    ranks: bufferAt(new Int32Array([0, 1]), 4),
    token_ids: bufferAt(new Int32Array([5, 9]), 4),
    top_logprobs: bufferAt(new Float32Array([-0.1, -2.4, -0.5, -1.5]), 4),
    top_ids: bufferAt(new Int32Array([5, 6, 9, 10]), 4),
    top_counts: bufferAt(new Int32Array([2, 2]), 4),
  });
  const d = decodePayload(payload);
  assert.deepEqual(d.tokens, ["Hé", " <b>"]);
  assert.equal(d.altText(0, 1), "Ha");
  assert.equal(d.altText(1, 1), "\n");
  assert.ok(Number.isNaN(d.entropy[0]), "a missing field reads as unknown");
  assert.equal(d.processedLogprobs, null);
  const alts = alternatives(d, 1);
  assert.equal(alts.chosenIndex, 0);
  assert.equal(alts.extra, null);
  assert.deepEqual(alts.rows.map((r) => r.text), [" <b>", "\n"]);
});

test("alternatives adds the chosen token as an extra row when it is not in the top-K", () => {
  const d = decodePayload(
    utf8Payload(["x", "a", "b"], {
      n: 1,
      k: 2,
      logprobs: new Float32Array([-4]),
      ranks: new Int32Array([17]),
      token_ids: new Int32Array([-1]),
      top_logprobs: new Float32Array([-0.2, -1.9]),
      top_ids: new Int32Array([-1, -1]),
      top_counts: new Int32Array([2]),
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
