// A corpus of choices in the corpus table's data: filtering by the predicted option and by right /
// wrong, and sorting by them, checked against rows written out by hand.
import assert from "node:assert/strict";
import { test } from "node:test";
import { answerText } from "../answers.js";
import { visibleRows } from "../data.js";

const data = {
  n: 5,
  answers: true,
  columns: {
    item: Int32Array.from([0, 1, 2, 3, 4]),
    label: [" positive", " negative", " positive", " negative", " positive"],
    text: ["a", "b", "c", "d", "e"],
    perplexity: Float32Array.from([1, 2, 3, 4, 5]),
    predicted: [" positive", " positive", " negative", " negative", " Positive"],
    gold: [" positive", " negative", " positive", " negative", " positive"],
    correct: Uint8Array.from([1, 0, 0, 1, 255]),
  },
};
const none = { column: "", descending: false };

test("filters: right or wrong, and the predicted option contains (any case)", () => {
  assert.deepEqual([...visibleRows(data, { correct: "right" }, none, {})], [0, 3]);
  assert.deepEqual([...visibleRows(data, { correct: "wrong" }, none, {})], [1, 2]);
  assert.deepEqual([...visibleRows(data, { predicted: "posit" }, none, {})], [0, 1, 4]);
  assert.deepEqual([...visibleRows(data, { predicted: "posit", correct: "wrong" }, none, {})], [1]);
  assert.deepEqual([...visibleRows(data, { label: "neg", correct: "right" }, none, {})], [3]);
});

test("sorting by right? and by the predicted option", () => {
  assert.deepEqual([...visibleRows(data, {}, { column: "correct", descending: false }, {})], [1, 2, 0, 3, 4]);
  assert.deepEqual([...visibleRows(data, {}, { column: "predicted", descending: false }, {})], [2, 3, 0, 1, 4]);
  assert.equal(answerText(data.columns, 1, "correct"), "wrong");
  assert.equal(answerText(data.columns, 4, "correct"), "");
});

test("a corpus without answers ignores the answer filters", () => {
  const plain = { n: 2, columns: { item: Int32Array.from([0, 1]), label: ["a", "b"], text: ["x", "y"], perplexity: Float32Array.from([1, 2]) } };
  assert.deepEqual([...visibleRows(plain, { correct: "right", predicted: "z" }, { column: "correct" }, {})], [0, 1]);
});
