// The LogprobView's header line: sizes and the numbers the source allowed.

import { formatStat, known } from "../toolkit/format.js";

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
