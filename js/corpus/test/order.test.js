// The radix orders (order.js) against a plain comparator sort written here, on random columns with
// ties, NaN, -0, infinities, negatives and texts with the same beginnings, in both directions and
// from shuffled row lists (stability is relative to the input's order).
import assert from "node:assert/strict";
import { test } from "node:test";
import { sortRows } from "../data.js";

function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function shuffledRows(n, next) {
  const rows = Int32Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [rows[i], rows[j]] = [rows[j], rows[i]];
  }
  return rows.slice(0, Math.floor(n * 0.8)); // a filtered subset
}

/** The expected order: stable, NaN last whichever the direction, -0 equal to 0. */
function byComparator(rows, keyOf, descending) {
  const place = new Map([...rows].map((row, i) => [row, i]));
  return [...rows].sort((a, b) => {
    const x = keyOf(a);
    const y = keyOf(b);
    const xn = Number.isNaN(x);
    const yn = Number.isNaN(y);
    if (xn || yn) return xn === yn ? place.get(a) - place.get(b) : xn ? 1 : -1;
    if (x === y) return place.get(a) - place.get(b);
    return (x < y ? -1 : 1) * (descending ? -1 : 1);
  });
}

test("numbers: the radix order equals a stable comparator sort (NaN last, -0 == 0, infinities)", () => {
  const next = random(7);
  const specials = [NaN, -0, 0, Infinity, -Infinity, 1e-300, -1e-300, 5e-324];
  const values = Float64Array.from({ length: 5000 }, () => {
    const r = next();
    if (r < 0.1) return specials[Math.floor(next() * specials.length)];
    if (r < 0.4) return Math.floor(next() * 20) - 10; // many ties
    return (next() - 0.5) * 10 ** Math.floor(next() * 12 - 6);
  });
  for (const descending of [false, true]) {
    const rows = shuffledRows(values.length, next);
    assert.deepEqual([...sortRows(rows, values, "float", descending)], byComparator(rows, (r) => values[r], descending));
  }
  const ints = Int32Array.from({ length: 3000 }, () => Math.floor(next() * 70000) - 35000);
  const rows = shuffledRows(ints.length, next);
  assert.deepEqual([...sortRows(rows, ints, "int", true)], byComparator(rows, (r) => ints[r], true));
});

test("texts: the radix order by ranks equals a stable comparator sort of the same keys", () => {
  const next = random(11);
  const words = ["a", "ab", "abc", "b", "B", "é", "\u{1F600}", "z", "item 9", "item 10", ""];
  const values = Array.from({ length: 4000 }, () => words[Math.floor(next() * words.length)]
    + (next() < 0.5 ? words[Math.floor(next() * words.length)] : ""));
  for (const descending of [false, true]) {
    const rows = shuffledRows(values.length, next);
    const expected = [...rows].map((r) => r);
    const place = new Map([...rows].map((row, i) => [row, i]));
    expected.sort((a, b) => {
      const x = values[a];
      const y = values[b];
      return x === y ? place.get(a) - place.get(b) : (x < y ? -1 : 1) * (descending ? -1 : 1);
    });
    assert.deepEqual([...sortRows(rows, values, "longtext", descending)], expected);
  }
});

test("an empty row list and one row sort to themselves", () => {
  assert.deepEqual([...sortRows(new Int32Array(0), new Float64Array(0), "float", false)], []);
  assert.deepEqual([...sortRows(Int32Array.from([2]), Float64Array.from([1, 2, NaN]), "float", true)], [2]);
  assert.deepEqual([...sortRows(Int32Array.from([1]), ["x", "y"], "text", false)], [1]);
});
