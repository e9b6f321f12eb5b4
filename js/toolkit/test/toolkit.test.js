// Unit tests of the toolkit every view uses: number formats, token text segments, the one
// visible-whitespace mapping, colours and the codec's texts and messages (`npm test`).
import assert from "node:assert/strict";
import { test } from "node:test";

import { readTexts, sizedArray, unpackMessage } from "../codec.js";
import { gradientOf, interpolate, paletteColor, readableOn, styleOn } from "../colors.js";
import { formatFixed, formatLogprob, formatPercent, percentOfLogprob } from "../format.js";
import { rows } from "../rows.js";
import { controlGlyph, decodeTokens, segments } from "../tokens.js";
import { EMPTY_MARK, isBlank, visible, WHITESPACE_MARKS } from "../whitespace.js";
import { utf8Table } from "./payload.js";

// The segments expected, written as [kind, text] pairs.
const pieces = (...pairs) => pairs.map(([kind, text]) => ({ kind, text }));

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
  assert.deepEqual(
    segments(" a\tb\n\n"),
    pieces(["space", " "], ["text", "a"], ["tab", "\t"], ["text", "b"], ["newline", "\n"], ["newline", "\n"]),
  );
  assert.deepEqual(segments("<script>"), pieces(["text", "<script>"]));
  assert.deepEqual(segments("a\r\x07"), pieces(["text", "a"], ["cr", "\r"], ["control", "\x07"]));
  assert.deepEqual(segments(""), []);
});

test("every view marks whitespace the same way: space ·, tab →, newline ↵, return ␍, empty ∅", () => {
  assert.equal(visible(" a\tb\n\r"), "\u00b7a\u2192b\u21b5\u240d");
  assert.equal(visible("\u00a0"), "\u00b7");
  assert.equal(visible(""), EMPTY_MARK);
  assert.equal(visible("<b>x</b>"), "<b>x</b>"); // text stays text: nothing else changes
  assert.deepEqual(Object.keys(WHITESPACE_MARKS).sort(), [" ", "\u00a0", "\t", "\n", "\r"].sort());
  assert.ok(isBlank(" \n") && isBlank("") && !isBlank(" a"));
});

test("percent of a logprob, fixed decimals: '?' where unknown", () => {
  assert.equal(percentOfLogprob(Math.log(0.5)), "50.0%");
  assert.equal(percentOfLogprob(-20), "<0.1%");
  assert.equal(percentOfLogprob(-Infinity), "0%");
  assert.equal(percentOfLogprob(NaN), "?");
  assert.equal(formatFixed(1.23456, 2), "1.23");
  assert.equal(formatFixed(Infinity), "?");
  assert.equal(formatFixed(null), "?");
});

test("colours: stops interpolate, the text on a colour is the one that contrasts more", () => {
  assert.deepEqual(interpolate([[0, 0, 0], [255, 255, 255]], 0.5), [128, 128, 128]);
  assert.deepEqual(interpolate([[0, 0, 0], [255, 255, 255]], 7), [255, 255, 255]); // clamped
  assert.deepEqual(styleOn(paletteColor("viridis", 1)), { background: "rgb(253,231,37)", color: "#000" });
  assert.equal(styleOn(null), null);
  assert.equal(readableOn([20, 20, 20]), "#fff");
  assert.match(gradientOf((t) => [t * 255, 0, 0], 2), /^linear-gradient\(to right, rgb\(0,0,0\) 0\.0%, rgb\(127\.5,0,0\) 50\.0%/);
});

/** `{dtype, shape, buffer}` of a typed array, at an odd offset of a larger buffer (as a kernel message's parts are). */
function field(dtype, typed) {
  const bytes = new Uint8Array(typed.byteLength + 3);
  bytes.set(new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength), 3);
  return { dtype, shape: [typed.length], buffer: new DataView(bytes.buffer, 3, typed.byteLength) };
}

test("texts arrive as {blob, offsets}: split at UTF-8 byte offsets", () => {
  const blob = new TextEncoder().encode("aé🤖");
  const texts = { blob: field("uint8", blob), offsets: field("uint32", new Uint32Array([0, 1, 3, 3, 7])) };
  assert.deepEqual(readTexts(texts, "t"), ["a", "é", "", "🤖"]);
  assert.deepEqual(readTexts(null, "t"), []);
  const short = { blob: field("uint8", blob), offsets: field("uint32", new Uint32Array([0, 9])) };
  assert.throws(() => readTexts(short, "t"), /t end at byte 9/);
});

