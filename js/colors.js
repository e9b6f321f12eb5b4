// Colour modes of the heatmap: what number of a token is coloured (probability, surprisal,
// entropy, rank bucket, p / p(top-1)), over which range, with which colour-blind-safe palette.
// Pure functions: no DOM, unit-tested in node.

/** Perceptually uniform palettes, safe for the common colour-vision deficiencies, dark to bright. */
export const PALETTES = {
  viridis: [
    [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
    [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
  ],
  cividis: [[0, 34, 78], [64, 77, 107], [124, 123, 120], [188, 175, 111], [254, 232, 56]],
  magma: [[0, 0, 4], [81, 18, 124], [183, 55, 121], [252, 137, 97], [252, 253, 191]],
};

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

/** The palette's colour at t in [0, 1] as [r, g, b], interpolated linearly between its samples. */
export function paletteColor(palette, t) {
  const stops = PALETTES[palette] ?? PALETTES.viridis;
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (stops.length - 1);
  const lo = Math.floor(x);
  const hi = Math.min(lo + 1, stops.length - 1);
  const f = x - lo;
  return stops[lo].map((c, ch) => Math.round(c + (stops[hi][ch] - c) * f));
}

/** The rank bucket (index into RANK_BUCKETS) of a 1-based rank. */
export function rankBucket(rank) {
  return RANK_BUCKETS.findIndex((b) => rank <= b.max);
}

/**
 * A colour scale: `rgb(value)` gives [r, g, b] or null (unknown). `range` overrides the mode's
 * default [lo, hi]; values outside it are clamped. The confident end is always the bright one.
 */
export function scale(modeName, palette = "viridis", range = null) {
  const m = mode(modeName);
  if (!m.range) {
    return { mode: m, range: null, rgb: (v) => (Number.isNaN(v) ? null : RANK_BUCKETS[rankBucket(v)].rgb) };
  }
  const [lo, hi] = validRange(range) ?? m.range;
  const rgb = (v) => {
    if (v == null || Number.isNaN(v)) return null;
    let t = (v - lo) / (hi - lo);
    if (m.confident === "low") t = 1 - t;
    return paletteColor(palette, t);
  };
  return { mode: m, range: [lo, hi], rgb };
}

function validRange(range) {
  if (!Array.isArray(range) || range.length !== 2) return null;
  const [lo, hi] = range.map(Number);
  return Number.isFinite(lo) && Number.isFinite(hi) && hi > lo ? [lo, hi] : null;
}

/** The legend's CSS gradient, lo (left) to hi (right), sampled from the scale itself. */
export function gradient(sc, steps = 10) {
  const [lo, hi] = sc.range;
  const stops = [];
  for (let s = 0; s <= steps; s++) {
    const v = lo + ((hi - lo) * s) / steps;
    stops.push(`rgb(${sc.rgb(v).join(",")}) ${((s / steps) * 100).toFixed(1)}%`);
  }
  return `linear-gradient(to right, ${stops.join(", ")})`;
}

/** Five tick labels across the scale's range. */
export function ticks(sc) {
  const [lo, hi] = sc.range;
  return [0, 0.25, 0.5, 0.75, 1].map((f) => sc.mode.format(lo + (hi - lo) * f));
}

/** Black or white, whichever contrasts more with the background (WCAG relative luminance). */
export function readableOn([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  return (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) ? "#000" : "#fff";
}

/** Background and text colour of token i under a scale; null when its value is unknown. */
export function tokenStyle(sc, data, i) {
  const rgb = sc.rgb(sc.mode.value(data, i));
  return rgb ? { background: `rgb(${rgb.join(",")})`, color: readableOn(rgb) } : null;
}
