// Unit tests of the LogprobView's parts: colour modes, statistics, text blocks, the chart's "other" mass.
import assert from "node:assert/strict";
import { test } from "node:test";

import { paletteColor, PALETTES } from "../../toolkit/colors.js";
import { columnText, residual, secondColumn } from "../chart.js";
import { gradient, mode, rankBucket, scale, ticks, tokenStyle } from "../modes.js";
import { leastConfident, stripBins, stripIndex } from "../stats.js";
import { BlockWindow } from "../block_window.js";
import { blockEnds } from "../text.js";

const data = {
  n: 4,
  k: 2,
  logprobs: new Float32Array([NaN, Math.log(0.5), Math.log(0.1), Math.log(0.9)]),
  entropy: new Float32Array([NaN, 1, 4, 0.2]),
  ranks: new Int32Array([0, 1, 37, 1]),
  topCount: (i) => [0, 2, 2, 2][i],
  topLogprobs: new Float32Array([-Infinity, -Infinity, Math.log(0.5), Math.log(0.3), Math.log(0.4), Math.log(0.2), Math.log(0.9), -3]),
};

test("each mode reads its own number of a token", () => {
  assert.ok(Math.abs(mode("probability").value(data, 1) - 0.5) < 1e-6);
  assert.ok(Math.abs(mode("logprob").value(data, 2) - -Math.log(0.1)) < 1e-6);
  assert.equal(mode("entropy").value(data, 2), 4);
  assert.equal(mode("rank").value(data, 2), 37);
  assert.ok(Number.isNaN(mode("rank").value(data, 0)));
  // p / p(top-1): 0.1 / 0.4 for token 2; exactly 1 for a rank-1 token.
  assert.ok(Math.abs(mode("ratio").value(data, 2) - 0.25) < 1e-6);
  assert.equal(mode("ratio").value(data, 1), 1);
  assert.equal(mode("nonsense"), mode("probability"));
});

test("the confident end of every continuous scale is the bright end of the palette", () => {
  const bright = paletteColor("viridis", 1);
  assert.deepEqual(scale("probability").rgb(1), bright);
  assert.deepEqual(scale("logprob").rgb(0), bright);
  assert.deepEqual(scale("entropy").rgb(0), bright);
  assert.deepEqual(scale("ratio").rgb(1), bright);
  assert.deepEqual(scale("logprob").rgb(50), paletteColor("viridis", 0)); // clamped
  assert.equal(scale("entropy").rgb(NaN), null);
});

