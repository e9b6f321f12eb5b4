import { test } from "node:test";
import assert from "node:assert/strict";
import { field, texts } from "../../toolkit/test/payload.js";
import { decodeRollout, rollLevel, rolloutItems, sig } from "../rollout.js";

test("numbers keep four significant digits, tiny ones in exponent form, a minus sign as U+2212", () => {
  assert.equal(sig(0.012345), "0.01235");
  assert.equal(sig(-0.5, true), "\u22120.5");
  assert.equal(sig(0.5, true), "+0.5");
  assert.equal(sig(1.5e-7), "1.5e-7");
  assert.equal(sig(0), "0");
  assert.equal(sig(1000), "1000");
  assert.equal(sig(2.5), "2.5");
  assert.equal(sig(NaN), "?");
});

test("a rollout payload decodes to per-token arrays; |Δ| over the range is the colour level", () => {
  const f32 = (xs) => field(new Float32Array(xs));
  const payload = {
    kind: "rollout", n: 2, tokens: texts(["<b>", " ok"]),
    logprob_a: f32([-1, -2]), logprob_b: f32([-1.5, -2]), delta: f32([-0.5, 0]), ratio: f32([Math.exp(-0.5), 1]),
    k1: f32([0.5, 0]), k2: f32([0.125, 0]), k3: f32([Math.expm1(-0.5) + 0.5, 0]),
  };
  const d = decodeRollout(payload);
  assert.deepEqual(d.tokens, ["<b>", " ok"]);
  assert.equal(d.logprobB[0], -1.5);
  assert.equal(rollLevel(d, 0, 1), 0.5);
  assert.equal(rollLevel(d, 0, 0.1), 1);
  assert.equal(rollLevel(d, 1, 1), 0);
  assert.throws(() => decodeRollout({ ...payload, n: 3 }), /3/);
});

test("the header lists the reward only where there is one, and how many tokens are outside", () => {
  const s = { label: "r0", mean_abs_delta: 0.01, max_abs_delta: 0.5, share_outside: 0.25, outside: [3], tokens: 4, clip: 2, mean_k3: 1e-5 };
  const keys = (items) => items.map(([, , k]) => k);
  assert.deepEqual(keys(rolloutItems(s)), ["label", "mean_abs_delta", "max_abs_delta", "share_outside", "mean_k3"]);
  assert.equal(rolloutItems(s)[3][1], "25.0% (1 of 4)");
  assert.deepEqual(keys(rolloutItems({ ...s, reward: 1 })).at(-1), "reward");
});
