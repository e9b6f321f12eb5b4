// The choices view's data: the payload read through the toolkit's codec, and what a bar says.
// No DOM: tested in node.

import { readArray, readTexts } from "../toolkit/codec.js";
import { formatLogprob, formatPercent } from "../toolkit/format.js";

/** The payload (views/choices/view.py `encode_choices`) as plain arrays: rows x options. `option(r, j)`
 * is row r's option j: the same N texts for every row, or each row's own (`per_prompt`: R x N texts). */
export function decodeChoices(payload) {
  const nRows = payload.n_rows;
  const nOptions = payload.n_options;
  const probs = readArray(payload.probs, "probs");
  const logprobs = readArray(payload.logprobs, "logprobs");
  const nTokens = readArray(payload.n_tokens, "n_tokens");
  const flagged = readArray(payload.flagged, "flagged");
  const at = (arr, r, j) => arr[r * nOptions + j];
  const options = readTexts(payload.options, "options");
  return {
    nRows,
    nOptions,
    length: payload.length,
    prompts: readTexts(payload.prompts, "prompts"),
    options,
    perPrompt: Boolean(payload.per_prompt),
    option: payload.per_prompt ? (r, j) => at(options, r, j) : (_r, j) => options[j],
    gold: readArray(payload.gold, "gold"),
    prob: (r, j) => at(probs, r, j),
    logprob: (r, j) => at(logprobs, r, j),
    tokens: (r, j) => at(nTokens, r, j),
    flagged: (r, j) => at(flagged, r, j) === 1,
  };
}

/** The option a row predicts: the highest probability (the first of equal ones). */
export function predictedOption(data, r) {
  let best = 0;
  for (let j = 1; j < data.nOptions; j++) if (data.prob(r, j) > data.prob(r, best)) best = j;
  return best;
}

/** The words of a bar: its probability, and (in the tooltip) the logprob sum and token count. */
export function barWords(data, r, j) {
  const n = data.tokens(r, j);
  const norm = data.length === "sum" ? "" : ` (probability from the logprob ${data.length.replace("_", " ")})`;
  return {
    percent: formatPercent(data.prob(r, j)),
    title: `logprob ${formatLogprob(data.logprob(r, j))} over ${n} token${n === 1 ? "" : "s"}${norm}` +
      (data.flagged(r, j) ? "; a token is flagged (see the view below)" : ""),
  };
}

/** The end of a prompt, which its options follow: whole words, at most `chars` characters, "…" before
 * a cut (made between words: a word is never shown in part, unless one word alone is longer). */
export function promptTail(text, chars = 240) {
  const flat = text.replace(/[\n\r\t]+/g, " ");
  if (flat.length <= chars) return flat;
  const tail = flat.slice(flat.length - chars + 1);
  const space = tail.search(/\s\S/); // the start of the first whole word in the tail
  return `…${space >= 0 ? tail.slice(space + 1) : tail}`;
}
