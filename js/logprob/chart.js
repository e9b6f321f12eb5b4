// The alternatives chart of one token: its top-K bars with the chosen token highlighted (also
// when it is outside the top K: then a marked row with its rank), an "other" bar for the mass
// outside the top K, token ids on request, and the sampled-from (processed) distribution in a
// column of its own when the trace has one.

import { h } from "../toolkit/dom.js";
import { formatLogprob, formatPercent } from "../toolkit/format.js";
import { hexBytes } from "../toolkit/tokens.js";
import { appendText } from "./text.js";
import { alternatives } from "./trace_data.js";

const clamp01 = (p) => (Number.isFinite(p) ? Math.max(0, Math.min(1, p)) : 0);

function bar(p, className) {
  const el = h("span", `lv-alt-bar ${className || ""}`.trim());
  const fill = h("span", "lv-alt-fill");
  fill.style.width = `${clamp01(p) * 100}%`;
  el.appendChild(fill);
  return el;
}

/** The mass outside the top K: 1 − Σ p over the rows (null when there are none). */
export function residual(logprobs) {
  if (!logprobs.length) return null;
  let sum = 0;
  for (const lp of logprobs) if (!Number.isNaN(lp)) sum += Math.exp(lp);
  return Math.max(0, 1 - sum);
}

function altRow(row, opts) {
  const el = h("div", `lv-alt-row${row.chosen ? " lv-chosen" : ""}${row.rank != null ? " lv-extra" : ""}`);
  const token = h("span", "lv-alt-token");
  appendText(token, row.text);
  token.title = row.text; // a property: plain text
  el.appendChild(token);
  const p = Math.exp(row.logprob);
  el.appendChild(bar(p));
  el.appendChild(h("span", "lv-alt-prob", formatPercent(p)));
  el.appendChild(h("span", "lv-alt-logprob", formatLogprob(row.logprob)));
  if (opts.processed) {
    const q = row.processed == null ? NaN : Math.exp(row.processed);
    el.appendChild(bar(q, "lv-alt-bar-processed"));
    el.appendChild(h("span", "lv-alt-prob lv-alt-prob-processed", formatPercent(q)));
  }
  if (opts.ids) el.appendChild(h("span", "lv-alt-id", row.id >= 0 ? String(row.id) : "?"));
  if (row.rank != null) {
    el.appendChild(h("span", "lv-alt-rank", row.rank > 0 ? `rank ${row.rank}, outside the top ${opts.k}` : `outside the top ${opts.k}`));
  }
  return el;
}

function otherRow(rawP, processedP, opts) {
  const el = h("div", "lv-alt-other");
  const label = h("span", "lv-alt-token", "other");
  label.title = `all the tokens outside the top ${opts.k}`;
  el.appendChild(label);
  el.appendChild(bar(rawP));
  el.appendChild(h("span", "lv-alt-prob", formatPercent(rawP)));
  el.appendChild(h("span", "lv-alt-logprob", rawP > 0 ? formatLogprob(Math.log(rawP)) : "-inf"));
  if (opts.processed) {
    el.appendChild(bar(processedP, "lv-alt-bar-processed"));
    el.appendChild(h("span", "lv-alt-prob lv-alt-prob-processed", formatPercent(processedP)));
  }
  if (opts.ids) el.appendChild(h("span", "lv-alt-id", ""));
  return el;
}

/**
 * The chart of token i. `opts`: promptLen, showIds, style (the token's colours or null),
 * pinned (bool), flags (what the source lost at this token, in words; optional).
 */
