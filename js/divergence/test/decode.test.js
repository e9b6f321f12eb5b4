import { test } from "node:test";
import assert from "node:assert/strict";
import { deltaText, klText, level, nextFlip, rangeText, sideP } from "../decode.js";

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
