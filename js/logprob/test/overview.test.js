// The panel's overview numbers (stats.js `overviewOf`), checked against a computation of their own:
// a full sort of the candidate tokens, and sums written out here.
import assert from "node:assert/strict";
import { test } from "node:test";

import { leastConfident, overviewOf } from "../stats.js";
import { overWhich, summaryText } from "../overview.js";

/** A deterministic pseudo-random stream (mulberry32), so a failure can be rerun. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The expected k smallest: every candidate index sorted by (logprob, index), the first k. */
function bySorting(logprobs, k, from) {
  const candidates = [];
  for (let i = from; i < logprobs.length; i++) if (!Number.isNaN(logprobs[i])) candidates.push(i);
  candidates.sort((a, b) => logprobs[a] - logprobs[b] || a - b);
  return candidates.slice(0, k);
}

function trace(n, promptLen, rnd, { nanShare = 0.05, ties = false } = {}) {
  const logprobs = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const x = ties ? -Math.floor(rnd() * 4) : Math.log(rnd() * 0.999 + 0.001);
    logprobs[i] = rnd() < nanShare ? NaN : x;
  }
  return { n, promptLen, logprobs };
}

test("the overview's rows are the k lowest generated tokens, as a full sort finds them", () => {
  const rnd = random(18);
  for (let round = 0; round < 200; round++) {
    const n = 1 + Math.floor(rnd() * 300);
    const promptLen = Math.floor(rnd() * (n + 1)); // promptLen = n: a scored text, all tokens
    const data = trace(n, promptLen, rnd, { ties: round % 3 === 0, nanShare: round % 5 === 0 ? 0.6 : 0.05 });
    const k = 1 + Math.floor(rnd() * 8);
    const from = promptLen >= n ? 0 : promptLen;
    const o = overviewOf(data, k);
    assert.deepEqual(o.least, bySorting(data.logprobs, k, from), `round ${round}: n ${n}, prompt ${promptLen}, k ${k}`);
    assert.equal(o.scored, promptLen >= n);
    for (const i of o.least) assert.ok(i >= from && !Number.isNaN(data.logprobs[i]));
  }
});

test("the overview's mean probability and perplexity are over the generated tokens with a logprob", () => {
  const lp = [NaN, Math.log(0.9), Math.log(0.5), NaN, Math.log(0.25), Math.log(0.04)];
  const data = { n: 6, promptLen: 2, logprobs: new Float32Array(lp) };
  const o = overviewOf(data, 5);
  // tokens 2, 4, 5 (3 is unknown): p 0.5, 0.25, 0.04
  assert.equal(o.known, 3);
  assert.equal(o.unknown, 1);
  assert.ok(Math.abs(o.meanP - (0.5 + 0.25 + 0.04) / 3) < 1e-6);
  assert.ok(Math.abs(o.perplexity - Math.cbrt(1 / (0.5 * 0.25 * 0.04))) < 1e-4);
  assert.deepEqual(o.least, [5, 4, 2]); // fewer than 5: all there are, the least likely first
  assert.equal(summaryText(o), "mean p 26.3% \u00b7 perplexity 5.85, over the 3 generated tokens with a logprob (1 without)");
});

test("a scored text (prompt only) is summed over all its tokens; an empty one has no rows", () => {
  const data = { n: 3, promptLen: 3, logprobs: new Float32Array([NaN, Math.log(0.2), Math.log(0.8)]) };
  const o = overviewOf(data, 5);
  assert.deepEqual(o.least, [1, 2]);
  assert.equal(overWhich(o), "over all 2 tokens of the text with a logprob (1 without)");
  const empty = overviewOf({ n: 0, promptLen: 0, logprobs: new Float32Array(0) }, 5);
  assert.deepEqual(empty.least, []);
  assert.equal(empty.known, 0);
  assert.ok(Number.isNaN(empty.meanP));
  assert.equal(overWhich(overviewOf({ n: 2, promptLen: 1, logprobs: new Float32Array([NaN, -1]) }, 5)), "over the 1 generated token");
});

test("leastConfident from an index leaves the tokens before it out, and count 0 gives none", () => {
  const lp = new Float32Array([-9, -1, -5, -3]);
  assert.deepEqual(leastConfident(lp, 2, 1), [2, 3]);
  assert.deepEqual(leastConfident(lp, 0), []);
});
