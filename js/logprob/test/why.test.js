// Unit tests of the "why?" numbers: the diverging palette and its symmetric range, rank agreement
// (checked against the textbook formula, written here), the decided mode's colours.
import assert from "node:assert/strict";
import { test } from "node:test";

import { AGAINST, agreements, attributionKey, convergenceNote, divergingColor, ranks, scoreStyle, spearman, symmetricBound, TOWARDS } from "../attribution.js";
import { DECIDED, decidedRange, NEVER_RGB } from "../decided.js";
import { scale, tokenStyle } from "../modes.js";
import { paletteColor } from "../../toolkit/colors.js";

/** Spearman without ties: 1 - 6 Σ d² / (n (n² - 1)), d the difference of ranks found by sorting. */
function textbookSpearman(a, b) {
  const rankOf = (xs) => {
    const sorted = [...xs].sort((x, y) => x - y);
    return xs.map((x) => sorted.indexOf(x) + 1);
  };
  const ra = rankOf(a);
  const rb = rankOf(b);
  const n = a.length;
  const d2 = ra.reduce((s, r, i) => s + (r - rb[i]) ** 2, 0);
  return 1 - (6 * d2) / (n * (n * n - 1));
}

test("rank agreement equals the textbook formula, and ties share their mean rank", () => {
  const a = [0.3, -1.2, 2.5, 0.01, -0.4, 1.7, 0.9];
  const b = [0.1, -0.2, 1.5, 0.5, -2.0, 0.2, 3.0];
  assert.ok(Math.abs(spearman(a, b) - textbookSpearman(a, b)) < 1e-12);
  assert.equal(spearman(a, a), 1);
  assert.ok(Math.abs(spearman(a, a.map((x) => -x)) + 1) < 1e-12);
  assert.deepEqual([...ranks([5, 1, 5, 3])], [3.5, 1, 3.5, 2]);
  assert.ok(Number.isNaN(spearman([1], [2])));
  const pairs = agreements([{ method: "occlusion", scores: a }, { method: "gradient_x_input", scores: b }]);
  assert.equal(pairs.length, 1);
  assert.equal(pairs[0].a, "occlusion");
});

test("the diverging palette is symmetric around 0, which is transparent", () => {
  const scores = [0.5, -2, 1];
  const bound = symmetricBound(scores);
  assert.equal(bound, 2);
  assert.equal(divergingColor(0, bound).alpha, 0);
  assert.deepEqual(divergingColor(2, bound).rgb, TOWARDS);
  assert.deepEqual(divergingColor(-2, bound).rgb, AGAINST);
  assert.equal(divergingColor(1, bound).alpha, divergingColor(-1, bound).alpha); // symmetric
  assert.equal(divergingColor(-9, bound).alpha, divergingColor(-2, bound).alpha); // clamped
  assert.equal(divergingColor(NaN, bound), null);
  assert.equal(scoreStyle(0.1, bound).color, ""); // faint: the theme's own text colour
  assert.notEqual(scoreStyle(-2, bound).color, "");
  assert.equal(attributionKey(7, "occlusion", null), "7|occlusion|-");
  assert.equal(attributionKey(7, "occlusion", 42), "7|occlusion|42");
});

test("integrated gradients that did not converge are said so in words", () => {
  assert.equal(convergenceNote({ converged: true }), null);
  assert.equal(convergenceNote({}), null);
  assert.match(convergenceNote({ converged: false, relative_error: 0.46, n_steps: 64 }), /not converged.*46%.*64 steps/);
});

test("the decided mode colours by layer, early bright, never in its own colour", () => {
  const model = { get: (k) => ({ color_mode: "decided", decided_blocks: 30 })[k] };
  const range = decidedRange(model);
  assert.deepEqual(range, [0, 29]);
  const sc = scale("decided", "viridis", range);
  const data = { decided: new Int32Array([-1, 0, 29, -1, 10]) };
  assert.equal(tokenStyle(sc, data, 0), null); // nothing predicts the first token
  assert.equal(sc.rgb(DECIDED.value(data, 1)).join(), paletteColor("viridis", 1).join());
  assert.equal(sc.rgb(DECIDED.value(data, 2)).join(), paletteColor("viridis", 0).join());
  assert.deepEqual(sc.rgb(DECIDED.value(data, 3)), NEVER_RGB);
  assert.equal(decidedRange({ get: (k) => ({ color_mode: "probability", decided_blocks: 30 })[k] }), null);
});
