// Attribution numbers for the "why?" view: the diverging palette (its own, apart from the
// probability colours), its symmetric range, rank agreement between methods, and the words of a
// method's name. Pure functions: no DOM, unit-tested in node.

import { readableOn } from "../toolkit/colors.js";

/**
 * The two ends of PuOr, which stay distinct under the common colour-vision deficiencies: orange
 * pushed towards the token, purple towards the contrast (or lowered the token). A score's colour
 * is its end's colour at an opacity growing with |score|, so 0 is the page's own background, in
 * the light theme and the dark one alike.
 */
export const TOWARDS = [230, 97, 1];
export const AGAINST = [94, 60, 153];
const MAX_ALPHA = 0.85;

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

/** {rgb, alpha} of a score on the range [-bound, bound]: 0 is transparent; null for a non-finite score. */
export function divergingColor(score, bound) {
  if (!Number.isFinite(score)) return null;
  const strength = bound > 0 ? Math.min(1, Math.abs(score) / bound) : 0;
  return { rgb: score >= 0 ? TOWARDS : AGAINST, alpha: MAX_ALPHA * strength };
}

const rgba = ({ rgb, alpha }) => `rgba(${rgb.join(",")},${alpha.toFixed(3)})`;

/** Background and text colour of a score: the theme's text where the colour is faint, else black or white. */
export function scoreStyle(score, bound) {
  const c = divergingColor(score, bound);
  return c ? { background: rgba(c), color: c.alpha > 0.45 ? readableOn(c.rgb) : "" } : null;
}

/** The legend's gradient, -bound (left) to +bound (right), over the page's background as the tokens are. */
export function divergingGradient(steps = 16) {
  const stops = [];
  for (let s = 0; s <= steps; s++) stops.push(`${rgba(divergingColor(2 * (s / steps) - 1, 1))} ${((s / steps) * 100).toFixed(1)}%`);
  return `linear-gradient(to right, ${stops.join(", ")})`;
}

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

/** The key of an attribution (as logprob_viz/views/logprob/attribution.py names it). */
export const attributionKey = (at, method, contrastId) => `${at}|${method}|${contrastId == null ? "-" : contrastId}`;

/** Integrated gradients that did not converge, in words (null otherwise). */
export function convergenceNote(meta) {
  if (!meta || meta.converged !== false) return null;
  const share = Number.isFinite(meta.relative_error) ? `${Math.round(meta.relative_error * 100)}%` : "part";
  const steps = meta.n_steps != null ? ` with ${meta.n_steps} steps` : "";
  return `integrated gradients have not converged: the scores miss ${share} of f(input) \u2212 f(baseline)${steps}; read them with care`;
}