test("a custom legend range rescales; an invalid one falls back to the default", () => {
  const sc = scale("logprob", "cividis", [0, 2]);
  assert.deepEqual(sc.range, [0, 2]);
  assert.deepEqual(sc.rgb(1), paletteColor("cividis", 0.5));
  assert.deepEqual(ticks(sc), ["0", "0.5", "1", "1.5", "2"]);
  assert.deepEqual(scale("logprob", "viridis", [3, 1]).range, [0, 10]);
  assert.match(gradient(sc), /^linear-gradient\(to right, rgb\(/);
});

test("palettes run dark to bright", () => {
  const lum = ([r, g, b]) => 0.2126 * r + 0.7152 * g + 0.0722 * b;
  for (const name of Object.keys(PALETTES)) {
    for (let t = 0.1; t <= 1; t += 0.1) assert.ok(lum(paletteColor(name, t)) > lum(paletteColor(name, t - 0.1)), `${name} at ${t}`);
  }
});

test("rank buckets are GLTR's: 1, 10, 100, 1000, beyond", () => {
  assert.deepEqual([1, 2, 10, 11, 100, 101, 1000, 1001].map(rankBucket), [0, 1, 1, 2, 2, 3, 3, 4]);
  const sc = scale("rank");
  assert.equal(sc.range, null);
  assert.notDeepEqual(sc.rgb(1), sc.rgb(5000));
  assert.equal(tokenStyle(sc, data, 0), null);
  assert.match(tokenStyle(sc, data, 2).background, /^rgb\(/);
});

test("leastConfident lists the lowest logprobs first and skips unknown ones", () => {
  assert.deepEqual(leastConfident(data.logprobs, 2), [2, 1]);
  assert.deepEqual(leastConfident(new Float32Array([NaN]), 5), []);
});

test("the strip keeps the highest surprisal of each bin", () => {
  const lp = new Float32Array([-1, -5, NaN, -0.5, NaN, NaN]);
  const bins = stripBins(lp, 3);
  assert.deepEqual([bins[0], bins[1]], [5, 0.5]);
  assert.ok(Number.isNaN(bins[2]));
  assert.equal(stripIndex(0, 300, 6), 0);
  assert.equal(stripIndex(299, 300, 6), 5);
  assert.equal(stripIndex(1000, 300, 6), 5);
});

test("blocks end after a newline once big enough, else at a sentence's end, never mid-sentence", () => {
  const tokens = Array.from({ length: 10 }, (_, i) => (i === 4 ? "x\n" : "x"));
  assert.deepEqual(blockEnds(tokens, 3, 6), [5, 10]);
  // no newline: past the maximum (2) the block waits for the end of a sentence
  assert.deepEqual(blockEnds([" a", " b", " c", ".", " d", " e", "!\u201d", " f"], 800, 2), [4, 7, 8]);
  // neither newline nor full stop: cut at three times the maximum
  assert.deepEqual(blockEnds(Array(7).fill(" w"), 800, 2), [6, 7]);
  // a 300-token paragraph (the old maximum) is one block: no line break where the text has none
  const paragraph = Array.from({ length: 900 }, (_, i) => (i % 30 === 29 ? "." : " word"));
  assert.deepEqual(blockEnds(paragraph), [900]);
  assert.deepEqual(blockEnds([]), []);
});

test("the other bar holds 1 - sum of the top-K probabilities", () => {
  assert.ok(Math.abs(residual([Math.log(0.5), Math.log(0.2)]) - 0.3) < 1e-9);
  assert.equal(residual([Math.log(0.7), Math.log(0.6)]), 0);
  assert.equal(residual([]), null);
});

test("a long text's window holds the blocks that meet the view, and finds a token's block", () => {
  const tops = new Float64Array([0, 100, 250, 300, 600]); // four blocks' tops and the text's end (px)
  assert.deepEqual(BlockWindow.within(tops, 0, 100), [0, 1]);
  assert.deepEqual(BlockWindow.within(tops, 120, 260), [1, 3]);
  assert.deepEqual(BlockWindow.within(tops, -500, 5000), [0, 4]);
  assert.deepEqual(BlockWindow.within(tops, 900, 1000), [3, 4]); // past the end: the last block still
  const blocks = [0, 150, 400, 410].map((start, k, all) => ({ start, end: all[k + 1] ?? 500 }));
  const finder = Object.assign(Object.create(BlockWindow.prototype), { blocks });
  assert.deepEqual([0, 149, 150, 409, 410, 499].map((i) => finder.blockOf(i)), [0, 0, 1, 2, 3, 3]);
});

test("the audit badge steps through its disagreeing tokens, wrapping", async () => {
  const { badgeText, nextStep } = await import("../served.js");
  const badge = { label: "3 tokens disagree", positions: [2, 7, 10] };
  const seen = [];
  let at = -1;
  for (let k = 0; k < 4; k++) (at = nextStep(badge.positions, at)), seen.push(badge.positions[at]);
  assert.deepEqual(seen, [2, 7, 10, 2]);
  assert.equal(badgeText(badge, -1), "3 tokens disagree");
  assert.equal(badgeText(badge, 1), "3 tokens disagree \u00b7 2/3 \u25b8");
  assert.equal(nextStep([], -1), -1);
  assert.equal(badgeText({ label: "raw", positions: [] }, -1), "raw");
});

test("the sampled-from column is there only where the token was sampled, with finite numbers", () => {
  const q = new Float32Array([NaN, Math.log(0.8), NaN, Math.log(0.25)]); // prompt, sampled, chosen by hand, sampled
  const sampled = { processedLogprobs: q, meta: { do_sample: true, temperature: 0.8, top_p: 0.9 } };
  assert.equal(secondColumn(sampled, 0, { promptLen: 1 }), null); // a prompt token: nothing was sampled
  assert.equal(secondColumn(sampled, 2, { promptLen: 1 }), null); // NaN there (a branch's token chosen by hand)
  assert.equal(secondColumn(sampled, 3, { promptLen: 1, forced: true }), null);
  assert.equal(secondColumn({ processedLogprobs: null, meta: {} }, 1, { promptLen: 0 }), null); // greedy: none kept
  const column = secondColumn(sampled, 1, { promptLen: 1 });
  assert.match(column.note, /T = 0\.80, top-p 0\.90/); // says the settings it shows
  assert.deepEqual(column.chosen.map((p) => Math.round(p * 1e6)), [800000, 800000]);
  assert.equal(columnText(column.valueOf({ processed: -Infinity })), "cut off");
  const rest = column.otherOf([{ processed: Math.log(0.5) }, { processed: Math.log(0.3) }]);
  assert.ok(Math.abs(rest[0] - 0.2) < 1e-9);
  // a branch's tokens before its fork were sampled at its parent's settings: not named
  const branch = { ...sampled, meta: { ...sampled.meta, branch: { at: 3 } } };
  assert.doesNotMatch(secondColumn(branch, 1, { promptLen: 1 }).note, /T =/);
  // the explorer gives its own column (or null: none), whatever the trace holds
  assert.equal(secondColumn(sampled, 1, { promptLen: 1, column: null }), null);
  assert.equal(columnText([0.1, 0.2]), "10.0%\u201320.0%");
  assert.equal(columnText("\u2026"), "\u2026");
});
