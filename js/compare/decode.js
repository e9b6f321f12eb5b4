// Pure helpers of the compare view: decoding its binary payload (written by
// logprob_viz.views.compare_view.encode_comparison), the diverging colour scale of the difference
// mode, and number formats. No DOM here, so `npm test` runs them in node.

import { asBytes, typedArray } from "../payload.js";
import { decodeTexts } from "../tokens.js";

/** A little-endian typed array over a kernel buffer (payload.js), checked against the length expected. */
export function arrayOf(value, Ctor, name, length) {
  let out;
  try {
    out = typedArray(value, Ctor);
  } catch (err) {
    throw new RangeError(`${name}: ${err.message}`);
  }
  if (length != null && out.length !== length) throw new RangeError(`${name}: expected ${length} values, got ${out.length}`);
  return out;
}

/** Texts stored as one UTF-8 blob and offsets: an array of strings (tokens.js decodes them). */
export function textsOf(blob, offsets, name) {
  const off = arrayOf(offsets, Uint32Array, name);
  return decodeTexts(asBytes(blob), off, Math.max(0, off.length - 1));
}

function decodeRow(row, nSpans) {
  const n = row.n;
  const spanOf = arrayOf(row.span_of, Int32Array, "span_of", n);
  const altStart = arrayOf(row.alt_start, Uint32Array, "alt_start", n + 1);
  // tokens of each span, as [first, end) ranges: a span's tokens are contiguous
  const first = new Int32Array(nSpans).fill(-1);
  const end = new Int32Array(nSpans).fill(-1);
  let tailFrom = n;
  for (let i = 0; i < n; i++) {
    const s = spanOf[i];
    if (s < 0) {
      if (tailFrom === n) tailFrom = i;
      continue;
    }
    if (first[s] < 0) first[s] = i;
    end[s] = i + 1;
  }
  const tokens = textsOf(row.text, row.text_offsets, "text_offsets");
  // what the row shows: a split character whole on the token that completes it ("" on the others)
  const shown = tokens.slice();
  const split = new Uint8Array(n);
  if (row.split_tokens != null) {
    const members = arrayOf(row.split_tokens, Int32Array, "split_tokens");
    const texts = textsOf(row.split_text, row.split_offsets, "split_offsets");
    members.forEach((i, m) => {
      shown[i] = texts[m];
      split[i] = 1;
    });
  }
  return {
    n,
    tokens,
    shown,
    split,
    logprobs: arrayOf(row.logprobs, Float32Array, "logprobs", n),
    ranks: arrayOf(row.ranks, Int32Array, "ranks", n),
    spanOf,
    tailFrom,
    spanFirst: first,
    spanEnd: end,
    altStart,
    altTexts: textsOf(row.alt_text, row.alt_offsets, "alt_offsets"),
    altLogprobs: arrayOf(row.alt_logprobs, Float32Array, "alt_logprobs", altStart[n]),
  };
}

/** The compare view's payload as arrays: spans, and per row its tokens and alternatives. */
export function decodeComparison(payload) {
  if (!payload || typeof payload.n_spans !== "number") return { nRows: 0, nSpans: 0, rows: [] };
  const nRows = payload.n_rows;
  const nSpans = payload.n_spans;
  return {
    nRows,
    nSpans,
    spanStarts: arrayOf(payload.span_starts, Uint32Array, "span_starts", nSpans),
    spanEnds: arrayOf(payload.span_ends, Uint32Array, "span_ends", nSpans),
    spanLogprobs: arrayOf(payload.span_logprobs, Float32Array, "span_logprobs", nRows * nSpans),
    spanTexts: textsOf(payload.span_text, payload.span_text_offsets, "span_text_offsets"),
    rows: (payload.rows || []).map((row) => decodeRow(row, nSpans)),
  };
}

// ColorBrewer PuOr (11 classes), purple (b likelier) .. white .. orange (a likelier): a diverging
// scale readable under the common colour-vision deficiencies, unlike red-green.
const PUOR = [
  [45, 0, 75], [84, 39, 136], [128, 115, 172], [178, 171, 210], [216, 218, 235], [247, 247, 247],
  [254, 224, 182], [253, 184, 99], [224, 130, 20], [179, 88, 6], [127, 59, 8],
];

/** The diverging colour of a difference d in [-range, range] (clamped), as [r, g, b]; null if unknown. */
export function divergingColor(d, range) {
  if (d == null || Number.isNaN(d)) return null;
  const t = (Math.max(-range, Math.min(range, d)) / range + 1) / 2; // 0 .. 1
  const x = t * (PUOR.length - 1);
  const lo = Math.floor(x);
  const hi = Math.min(lo + 1, PUOR.length - 1);
  const f = x - lo;
  return PUOR[lo].map((c, ch) => Math.round(c + (PUOR[hi][ch] - c) * f));
}

/** The legend's CSS gradient of the diverging scale, -range (left) to +range (right). */
export function divergingGradient(steps = 10) {
  const stops = [];
  for (let s = 0; s <= steps; s++) {
    const rgb = divergingColor(-1 + (2 * s) / steps, 1);
    stops.push(`rgb(${rgb.join(",")}) ${((s / steps) * 100).toFixed(1)}%`);
  }
  return `linear-gradient(to right, ${stops.join(", ")})`;
}

/** A number with `digits` decimals, "?" when unknown (null, NaN, infinite). */
export function fmt(x, digits = 3) {
  return x == null || !Number.isFinite(x) ? "?" : x.toFixed(digits);
}

/** A probability from a logprob as a percentage ("<0.1%" for tiny ones, "?" when unknown). */
export function percent(logprob) {
  if (logprob == null || Number.isNaN(logprob)) return "?";
  const p = Math.exp(logprob) * 100;
  if (p === 0) return "0%";
  return p < 0.05 ? "<0.1%" : `${p.toFixed(1)}%`;
}

/** Token text made visible: spaces, tabs and newlines shown as marks (it is still inserted as text). */
export function visible(text) {
  return text.replace(/ /g, "\u2423").replace(/\t/g, "\u21e5").replace(/\n/g, "\u21b5");
}
