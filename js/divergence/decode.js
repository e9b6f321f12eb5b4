// Pure helpers of the divergence view: its payload (logprob_viz.views.divergence.payload) read
// through the wire codec, and how a KL range or a side's probability is written. No DOM: tested in node.

import { readTexts, sizedArray } from "../toolkit/codec.js";
import { formatPercent } from "../toolkit/format.js";

const PER_TOKEN = ["kld_low", "kld_high", "delta_p", "same_top", "base_logprob", "cand_logprob", "base_floor", "cand_floor"];

/** The decoded payload: per-token arrays (camelCase), tokens, and each position's alternatives. */
export function decodeDivergence(payload) {
  if (!payload || payload.n == null) return { n: 0, tokens: [], altStart: new Uint32Array(1) };
  const n = payload.n;
  const out = { n, tokens: readTexts(payload.tokens, "tokens") };
  if (out.tokens.length !== n) throw new RangeError(`the divergence payload has ${out.tokens.length} token texts, expected ${n}`);
  for (const name of PER_TOKEN) out[name.replace(/_(\w)/g, (_, c) => c.toUpperCase())] = sizedArray(payload, name, n);
  out.altStart = sizedArray(payload, "alt_start", n + 1);
  const m = out.altStart[n];
  out.altTexts = readTexts(payload.alt_texts, "alt_texts");
  out.altBase = sizedArray(payload, "alt_base", m);
  out.altCand = sizedArray(payload, "alt_cand", m);
  out.altChosen = sizedArray(payload, "alt_chosen", m);
  return out;
}

const num = (x, digits = 4) => (Number.isFinite(x) ? x.toPrecision(digits).replace(/\.?0+(e|$)/, "$1") : x === Infinity ? "\u221e" : "?");

/** A KL in nats: one number where exact (low == high), else "[low, high]" (never one number for a range). */
export function klText(low, high) {
  if (Number.isNaN(low)) return "not scored";
  return low === high ? num(low) : `[${num(low)}, ${num(high)}]`;
}

/** A header range [low, high] from JSON (null: unbounded above). */
export const rangeText = ([low, high]) => klText(low ?? NaN, high ?? Infinity);

/** A side's probability of an alternative: its percentage, or "≤ p" (its smallest listed) where it does not list it. */
export function sideP(lp, floor) {
  if (!Number.isNaN(lp)) return formatPercent(Math.exp(lp));
  return Number.isNaN(floor) ? "?" : `\u2264${formatPercent(Math.exp(floor))}`;
}

/** Δp = q − p of an alternative, as a signed percentage; "?" where a side does not give it. */
export function deltaText(baseLp, candLp) {
  if (Number.isNaN(baseLp) || Number.isNaN(candLp)) return "?";
  const d = (Math.exp(candLp) - Math.exp(baseLp)) * 100;
  const size = Math.abs(d);
  // a tiny Δp keeps two significant digits ("+0.0012%"), not "+0.00%"
  const shown = size !== 0 && size < 0.01 ? size.toPrecision(2) : size.toFixed(2);
  return `${d >= 0 ? "+" : "\u2212"}${shown}%`;
}

/** The colour level in [0, 1] of token i: its KL (the lower end of a range) or |Δp|, over the mode's range. */
export function level(data, i, mode, range) {
  const v = mode === "delta_p" ? Math.abs(data.deltaP[i]) : data.kldLow[i];
  if (!Number.isFinite(v)) return NaN;
  return Math.min(1, Math.max(0, v / range));
}

/** The next flip after position `at` (wrapping round); -1 when there is none. */
export function nextFlip(flips, at) {
  if (!flips.length) return -1;
  return flips.find((f) => f > at) ?? flips[0];
}
