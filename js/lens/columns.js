// The lens grid's column widths: each token's column is as wide as the longest text it shows
// (every layer's top guess and the token itself), so no name in the grid is cut. Pure: the
// caller passes how wide a text is (the grid measures with a canvas in the page's code font).

import { visible } from "../toolkit/whitespace.js";

export const MIN_COL_WIDTH = 40; // px: a short token's column still takes a click comfortably
const CELL_BOX = 6; // px: the cell's 2 px padding each side, its 1 px border and a pixel of slack

/**
 * Left edges of the columns of decoded lens data `d`: n + 1 numbers, column i from lefts[i] to
 * lefts[i + 1]. `measure(text, role)` gives a text's width in px, role "cell" (a layer's top
 * guess) or "token" (the token row's larger font). Each text entry is measured once.
 */
export function columnLefts(d, measure) {
  const cache = new Map();
  const widthOf = (id, role) => {
    const key = `${role}:${id}`;
    if (!cache.has(key)) cache.set(key, measure(visible(d.texts[id]), role));
    return cache.get(key);
  };
  const lefts = new Float64Array(d.n + 1);
  for (let i = 0; i < d.n; i++) {
    let widest = widthOf(d.tokenText[i], "token");
    // column 0 has no prediction (nothing comes before the first token): its cells stay empty
    for (let r = 0; i > 0 && r < d.L; r++) widest = Math.max(widest, widthOf(d.top1Text[r * d.n + i], "cell"));
    lefts[i + 1] = lefts[i] + Math.max(MIN_COL_WIDTH, Math.ceil(widest) + CELL_BOX);
  }
  return lefts;
}

/** The column under x px (clamped to 0..n-1): a binary search of the left edges. */
export function columnAt(lefts, x) {
  let lo = 0;
  let hi = lefts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (lefts[mid] <= x) lo = mid;
    else hi = mid - 1;
  }
  return Math.max(0, lo);
}

/** A rough width before the page's font is known: a monospace advance of 0.62 em per character. */
export const estimateWidth = (text, role) => [...text].length * (role === "token" ? 11 : 10) * 0.62;
