// Attribution numbers for the "why?" view: the diverging palette (its own, apart from the
// probability colours), its symmetric range, rank agreement between methods, and the words of a
// method's name. Pure functions: no DOM, unit-tested in node.

import { gradientOf, interpolate, styleOn } from "../toolkit/colors.js";

/**
 * Purple (pushed towards the contrast, or lowered the token) -> light grey (0) -> orange (pushed
 * towards the token): PuOr, which stays distinct under the common colour-vision deficiencies.
 */
export const DIVERGING = [
  [84, 39, 136], [128, 115, 172], [178, 171, 210], [216, 218, 235], [240, 240, 240],
  [254, 224, 182], [253, 184, 99], [224, 130, 20], [179, 88, 6],
];

export const METHOD_LABELS = {
  gradient_x_input: "gradient \u00d7 input",
  integrated_gradients: "integrated gradients",
  occlusion: "occlusion",
};

/** Agreement below this (Spearman's rho) gets a note that the methods disagree. */
export const DISAGREE_BELOW = 0.5;

/** The symmetric range's bound: the largest |score| (0 when there is none). */
export function symmetricBound(scores) {
  let m = 0;
  for (const s of scores) if (Number.isFinite(s) && Math.abs(s) > m) m = Math.abs(s);
  return m;
}

/** [r, g, b] of a score on the range [-bound, bound] (0 in the middle); null for a non-finite score. */
export function divergingRgb(score, bound) {
  if (!Number.isFinite(score)) return null;
  const t = bound > 0 ? 0.5 + score / (2 * bound) : 0.5;
  return interpolate(DIVERGING, t);
}

/** Background and readable text colour of a score (toolkit's styleOn). */
export const scoreStyle = (score, bound) => styleOn(divergingRgb(score, bound));

/** The legend's gradient, -bound (left) to +bound (right). */
export const divergingGradient = (steps = 16) => gradientOf((t) => interpolate(DIVERGING, t), steps);

/** 1-based ranks of `values` (ties share their mean rank). */
export function ranks(values) {
  const order = [...values.keys()].sort((a, b) => values[a] - values[b]);
  const out = new Float64Array(values.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && values[order[j + 1]] === values[order[i]]) j++;
    for (let k = i; k <= j; k++) out[order[k]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
}

/** Spearman's rank correlation of two score lists over the same tokens; NaN when undefined. */
export function spearman(a, b) {
  const n = Math.min(a.length, b.length);
  if (n < 2) return NaN;
  const ra = ranks(Array.from(a).slice(0, n));
  const rb = ranks(Array.from(b).slice(0, n));
  const mean = (n + 1) / 2;
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < n; i++) {
    num += (ra[i] - mean) * (rb[i] - mean);
    da += (ra[i] - mean) ** 2;
    db += (rb[i] - mean) ** 2;
  }
  return da > 0 && db > 0 ? num / Math.sqrt(da * db) : NaN;
}

/** Each pair of methods computed for the same token and contrast: {a, b, rho}. */
export function agreements(entries) {
  const out = [];
  for (let i = 0; i < entries.length; i++) {
    for (let j = i + 1; j < entries.length; j++) out.push({ a: entries[i].method, b: entries[j].method, rho: spearman(entries[i].scores, entries[j].scores) });
  }
  return out;
}

/** The key of an attribution (as logprob_viz/views/attribution_view.py names it). */
export const attributionKey = (at, method, contrastId) => `${at}|${method}|${contrastId == null ? "-" : contrastId}`;

/** Integrated gradients that did not converge, in words (null otherwise). */
export function convergenceNote(meta) {
  if (!meta || meta.converged !== false) return null;
  const share = Number.isFinite(meta.relative_error) ? `${Math.round(meta.relative_error * 100)}%` : "part";
  const steps = meta.n_steps != null ? ` with ${meta.n_steps} steps` : "";
  return `integrated gradients have not converged: the scores miss ${share} of f(input) \u2212 f(baseline)${steps}; read them with care, or compare gradient \u00d7 input and occlusion`;
}
