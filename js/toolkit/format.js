// Numbers as every view shows them. A value the source did not give is never invented: the
// formats say "?", and a header leaves such a value out (see `known`). No DOM: tested in node.

/** Whether the kernel sent a number (null / NaN: the source did not give it). */
export const known = (x) => x != null && !Number.isNaN(x);

/** A probability as a percentage with one decimal, "41.3%"; "<0.1%" below that (the logprob says how small). */
export function formatPercent(p) {
  if (!known(p)) return "?";
  const pct = p * 100;
  if (pct === 0) return "0%";
  if (pct < 0.05) return "<0.1%";
  return `${pct.toFixed(1)}%`;
}

/** The probability of a logprob as `formatPercent` shows it ("?" when unknown). */
export const percentOfLogprob = (lp) => (known(lp) ? formatPercent(Math.exp(lp)) : "?");

/** A logprob with three decimals ("-0.884"); "-inf" for an impossible token, "?" when unknown. */
export function formatLogprob(lp) {
  if (!known(lp)) return "?";
  if (lp === -Infinity) return "-inf";
  const s = lp.toFixed(3);
  return s === "-0.000" ? "0.000" : s;
}

/** A number with `digits` decimals, "?" when unknown (null, NaN, infinite). */
export function formatFixed(x, digits = 3) {
  return x == null || !Number.isFinite(x) ? "?" : x.toFixed(digits);
}

/** A number for a header, e.g. perplexity: "12.34"; large ones in exponent form ("?" when unknown). */
export function formatStat(x, digits = 2) {
  if (!known(x)) return "?";
  if (Math.abs(x) >= 1e5) return x.toExponential(2);
  return x.toFixed(digits);
}
