// A large corpus's window of rows (window.js) in node: the kernel's `_rows` read into the table's row list
// (items at their positions, -1 elsewhere), and the positions asked for through `_view_rows` as the table
// scrolls past the window, checked against values written out by hand.
import assert from "node:assert/strict";
import { test } from "node:test";
import { makeModel } from "../../toolkit/model.js";
import { RowWindow, WINDOW_ROWS } from "../window.js";

const enc = new TextEncoder();
const array = (dtype, values) => {
  const Ctor = { int32: Int32Array, uint32: Uint32Array, float32: Float32Array, uint8: Uint8Array }[dtype];
  const a = Ctor.from(values);
  return { dtype, shape: [a.length], buffer: new DataView(a.buffer) };
};
const texts = (strings) => {
  const bytes = strings.map((s) => enc.encode(s));
  const offsets = [0];
  for (const b of bytes) offsets.push(offsets[offsets.length - 1] + b.length);
  const blob = new Uint8Array(offsets[offsets.length - 1]);
  bytes.forEach((b, i) => blob.set(b, offsets[i]));
  return { blob: array("uint8", blob), offsets: array("uint32", offsets) };
};

/** `_rows` of the kernel: the items at positions [start, start + items.length) of `total`. */
function rows(start, total, items) {
  const n = items.length;
  const numbers = (v) => array("float32", items.map(() => v));
  return { start, total, rows: { version: 1, n, items: array("int32", items), label: texts(items.map((i) => `doc ${i}`)),
    text: texts(items.map(() => "a text")), flags: texts(items.map(() => "")), tokens: array("int32", items.map(() => 2)),
    perplexity: numbers(2), mean_logprob: numbers(-0.7), min_logprob: numbers(-1), max_surprisal: numbers(1),
    mean_entropy: numbers(NaN), spark: array("float32", items.flatMap(() => [NaN, 1])),
    spark_offsets: array("uint32", items.map((_, k) => 2 * k).concat([2 * n])), spark_max: 1 } };
}

test("a window's items sit at their positions; the rest of the order is -1 until its window comes", () => {
  const model = makeModel({ _rows: rows(3, 10, [7, 2, 9]), _view_rows: { start: 0, count: WINDOW_ROWS } });
  const w = new RowWindow(model);
  assert.deepEqual([...w.rows], [-1, -1, -1, 7, 2, 9, -1, -1, -1, -1]);
  assert.equal(w.at.get(2), 1);
  assert.deepEqual(w.data.columns.label, ["doc 7", "doc 2", "doc 9"]);
  assert.deepEqual([...w.data.columns.item], [7, 2, 9]);
});

test("scrolling past the window asks the kernel for the rows around those in sight, once", () => {
  const total = 1000;
  const items = Array.from({ length: WINDOW_ROWS }, (_, k) => k);
  const model = makeModel({ _rows: rows(0, total, items), _view_rows: { start: 0, count: WINDOW_ROWS } });
  let asked = 0;
  model.on("change:_view_rows", () => asked++);
  const w = new RowWindow(model);
  w.want(0, 30); // in the window: nothing asked
  assert.equal(asked, 0);
  w.want(500, 530);
  assert.deepEqual(model.get("_view_rows"), { start: 460, count: WINDOW_ROWS }); // 40 rows above those in sight
  w.want(500, 530); // the same again (a repaint before the answer): not asked twice
  assert.equal(asked, 1);
  w.want(990, 1000); // near the end: the last WINDOW_ROWS rows
  assert.deepEqual(model.get("_view_rows"), { start: total - WINDOW_ROWS, count: WINDOW_ROWS });
  model.set("_rows", rows(880, total, items.map((k) => 880 + k)));
  w.read();
  assert.equal(w.rows[880], 880);
  assert.equal(w.rows[0], -1);
  w.answered(); // (the test's own end: no answer timer left running)
});
