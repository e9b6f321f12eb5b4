// Unit tests of what the compare view's header and panel say a number is computed over (node --test compare/).
import assert from "node:assert/strict";
import { test } from "node:test";

import { overText } from "../header.js";
import { ownNumbers } from "../panel.js";

const part = (over, extra) => ({ over, start: 43, end: 120, tokens: 20, bytes: 77, skipped: 0, bits: 93.2,
  bits_per_byte: 93.2 / 77, perplexity: 2 ** (93.2 / 20), reason: "", ...extra });

test("a part's tokens and bytes, and the tokens left out of an own continuation", () => {
  assert.equal(overText(part("own")), "20 tokens, 77 bytes");
  assert.equal(overText(part("own", { skipped: 1 })), "20 tokens (+1 without a logprob), 77 bytes");
  // aligned: the tokens outside the known spans are not "without a logprob"
  assert.equal(overText(part("aligned", { skipped: 2 })), "20 tokens, 77 bytes");
  assert.equal(overText(part("aligned", { reason: "nothing aligned can be compared" })), "nothing to compare");
});

test("a continuation's numbers in words, or the reason there are none", () => {
  const words = ownNumbers(part("own"));
  assert.equal(words, `${(93.2 / 77).toFixed(4)} bits/byte \u00b7 perplexity ${(2 ** (93.2 / 20)).toFixed(2)} \u00b7 ` +
    "over 20 tokens, 77 bytes (\u2212\u03a3 log\u2082 p = 93.20 bits)");
  assert.equal(ownNumbers(part("own", { reason: "#0 has no continuation of its own" })), "#0 has no continuation of its own");
});
