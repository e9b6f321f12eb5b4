// Whole-trace summaries the view draws: the least-confident tokens to jump through, the panel's
// overview before any token is shown, and the per-token surprisal strip's bins. Pure functions,
// unit-tested in node.

/**
 * Indices of the `count` tokens with the lowest known logprob, least confident first (ties: earlier
 * first), among the tokens from index `from` on.
 */
export function leastConfident(logprobs, count = 20, from = 0) {
  // One pass keeping the `count` lowest in order: O(n) for 100,000 tokens, no full sort.
  const best = [];
  if (count <= 0) return best;
  for (let i = Math.max(0, from); i < logprobs.length; i++) {
    const lp = logprobs[i];
    if (Number.isNaN(lp) || (best.length === count && lp >= logprobs[best[count - 1]])) continue;
    let j = best.length;
    while (j > 0 && logprobs[best[j - 1]] > lp) j--;
    best.splice(j, 0, i);
    if (best.length > count) best.pop();
  }
  return best;
}

/**
 * What the panel shows before any token is hovered or pinned (overview.js): the `count` tokens
 * the model gave the lowest probability, and the mean probability and perplexity, over the
 * generated tokens (index >= promptLen) — over every token when the whole trace is given text (a
 * scored text: promptLen = n). Tokens whose logprob is unknown count in neither, and are counted
 * apart (`unknown`). One pass over the trace: computed once per change of the trace, not per hover.
 */
export function overviewOf(data, count = 5) {
  const { n, logprobs } = data;
  const scored = data.promptLen >= n;
  const from = scored ? 0 : data.promptLen;
  let known = 0;
  let sumP = 0;
  let sumLogprob = 0;
  for (let i = from; i < n; i++) {
    const lp = logprobs[i];
    if (Number.isNaN(lp)) continue;
    known++;
    sumP += Math.exp(lp);
    sumLogprob += lp;
  }
  return {
    scored,
    known, // the tokens the numbers are over
    unknown: n - from - known,
    meanP: known ? sumP / known : NaN,
    perplexity: known ? Math.exp(-sumLogprob / known) : NaN,
    least: leastConfident(logprobs, count, from), // (logprobs holds the n tokens on show: trace_data.js)
  };
}

/**
 * The surprisal strip: `width` bins over n tokens, each holding the largest surprisal (−logprob)
 * of its tokens (NaN when none is known), so one surprising token stays visible in 100,000.
 */
export function stripBins(logprobs, width) {
  const n = logprobs.length;
  const bins = new Float32Array(Math.max(0, width)).fill(NaN);
  for (let i = 0; i < n; i++) {
    const lp = logprobs[i];
    if (Number.isNaN(lp)) continue;
    const b = Math.min(width - 1, Math.floor((i * width) / n));
    const s = -lp;
    if (!(bins[b] >= s)) bins[b] = s;
  }
  return bins;
}

/** The token under x (pixels from the strip's left edge) of a strip `width` pixels wide over n tokens. */
export function stripIndex(x, width, n) {
  if (n <= 0 || width <= 0) return -1;
  return Math.max(0, Math.min(n - 1, Math.floor((x / width) * n)));
}

/** The strip's x (pixels) of the middle of token i's bin span. */
export function stripX(i, width, n) {
  return n > 0 ? ((i + 0.5) / n) * width : 0;
}
