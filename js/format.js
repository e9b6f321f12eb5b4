// Numbers as the view shows them. A value the source did not give is never invented: the
// formats say "?" inside a chart row, and the header leaves such a value out (see `known`).

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

/** A logprob with three decimals ("-0.884"); "-inf" for an impossible token, "?" when unknown. */
export function formatLogprob(lp) {
  if (!known(lp)) return "?";
  if (lp === -Infinity) return "-inf";
  const s = lp.toFixed(3);
  return s === "-0.000" ? "0.000" : s;
}

/** A number for the header, e.g. perplexity: "12.34" (callers leave out values that are not `known`). */
export function formatStat(x, digits = 2) {
  if (!known(x)) return "?";
  if (Math.abs(x) >= 1e5) return x.toExponential(2);
  return x.toFixed(digits);
}

/** The header: sizes and the numbers the source allowed (a value it did not give is left out, not "?"). */
export function headerText(data) {
  const { n, promptLen, summary = {}, meta = {} } = data;
  const parts = [`${n} tokens (${promptLen} prompt, ${n - promptLen} completion)`];
  if (known(summary.perplexity)) parts.push(`perplexity ${formatStat(summary.perplexity, 2)}`);
  if (known(summary.mean_logprob)) parts.push(`mean logprob ${formatStat(summary.mean_logprob, 3)}`);
  if (known(summary.mean_entropy)) parts.push(`mean entropy ${formatStat(summary.mean_entropy, 2)} nats`);
  if (meta.model) parts.push(String(meta.model));
  if (meta.source) parts.push(String(meta.source));
  return parts.join(" \u00b7 ");
}
