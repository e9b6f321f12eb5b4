// Pure helpers of the lens view: decoding the binary payload written by
// logprob_viz.views.lens_view.encode_lens, number formats and the colour scale. No DOM here.

import { asBytes, typedArray as typed } from "../payload.js";
import { decodeTexts } from "../tokens.js";

export { typed };

/** The `_payload` trait as typed arrays; [L, N] arrays are row by row (index r * n + i). */
export function decodeLens(p) {
  if (!p || typeof p.n !== "number") return null;
  const blob = asBytes(p.text);
  const offsets = typed(p.text_offsets, Uint32Array);
  const texts = decodeTexts(blob, offsets, Math.max(0, offsets.length - 1));
  return {
    n: p.n,
    L: p.n_layers,
    nBlocks: p.n_blocks,
    layers: p.layers,
    k: p.k,
    inline: !!p.inline,
    texts,
    tokenText: typed(p.token_text, Uint32Array),
    logprobs: typed(p.logprobs, Float32Array),
    ranks: typed(p.ranks, Int32Array),
    entropy: typed(p.entropy, Float32Array),
    top1Text: typed(p.top1_text, Uint32Array),
    top1Logprobs: typed(p.top1_logprobs, Float32Array),
    topText: p.inline ? typed(p.top_text, Uint32Array) : null,
    topLogprobs: p.inline ? typed(p.top_logprobs, Float32Array) : null,
  };
}

/** The token's text at position i. */
export const tokenAt = (d, i) => d.texts[d.tokenText[i]];

/**
 * Row r's alternatives for token i from the payload (inline mode): [{text, logprob, chosen}].
 * An alternative is the chosen token when its text entry is the token's: entries are per id.
 */
export function inlineAlternatives(d, r, i) {
  const rows = [];
  const base = (r * d.n + i) * d.k;
  for (let j = 0; j < d.k; j++) {
    const lp = d.topLogprobs[base + j];
    if (lp === -Infinity) continue;
    rows.push({ text: d.texts[d.topText[base + j]], logprob: lp, chosen: d.topText[base + j] === d.tokenText[i] });
  }
  return rows;
}

/** Alternatives of every row from a kernel answer ({k, token_id, texts}, [logprobs, ids]). */
export function answerAlternatives(msg, buffers) {
  const lps = typed(buffers[0], Float32Array);
  const ids = typed(buffers[1], Int32Array);
  const k = msg.k;
  return msg.texts.map((row, r) =>
    row.map((text, j) => ({ text, logprob: lps[r * k + j], chosen: ids[r * k + j] === msg.token_id })),
  );
}

/** A probability as a percentage with one decimal, "41.3%"; "<0.1%" below that; "?" unknown. */
export function percent(logprob) {
  if (Number.isNaN(logprob)) return "?";
  const pct = Math.exp(logprob) * 100;
  if (pct === 0) return "0%";
  if (pct < 0.05) return "<0.1%";
  return `${pct.toFixed(1)}%`;
}

/** A logprob with three decimals ("-1.234"), "-inf", "?" when unknown. */
export function logprobText(lp) {
  if (Number.isNaN(lp)) return "?";
  if (lp === -Infinity) return "-inf";
  const s = lp.toFixed(3);
  return s === "-0.000" ? "0.000" : s;
}

/**
 * Whitespace that would vanish in a small cell, shown by a visible mark: line breaks and tabs
 * always, spaces when the token is nothing but whitespace (" " would be an empty cell).
 * Only cells and the token axis use this; the alternatives list shows the exact text.
 */
export function visible(text) {
  const marked = text.replace(/\n/g, "↵").replace(/\t/g, "→").replace(/\r/g, "␍");
  return text.trim() === "" ? marked.replace(/ /g, "␣") : marked;
}

/** True when a token is only whitespace (or empty): the list draws its extent instead of nothing. */
export const isBlank = (text) => text.trim() === "";

// Viridis (perceptually uniform, colour-blind safe), dark = unlikely, bright = likely.
const VIRIDIS = [
  [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
  [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37],
];

/** Colour of a probability in [0, 1]; null when unknown. */
export function color(p) {
  if (!(p >= 0)) return null;
  const x = Math.min(1, p) * (VIRIDIS.length - 1);
  const lo = Math.floor(x);
  const hi = Math.min(lo + 1, VIRIDIS.length - 1);
  const f = x - lo;
  const c = VIRIDIS[lo].map((v, j) => Math.round(v + (VIRIDIS[hi][j] - v) * f));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

/** Text on a cell of probability p: dark on the bright end of viridis, light on the dark end. */
export const inkFor = (p) => (p > 0.55 ? "#111" : "#f5f5f5");

export const LEGEND_GRADIENT = `linear-gradient(to right, ${VIRIDIS.map((c) => `rgb(${c.join(",")})`).join(", ")})`;
