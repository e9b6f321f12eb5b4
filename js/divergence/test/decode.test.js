import { test } from "node:test";
import assert from "node:assert/strict";
import { field, texts } from "../../toolkit/test/payload.js";
import { decodeDivergence, deltaText, klText, level, nextFlip, rangeText, sideP } from "../decode.js";

test("a KL range is written as a range, never one number", () => {
  assert.equal(klText(0.5, 0.5), "0.5");
  assert.equal(klText(0.01, 0.25), "[0.01, 0.25]");
  assert.equal(klText(0.01, Infinity), "[0.01, \u221e]");
  assert.equal(klText(NaN, NaN), "not scored");
  assert.equal(rangeText([0.2, null]), "[0.2, \u221e]");
  assert.equal(rangeText([0.125, 0.125]), "0.125");
});

test("a side that does not list a token gives a bound, not a value", () => {
  assert.equal(sideP(Math.log(0.25), Math.log(0.01)), "25.0%");
  assert.equal(sideP(NaN, Math.log(0.01)), "\u22641.0%");
  assert.equal(sideP(NaN, NaN), "?");
  assert.equal(deltaText(Math.log(0.25), Math.log(0.5)), "+25.00%");
  assert.equal(deltaText(Math.log(0.5), Math.log(0.25)), "\u221225.00%");
  assert.equal(deltaText(NaN, Math.log(0.5)), "?");
  assert.equal(deltaText(Math.log(0.5), Math.log(0.5 + 1.2e-5)), "+0.0012%");
});

test("next flip walks the flips and wraps round", () => {
  assert.equal(nextFlip([3, 7, 9], -1), 3);
  assert.equal(nextFlip([3, 7, 9], 3), 7);
  assert.equal(nextFlip([3, 7, 9], 9), 3);
  assert.equal(nextFlip([], 0), -1);
});

test("the colour level is the KL (its lower end) or |Δp| over the range", () => {
  const data = { kldLow: [NaN, 0.05, 2], deltaP: [NaN, -0.3, 0.1] };
  assert.ok(Number.isNaN(level(data, 0, "kld", 0.1)));
  assert.equal(level(data, 1, "kld", 0.1), 0.5);
  assert.equal(level(data, 2, "kld", 0.1), 1);
  assert.equal(level(data, 1, "delta_p", 0.6), 0.5);
});

test("the payload decodes to per-token arrays and each position's alternatives", () => {
  const f32 = (xs) => field(new Float32Array(xs));
  const payload = {
    n: 2, tokens: texts(["The", " cat"]),
    kld_low: f32([NaN, 0.1]), kld_high: f32([NaN, Infinity]), delta_p: f32([NaN, -0.2]), same_top: f32([NaN, 0]),
    base_logprob: f32([NaN, -1]), cand_logprob: f32([NaN, -2]), base_floor: f32([NaN, -3]), cand_floor: f32([NaN, -4]),
    alt_start: field(new Uint32Array([0, 0, 2])), alt_texts: texts([" dog", " cat"]),
    alt_base: f32([-0.5, -1]), alt_cand: f32([NaN, -2]), alt_chosen: field(new Uint8Array([0, 1])),
  };
  const d = decodeDivergence(payload);
  assert.deepEqual(d.tokens, ["The", " cat"]);
  assert.equal(d.kldHigh[1], Infinity);
  assert.equal(klText(d.kldLow[1], d.kldHigh[1]).startsWith("["), true);
  assert.deepEqual(d.altTexts, [" dog", " cat"]);
  assert.ok(Number.isNaN(d.altCand[0]));
  assert.equal(sideP(d.altCand[0], d.candFloor[1]), "\u22641.8%");
  assert.throws(() => decodeDivergence({ ...payload, n: 3 }), /3/);
});
