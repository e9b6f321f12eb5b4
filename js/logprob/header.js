// The LogprobView's header line: sizes and the numbers the source allowed.

import { formatStat, known } from "../toolkit/format.js";

/**
 * Over which tokens the perplexity is (numbered from 1, as the chart numbers them): the first to
 * the last token whose logprob is known, so it reads beside the explorer's " over tokens 9–35".
 */
function scoredSpan(logprobs) {
  if (!logprobs) return "";
  let first = -1;
  let last = -1;
  for (let i = 0; i < logprobs.length; i++) if (!Number.isNaN(logprobs[i])) (first = first < 0 ? i : first), (last = i);
  return first < 0 ? "" : ` over tokens ${first + 1}\u2013${last + 1}`;
}

/** The header: sizes and the numbers the source allowed (a value it did not give is left out, not "?"). */
export function headerText(data) {
  const { n, promptLen, summary = {}, meta = {} } = data;
  const parts = [`${n} tokens (${promptLen} prompt, ${n - promptLen} completion)`];
  if (known(summary.perplexity)) parts.push(`perplexity ${formatStat(summary.perplexity, 2)}${scoredSpan(data.logprobs)}`);
  if (known(summary.mean_logprob)) parts.push(`mean logprob ${formatStat(summary.mean_logprob, 3)}`);
  if (known(summary.mean_entropy)) parts.push(`mean entropy ${formatStat(summary.mean_entropy, 2)} nats`);
  if (meta.model) parts.push(String(meta.model));
  if (meta.source) parts.push(String(meta.source));
  return parts.join(" \u00b7 ");
}
