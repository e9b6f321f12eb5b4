// Pure helpers of the lens view: its payload (logprob_viz.views.lens.view.encode_lens) and the
// kernel's detail answers, read through the wire codec (toolkit/codec.js); the cell colours.
// No DOM here.

import { readArray, readTexts, sizedArray } from "../toolkit/codec.js";
import { paletteColor, styleOn } from "../toolkit/colors.js";

/** The `_payload` trait as typed arrays; [L, N] arrays are row by row (index r * n + i). */
export function decodeLens(p) {
  if (!p || typeof p.n !== "number") return null;
  const cells = p.n_layers * p.n;
  return {
    n: p.n,
    L: p.n_layers,
    nBlocks: p.n_blocks,
    layers: p.layers,
    k: p.k,
    inline: !!p.inline,
    texts: readTexts(p.texts, "texts"),
    tokenText: sizedArray(p, "token_text", p.n),
    logprobs: sizedArray(p, "logprobs", cells),
    ranks: sizedArray(p, "ranks", cells),
    entropy: sizedArray(p, "entropy", cells),
    kl: p.kl_to_final ? sizedArray(p, "kl_to_final", cells) : null,
    top1Text: sizedArray(p, "top1_text", cells),
    top1Logprobs: sizedArray(p, "top1_logprobs", cells),
    topText: p.inline ? sizedArray(p, "top_text", cells * p.k) : null,
    topLogprobs: p.inline ? sizedArray(p, "top_logprobs", cells * p.k) : null,
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

/** Alternatives of every row from a kernel answer's payload ({token_id, texts [L][K], top_logprobs, top_ids [L, K]}). */
export function answerAlternatives(answer) {
  const lps = readArray(answer.top_logprobs, "top_logprobs");
  const ids = sizedArray(answer, "top_ids", lps.length);
  const k = answer.top_logprobs.shape[1];
  return answer.texts.map((row, r) =>
    row.map((text, j) => ({ text, logprob: lps[r * k + j], chosen: ids[r * k + j] === answer.token_id })),
  );
}

/** Colours of a cell of probability p ({background, color}, the text readable on it); null when unknown. */
export const cellStyle = (p) => (p >= 0 ? styleOn(paletteColor("viridis", p)) : null);
