// Colour modes of the heatmap: what number of a token is coloured (probability, surprisal,
// entropy, rank bucket, p / p(top-1)), over which range, with which colour-blind-safe palette.
// Pure functions: no DOM, unit-tested in node. The palettes themselves are the toolkit's.

import { gradientOf, paletteColor, styleOn } from "../toolkit/colors.js";
import { DECIDED } from "./decided.js";

/** GLTR's rank buckets, coloured with the Okabe–Ito palette (distinct under colour-blindness). */
export const RANK_BUCKETS = [
  { label: "top 1", max: 1, rgb: [86, 180, 233] },
  { label: "top 10", max: 10, rgb: [0, 158, 115] },
  { label: "top 100", max: 100, rgb: [240, 228, 66] },
  { label: "top 1000", max: 1000, rgb: [230, 159, 0] },
  { label: "> 1000", max: Infinity, rgb: [204, 121, 167] },
];

/**
 * The modes. `value(data, i)` is the number shown (NaN when unknown); `range` the default
 * legend range; `confident` says which end of the range is the confident one (drawn bright).
 */
export const MODES = {
  probability: {
    label: "probability",
    range: [0, 1],
    confident: "high",
    value: (d, i) => Math.exp(d.logprobs[i]),
    format: (x) => `${Math.round(x * 100)}%`,
  },
  logprob: {
    label: "surprisal (−logprob, nats)",
    range: [0, 10],
    confident: "low",
    value: (d, i) => -d.logprobs[i],
    format: (x) => trim(x),
  },
  entropy: {
    label: "entropy (nats)",
    range: [0, 5],
    confident: "low",
    value: (d, i) => d.entropy[i],
    format: (x) => trim(x),
  },
  rank: {
    label: "rank (GLTR buckets)",
    range: null,
    value: (d, i) => (d.ranks[i] > 0 ? d.ranks[i] : NaN),
  },
  ratio: {
    label: "p / p(top-1)",
    range: [0, 1],
    confident: "high",
    value: ratio,
    format: (x) => trim(x),
  },
  decided: DECIDED, // only with a lens (decided.js)
};

function trim(x) {
  return Number.isInteger(x) ? String(x) : x.toFixed(2).replace(/0+$/, "").replace(/\.$/, "");
}

/** p(chosen) / p(most likely): 1 when the chosen token was the model's first choice. */
function ratio(d, i) {
  const lp = d.logprobs[i];
  if (Number.isNaN(lp)) return NaN;
  if (d.ranks[i] === 1) return 1;
  const top = d.k > 0 && d.topCount(i) > 0 ? d.topLogprobs[i * d.k] : NaN;
  if (Number.isNaN(top)) return NaN;
  return Math.min(1, Math.exp(lp - Math.max(top, lp)));
}

/** The mode named `name`, or probability when the name is unknown. */
export function mode(name) {
  return MODES[name] ?? MODES.probability;
}

/** The rank bucket (index into RANK_BUCKETS) of a 1-based rank. */
export function rankBucket(rank) {
  return RANK_BUCKETS.findIndex((b) => rank <= b.max);
}

/**
 * A colour scale: `rgb(value)` gives [r, g, b] or null (unknown). `range` overrides the mode's
 * default [lo, hi]; values outside it are clamped. The unconfident end (the tokens worth seeing)
 * is the one that stands out from the background: on a light one (`dark` false) the confident
 * end is the palette's bright end, so the least likely tokens are its darkest; on a dark one it
 * is the other way round, or the least likely tokens would be dark purple on near-black.
 */
export function scale(modeName, palette = "viridis", range = null, dark = false) {
  const m = mode(modeName);
  if (!m.range) {
    return { mode: m, range: null, rgb: (v) => (Number.isNaN(v) ? null : RANK_BUCKETS[rankBucket(v)].rgb) };
  }
  const [lo, hi] = validRange(range) ?? m.range;
  const rgb = (v) => {
    if (v == null || Number.isNaN(v)) return null;
    if (m.never && v === m.never.value) return m.never.rgb;
    let t = (v - lo) / (hi - lo);
    if ((m.confident === "low") !== dark) t = 1 - t;
    return paletteColor(palette, t);
  };
  return { mode: m, range: [lo, hi], rgb, dark };
}

function validRange(range) {
  if (!Array.isArray(range) || range.length !== 2) return null;
  const [lo, hi] = range.map(Number);
  return Number.isFinite(lo) && Number.isFinite(hi) && hi > lo ? [lo, hi] : null;
}

/** The legend's CSS gradient, lo (left) to hi (right), sampled from the scale itself. */
export function gradient(sc, steps = 10) {
  const [lo, hi] = sc.range;
  return gradientOf((t) => sc.rgb(lo + (hi - lo) * t), steps);
}

/** Five tick labels across the scale's range. */
export function ticks(sc) {
  const [lo, hi] = sc.range;
  return [0, 0.25, 0.5, 0.75, 1].map((f) => sc.mode.format(lo + (hi - lo) * f));
}

/** Background and text colour of token i under a scale; null when its value is unknown. */
export function tokenStyle(sc, data, i) {
  return styleOn(sc.rgb(sc.mode.value(data, i)));
}
