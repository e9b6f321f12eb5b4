// Pure helpers of the compare view: its payload (logprob_viz.views.compare.view.encode_comparison)
// read through the wire codec (toolkit/codec.js), and the diverging colour scale of the
// difference mode. No DOM here, so `npm test` runs them in node.

import { interpolate, gradientOf } from "../toolkit/colors.js";
import { readTexts, sizedArray } from "../toolkit/codec.js";

function decodeRow(row, nSpans) {
  const n = row.n;
  const spanOf = sizedArray(row, "span_of", n);
  const altStart = sizedArray(row, "alt_start", n + 1);
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
  const tokens = readTexts(row.tokens, "tokens");
  if (tokens.length !== n) throw new RangeError(`a compare row has ${tokens.length} token texts, expected ${n}`);
  // what the row shows: a split character whole on the token that completes it ("" on the others)
  const shown = tokens.slice();
  const split = new Uint8Array(n);
  if (row.split_tokens != null) {
    const members = sizedArray(row, "split_tokens");
    const texts = readTexts(row.split_texts, "split_texts");
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
    logprobs: sizedArray(row, "logprobs", n),
    ranks: sizedArray(row, "ranks", n),
    spanOf,
    tailFrom,
    spanFirst: first,
    spanEnd: end,
    altStart,
    altTexts: readTexts(row.alt_texts, "alt_texts"),
    altLogprobs: sizedArray(row, "alt_logprobs", altStart[n]),
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
    spanStarts: sizedArray(payload, "span_starts", nSpans),
    spanEnds: sizedArray(payload, "span_ends", nSpans),
    spanLogprobs: sizedArray(payload, "span_logprobs", nRows * nSpans),
    spanTexts: readTexts(payload.span_texts, "span_texts"),
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
  return interpolate(PUOR, (Math.max(-range, Math.min(range, d)) / range + 1) / 2);
}

/** The legend's CSS gradient of the diverging scale, -range (left) to +range (right). */
export const divergingGradient = (steps = 10) => gradientOf((t) => divergingColor(2 * t - 1, 1), steps);