test("an array of the wrong length or a missing one is an error that names it", () => {
  const fields = { a: field("int32", new Int32Array([1, 2])) };
  assert.deepEqual([...sizedArray(fields, "a", 2)], [1, 2]);
  assert.throws(() => sizedArray(fields, "a", 3), /a has 2 values, expected 3/);
  assert.throws(() => sizedArray(fields, "b", 3), /b is missing/);
  assert.throws(() => sizedArray({ c: { dtype: "float64", shape: [1], buffer: new ArrayBuffer(8) } }, "c"), /dtype "float64"/);
});

test("a message's buffers go back to their paths", () => {
  const payload = { x: { dtype: "float32", shape: [1], buffer: null }, rows: [{ y: null }] };
  const got = unpackMessage({ payload, buffer_paths: [["x", "buffer"], ["rows", 0, "y"]] }, ["B0", "B1"]);
  assert.equal(got.x.buffer, "B0");
  assert.equal(got.rows[0].y, "B1");
});

test("zero-width and bidi characters become glyph segments", () => {
  assert.deepEqual(
    segments("a\u202eb\u200b"),
    pieces(["text", "a"], ["invisible", "\u202e"], ["text", "b"], ["invisible", "\u200b"]),
  );
  assert.equal(controlGlyph("\u202e"), "[RLO]");
  assert.equal(controlGlyph("\u0085"), "\\x85");
  assert.deepEqual(segments("\u0085"), [{ kind: "control", text: "\u0085" }]);
});

test("decodeTokens splits one decode at the byte offsets, and gives up on invalid UTF-8", () => {
  const texts = ["a", " wörld", "🤖", "", "\u202e<b>"];
  const { blob, offsets } = utf8Table(texts);
  assert.deepEqual(decodeTokens(blob, offsets, texts.length), texts);
  const bad = new Uint8Array([0x61, 0xe2, 0x80]); // "a" then half a character
  assert.equal(decodeTokens(bad, new Uint32Array([0, 1, 3]), 2), null);
  // a byte per unit but one of them invalid: still not ASCII, still given up on
  assert.equal(decodeTokens(new Uint8Array([0x61, 0x80]), new Uint32Array([0, 1, 2]), 2), null);
});

test("decodeTokens slices all-ASCII texts at their byte offsets, from wherever the offsets start", () => {
  const texts = ["doc 1", "", " the robot", "x\ty\n", "~"];
  const { blob, offsets } = utf8Table(["skipped", ...texts]);
  assert.deepEqual(decodeTokens(blob, offsets.subarray(1), texts.length), texts);
  assert.deepEqual(decodeTokens(blob, offsets.subarray(1), 2), texts.slice(0, 2));
  const mixed = utf8Table(["abc", "é", "d"]); // one 2-byte character: the counted path
  assert.deepEqual(decodeTokens(mixed.blob, mixed.offsets, 3), ["abc", "é", "d"]);
});

test("decodeTokens cuts random mixed text at random byte offsets as its characters' lead bytes say", () => {
  // Expected, computed apart: each character goes to the text that holds its first byte (a cut
  // inside a character gives the whole character to the text it starts in, none to the next).
  const alphabet = ["a", " ", "\n", "é", "€", "🤖", "\u202e", "ß", "z"];
  const encoder = new TextEncoder();
  let seed = 7;
  const rand = (m) => ((seed = (seed * 1103515245 + 12345) % 2147483648) % m);
  for (let round = 0; round < 200; round++) {
    const chars = Array.from({ length: 1 + rand(30) }, () => alphabet[rand(alphabet.length)]);
    const blob = encoder.encode(chars.join(""));
    const cuts = [...new Set([0, blob.length, ...Array.from({ length: rand(8) }, () => rand(blob.length + 1))])];
    const offsets = Uint32Array.from(cuts.sort((x, y) => x - y));
    const expected = Array.from({ length: offsets.length - 1 }, () => "");
    let at = 0;
    for (const ch of chars) {
      let i = 0;
      while (i < expected.length - 1 && offsets[i + 1] <= at) i++;
      expected[i] += ch;
      at += encoder.encode(ch).length;
    }
    assert.deepEqual(decodeTokens(blob, offsets, offsets.length - 1), expected, JSON.stringify({ chars, cuts }));
  }
});

test("rows: a line per row, fields at '|', trimmed; blank lines skipped", () => {
  assert.deepEqual(rows("\n  a | b c |  d\n\n  mean lp|#|float  \n"), [["a", "b c", "d"], ["mean lp", "#", "float"]]);
});
