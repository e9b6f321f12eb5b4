// The corpus view's data in node: sorting (stable, NaN last, both directions), filtering, and the
// payload read through the toolkit's codec, checked against results written out by hand.
import assert from "node:assert/strict";
import { test } from "node:test";
import { filterRows, indexRows, sortRows, visibleRows } from "../data.js";

const data = {
  n: 5,
  columns: {
    item: Int32Array.from([0, 1, 2, 3, 4]),
    label: ["b", "a", "item 10", "item 9", "a"],
    text: ["The cat", "a DOG", "the dog", "Cats", "<img src=x>"],
    perplexity: Float32Array.from([3, NaN, 10, 3, 1.5]),
  },
};

test("sorting numbers is stable, puts NaN last in both directions", () => {
  const rows = Int32Array.from([0, 1, 2, 3, 4]);
  assert.deepEqual([...sortRows(rows, data.columns.perplexity, "float", false)], [4, 0, 3, 2, 1]);
  assert.deepEqual([...sortRows(rows, data.columns.perplexity, "float", true)], [2, 0, 3, 4, 1]);
  // equal values (rows 0 and 3) keep the order they had in the input, whichever it was
  assert.deepEqual([...sortRows(Int32Array.from([3, 0]), data.columns.perplexity, "float", true)], [3, 0]);
});

test("sorting text is natural (item 9 before item 10) and stable", () => {
  const rows = Int32Array.from([0, 1, 2, 3, 4]);
  assert.deepEqual([...sortRows(rows, data.columns.label, "text", false)], [1, 4, 0, 3, 2]);
  assert.deepEqual([...sortRows(rows, data.columns.label, "text", true)], [2, 3, 0, 1, 4]);
});

test("filters: text and label contain (any case), a perplexity range drops unknown perplexities", () => {
  const lower = {};
  assert.deepEqual([...filterRows(data, { text: "dog" }, lower)], [1, 2]);
  assert.deepEqual([...filterRows(data, { text: "cat", label: "item" }, lower)], [3]);
  assert.deepEqual([...filterRows(data, { ppl_min: 2, ppl_max: 5 }, lower)], [0, 3]);
  assert.deepEqual([...filterRows(data, { ppl_min: "", ppl_max: null }, lower)], [0, 1, 2, 3, 4]);
  assert.deepEqual([...filterRows(data, { text: "<img" }, lower)], [4]);
});

test("visible rows: filtered, then sorted; an unknown column keeps the corpus's order", () => {
  assert.deepEqual([...visibleRows(data, { text: "t" }, { column: "perplexity", descending: true }, {})], [2, 0, 3]);
  assert.deepEqual([...visibleRows(data, {}, { column: "", descending: true }, {})], [0, 1, 2, 3, 4]);
  const index = { n: 3, columns: { count: Int32Array.from([5, 9, 5]), group: ["x", "y", "z"] } };
  assert.deepEqual([...indexRows(index, { column: "count", descending: true })], [1, 0, 2]);
});

test("whole texts sort by code units, stable", () => {
  const rows = Int32Array.from([0, 1, 2, 3, 4]);
  // "<" < "C" < "T" < "a" < "t" in UTF-16 code units
  assert.deepEqual([...sortRows(rows, data.columns.text, "longtext", false)], [4, 3, 0, 1, 2]);
  assert.deepEqual([...sortRows(rows, ["b", "a", "b", "a", "b"], "longtext", true)], [0, 2, 4, 1, 3]);
});

test("whole texts and labels sort by the kernel's ranks when the payload has them (equal ranks: stable)", () => {
  const ranked = { ...data, ranks: { text: Uint32Array.from([2, 0, 2, 1, 3]), label: Uint32Array.from([1, 1, 0, 2, 0]) } };
  assert.deepEqual([...visibleRows(ranked, {}, { column: "text", descending: false }, {})], [1, 3, 0, 2, 4]);
  assert.deepEqual([...visibleRows(ranked, {}, { column: "text", descending: true }, {})], [4, 0, 2, 3, 1]);
  assert.deepEqual([...visibleRows(ranked, {}, { column: "label", descending: false }, {})], [2, 4, 0, 1, 3]);
  assert.deepEqual([...visibleRows(ranked, {}, { column: "label", descending: true }, {})], [3, 0, 1, 2, 4]);
});

test("contains is literal (regex characters are text) and case-insensitive", () => {
  const texts = { n: 4, columns: { text: ["a.b (c)", "axb", "[X]*", "ÉTÉ"], label: ["", "", "", ""],
    perplexity: Float32Array.from([1, 1, 1, 1]) } };
  assert.deepEqual([...filterRows(texts, { text: "A.B (" }, {})], [0]);
  assert.deepEqual([...filterRows(texts, { text: "[x]*" }, {})], [2]);
  assert.deepEqual([...filterRows(texts, { text: "été" }, {})], [3]);
  assert.deepEqual([...filterRows(texts, { text: "\\" }, {})], []);
});

test("a corpus's extra columns (divergences: mean KLD, flips) sort as numbers, NaN last", () => {
  const extra = { ...data, extra: [["mean_kld", "mean KLD", "float"]],
    columns: { ...data.columns, mean_kld: Float32Array.from([0.5, 0.01, NaN, 0.5, 2]) } };
  assert.deepEqual([...visibleRows(extra, {}, { column: "mean_kld", descending: true }, {})], [4, 0, 3, 1, 2]);
  assert.deepEqual([...visibleRows(extra, {}, { column: "mean_kld", descending: false }, {})], [1, 0, 3, 4, 2]);
});
