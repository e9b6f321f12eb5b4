// Whole-trace summaries the view draws: the least-confident tokens to jump through and the
// per-token surprisal strip's bins. Pure functions, unit-tested in node.

/** Indices of the `count` tokens with the lowest known logprob, least confident first (ties: earlier first). */
export function leastConfident(logprobs, count = 20) {
  // One pass keeping the `count` lowest in order: O(n) for 100,000 tokens, no full sort.
  const best = [];
  for (let i = 0; i < logprobs.length; i++) {
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