export function buildChart(data, i, opts) {
  const chart = h("div", "lv-chart");
  chart.setAttribute("data-index", String(i));

  const title = h("div", "lv-chart-title");
  const chip = h("span", "lv-chip");
  appendText(chip, data.tokens[i]);
  if (opts.style) {
    chip.style.background = opts.style.background;
    chip.style.color = opts.style.color;
  }
  title.appendChild(chip);
  const where = `token ${i + 1} of ${data.n} \u00b7 ${i < opts.promptLen ? "prompt" : "completion"}`;
  title.appendChild(h("span", "lv-chart-where", opts.showIds && data.tokenIds[i] >= 0 ? `${where} \u00b7 id ${data.tokenIds[i]}` : where));
  chart.appendChild(title);
  const split = data.splitOf(i);
  if (split) {
    // A piece of a character split across tokens: which piece, of what, and its own bytes.
    const note = h("div", "lv-chart-split", `piece ${split.piece + 1} of ${split.end - split.start} of `);
    const whole = h("span", "lv-chip");
    appendText(whole, split.text);
    note.appendChild(whole);
    note.appendChild(h("span", "lv-split-bytes", ` \u00b7 bytes ${hexBytes(split.bytes)}`));
    chart.appendChild(note);
  }

  for (const note of opts.flags || []) {
    // What the source of this trace lost at this token (Trace.flags), in words.
    chart.appendChild(h("div", "lv-chart-flag", `\u26a0 ${note}`));
  }

  const stats = h("div", "lv-chart-stats");
  const lp = data.logprobs[i];
  stats.appendChild(h("span", "lv-stat", `p ${formatPercent(Math.exp(lp))}`));
  stats.appendChild(h("span", "lv-stat", `logprob ${formatLogprob(lp)}`));
  const rank = data.ranks[i];
  stats.appendChild(h("span", "lv-stat lv-rank", rank > 0 ? `rank ${rank}` : "rank ?"));
  const ent = data.entropy[i];
  if (!Number.isNaN(ent)) stats.appendChild(h("span", "lv-stat lv-entropy", `entropy ${ent.toFixed(2)} nats`));
  if (data.processedLogprobs && !Number.isNaN(data.processedLogprobs[i])) {
    stats.appendChild(h("span", "lv-stat lv-processed", `sampled p ${formatPercent(Math.exp(data.processedLogprobs[i]))}`));
  }
  chart.appendChild(stats);

  const { rows, extra } = alternatives(data, i);
  if (rows.length === 0 && !extra) {
    chart.appendChild(h("div", "lv-chart-empty", data.k === 0 ? "No alternatives were recorded (top_logprobs=0)." : "No alternatives for this token."));
    return chart;
  }
  const processed = data.processedTopLogprobs != null;
  const o = { k: data.k, processed, ids: !!opts.showIds };
  const table = h("div", `lv-alts${processed ? " lv-alts-processed" : ""}${o.ids ? " lv-alts-ids" : ""}`);
  const head = h("div", "lv-alt-head");
  const labels = [`top ${data.k}`, processed ? "model" : "", "prob", "logprob"];
  if (processed) labels.push("sampled from", "prob");
  if (o.ids) labels.push("id");
  for (const label of labels) head.appendChild(h("span", null, label));
  table.appendChild(head);
  for (const row of rows) table.appendChild(altRow(row, o));
  if (extra) {
    table.appendChild(h("div", "lv-alt-gap", "\u22ef"));
    table.appendChild(altRow(extra, o));
  }
  const raw = residual(rows.map((r) => r.logprob));
  if (raw != null) {
    const proc = processed ? residual(rows.map((r) => (r.processed == null ? NaN : r.processed))) : null;
    table.appendChild(otherRow(raw, proc, o));
  }
  chart.appendChild(table);
  if (processed) {
    chart.appendChild(h("div", "lv-chart-note", "model: the distribution the model gave; sampled from: after temperature / top-p / top-k"));
  }
  if (opts.pinned) chart.appendChild(h("div", "lv-chart-note lv-pin-note", "pinned \u00b7 \u2190 \u2192 move \u00b7 Esc releases"));
  return chart;
}

export const ROW_PX = 24; // about one row of the chart, until a real one is measured

/** The panel's height before it can be measured (detached): room for K alternatives at ~24 px a row. */
export function panelEstimate(data) {
  return data.k === 0 ? 140 : 160 + (data.k + 3) * ROW_PX + (data.processedLogprobs ? 34 : 0);
}

/** The token whose chart is tallest: the most alternatives (over the first tokens: enough to find K). */
export function tallest(data) {
  let best = 0;
  for (let i = 0; i < Math.min(data.n, 5000) && data.topCount(best) < data.k; i++) if (data.topCount(i) > data.topCount(best)) best = i;
  return best;
}
