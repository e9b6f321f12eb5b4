// The alternatives chart of one token: its top-K bars with the chosen token highlighted (also
// when it is outside the top K: then a marked row with its rank), an "other" bar for the mass
// outside the top K, token ids on request, and a second column of probabilities where there is one
// (`secondColumn`): in the explorer, the pinned token's p under the sliders, the readout's numbers; in
// a plain view, the distribution a sampled token was sampled from, with the settings it was sampled at.
//
// A `Chart` is one set of elements updated in place for each token shown: hovering changes the
// texts, widths and classes of the rows it has, and adds or removes rows only when the count
// changes, so a hover restyles and lays out a few changed nodes instead of a new chart.

import { h } from "../toolkit/dom.js";
import { formatLogprob, formatPercent } from "../toolkit/format.js";
import { hexBytes } from "../toolkit/tokens.js";
import { branchHint } from "./explorer.js";
import { appendText } from "./text.js";
import { alternatives } from "./trace_data.js";

const clamp01 = (p) => (Number.isFinite(p) ? Math.max(0, Math.min(1, p)) : 0);

/** The mass outside the top K: 1 − Σ p over the rows (null when there are none). */
export function residual(logprobs) {
  if (!logprobs.length) return null;
  let sum = 0;
  for (const lp of logprobs) if (!Number.isNaN(lp)) sum += Math.exp(lp);
  return Math.max(0, 1 - sum);
}

// Writes that skip an unchanged value: an unchanged node is not restyled or laid out again.
function setText(el, text) {
  if (el.lvText !== text) el.textContent = el.lvText = text;
}
function setClass(el, className) {
  if (el.className !== className) el.className = className;
}
/**
 * Token text with its whitespace made visible (appendText). The nodes it had are kept where the
 * new text has the same kind of node there (a text node gets the new characters; an equal mark
 * stays): most alternatives are " word", so a hover changes text, not elements, which need styling.
 */
function setTokenText(el, text) {
  if (el.lvToken === text) return;
  el.lvToken = text;
  const fresh = h("span");
  appendText(fresh, text);
  const now = [...el.childNodes];
  const next = [...fresh.childNodes];
  next.forEach((node, j) => {
    const old = now[j];
    if (!old) el.appendChild(node);
    else if (old.nodeType === Node.TEXT_NODE && node.nodeType === Node.TEXT_NODE) {
      if (old.data !== node.data) old.data = node.data;
    } else if (!old.isEqualNode(node)) el.replaceChild(node, old);
  });
  for (let j = next.length; j < now.length; j++) now[j].remove();
}
/** Make `parent`'s children exactly `wanted`, touching the DOM only from where they first differ. */
function setChildren(parent, wanted) {
  const now = parent.childNodes;
  let same = 0;
  while (same < wanted.length && now[same] === wanted[same]) same++;
  if (same === wanted.length && now.length === wanted.length) return;
  while (now.length > same) parent.lastChild.remove();
  parent.append(...wanted.slice(same));
}

/** A bar: a track and its fill, whose width is set by `setBar`. */
function bar(className) {
  const el = h("span", `lv-alt-bar ${className || ""}`.trim());
  el.appendChild(h("span", "lv-alt-fill"));
  return el;
}
function setBar(el, p) {
  const width = `${clamp01(p) * 100}%`;
  if (el.lvWidth !== width) el.firstChild.style.width = el.lvWidth = width;
}

/**
 * A column's value as shown: [low, high] (equal when exact; "cut off" at 0), "\u2026" while it is
 * being computed, "" where the column has none (the "other" row of a server's ranges).
 */
export function columnText(value) {
  if (!Array.isArray(value)) return value ?? "\u2026";
  const [low, high] = value;
  if (high === 0) return "cut off";
  return low === high ? formatPercent(low) : `${formatPercent(low)}\u2013${formatPercent(high)}`;
}
function setColumn(row, value) {
  setBar(row.qbar, Array.isArray(value) ? value[0] : 0);
  setText(row.qprob, columnText(value));
  // the number itself, unrounded, where it is one (what a test compares with the readout's)
  if (Array.isArray(value) && value[0] === value[1]) row.qprob.dataset.p = String(value[0]);
  else delete row.qprob.dataset.p;
}

/** The sampling settings in words, as the explorer's readout says them (pinned_html.settings_words). */
export function settingsWords(s) {
  if (!(s.temperature > 0)) return "T = 0 (greedy)";
  const words = [`T = ${s.temperature.toFixed(2)}`];
  if (s.top_k > 0) words.push(`top-k ${s.top_k}`);
  if (s.top_p != null && s.top_p < 1) words.push(`top-p ${s.top_p.toFixed(2)}`);
  if (s.min_p > 0) words.push(`min-p ${s.min_p.toFixed(2)}`);
  return words.join(", ");
}

/**
 * The chart's second column at token i, or null where there is none: `opts.column` when the caller
 * gives one (the explorer: its sliders' column for the pinned token; null: none), otherwise the
 * distribution token i was sampled from, only where it was sampled (not a prompt token, not one
 * chosen by hand, not greedy: there the trace holds NaN / -inf, which are no probabilities).
 * A column is {head, note, stat, chosen, valueOf(alt), otherOf(rows)}; values as `columnText`'s.
 */
export function secondColumn(data, i, opts) {
  if (opts.column !== undefined) return opts.column;
  const q = data.processedLogprobs;
  if (!q || i < opts.promptLen || opts.forced || !Number.isFinite(q[i])) return null;
  const p = (lp) => (lp == null || Number.isNaN(lp) ? "" : [Math.exp(lp), Math.exp(lp)]);
  const meta = data.meta || {};
  const branch = meta.branch;
  // (a branch's tokens before its fork were sampled by its parent, at the parent's settings)
  const known = meta.do_sample && meta.temperature != null && (!branch || i >= branch.at);
  return {
    head: "sampled from",
    note: `model: the distribution the model gave; sampled from: the one this token was drawn from${known ? `, at ${settingsWords(meta)}` : ""}`,
    stat: "sampled p",
    chosen: p(q[i]),
    valueOf: (alt) => p(alt.processed),
    otherOf: (rows) => {
      const rest = residual(rows.map((r) => (r.processed == null ? NaN : r.processed)));
      return [rest, rest];
    },
  };
}

const sameShape = (a, b) => a.k === b.k && a.ids === b.ids && (a.column ? a.column.head : null) === (b.column ? b.column.head : null);

/** One row's elements (an alternative, the chosen token outside the top K, or "other"), in column order. */
function makeRow(o, className) {
  const row = { el: h("div", className), token: h("span", "lv-alt-token"), bar: bar(), prob: h("span", "lv-alt-prob") };
  row.logprob = h("span", "lv-alt-logprob");
  row.el.append(row.token, row.bar, row.prob, row.logprob);
  if (o.column) {
    row.qbar = bar("lv-alt-bar-processed");
    row.qprob = h("span", "lv-alt-prob lv-alt-prob-processed");
    row.el.append(row.qbar, row.qprob);
  }
  if (o.ids) row.el.appendChild((row.id = h("span", "lv-alt-id")));
  return row;
}

/**
 * Show alternative `alt` (from `alternatives`) in `row`. `explored`: {token id: branch number} of
 * the alternatives here that have a branch (the explorer's), `branching`: a click on a row branches.
 */
function fillRow(row, alt, o, explored = null, branching = false) {
  const branch = explored && alt.rank == null ? explored[String(alt.id)] : undefined;
  setClass(row.el, `lv-alt-row${alt.chosen ? " lv-chosen" : ""}${alt.rank != null ? " lv-extra" : ""}${branch != null ? " lv-explored" : ""}`);
  setTokenText(row.token, alt.text);
  if (row.el.dataset.tokenId !== String(alt.id)) row.el.dataset.tokenId = String(alt.id);
  if (row.token.title !== alt.text) row.token.title = alt.text; // a property: plain text
  const hint = branching && alt.rank == null ? branchHint(alt.text, branch) : "";
  if (row.el.title !== hint) row.el.title = hint;
  if (branch != null) row.bar.dataset.branch = `#${branch}`;
  else delete row.bar.dataset.branch;
  const p = Math.exp(alt.logprob);
  setBar(row.bar, p);
  setText(row.prob, formatPercent(p));
  setText(row.logprob, formatLogprob(alt.logprob));
  if (o.column) setColumn(row, o.column.valueOf(alt));
  if (o.ids) setText(row.id, alt.id >= 0 ? String(alt.id) : "?");
}

function otherRow(o) {
  const row = makeRow(o, "lv-alt-other");
  setText(row.token, "other");
  row.token.title = `all the tokens outside the top ${o.k}`;
  if (o.ids) setText(row.id, "");
  return row;
}

function fillOther(row, rawP, rows, o) {
  setBar(row.bar, rawP);
  setText(row.prob, formatPercent(rawP));
  setText(row.logprob, rawP > 0 ? formatLogprob(Math.log(rawP)) : "-inf");
  if (o.column) setColumn(row, o.column.otherOf(rows));
}

/** The table of alternatives for one shape (K, processed column, ids column): its head, rows and "other". */
class AltTable {
  constructor(o) {
    this.o = o;
    this.el = h("div", `lv-alts${o.column ? " lv-alts-processed" : ""}${o.ids ? " lv-alts-ids" : ""}`);
    this.head = h("div", "lv-alt-head");
    // top_logprobs=0: no alternatives were recorded, only the chosen token ("top 0" says nothing)
    const labels = [o.k > 0 ? `top ${o.k}` : "chosen", o.column ? "model" : "", "prob", "logprob"];
    if (o.column) labels.push(o.column.head, "prob");
    if (o.ids) labels.push("id");
    for (const label of labels) this.head.appendChild(h("span", null, label));
    this.rows = []; // the top-K rows made so far, reused for every token
    this.gap = h("div", "lv-alt-gap", "\u22ef");
    this.extra = makeRow(o, "lv-alt-row lv-chosen lv-extra");
    this.extra.rank = h("span", "lv-alt-rank");
    this.extra.el.appendChild(this.extra.rank);
    this.other = otherRow(o);
  }

  fill(rows, extra, explored = null, branching = false) {
    const { o } = this;
    while (this.rows.length < rows.length) this.rows.push(makeRow(o, "lv-alt-row"));
    rows.forEach((alt, j) => fillRow(this.rows[j], alt, o, explored, branching));
    const wanted = [this.head, ...this.rows.slice(0, rows.length).map((r) => r.el)];
    if (extra) {
      fillRow(this.extra, extra, o);
      const outside = o.k > 0 ? `outside the top ${o.k}` : "no alternatives recorded (top_logprobs=0)";
      setText(this.extra.rank, extra.rank > 0 ? `rank ${extra.rank}, ${outside}` : outside);
      wanted.push(...(o.k > 0 ? [this.gap] : []), this.extra.el);
    }
    const raw = residual(rows.map((r) => r.logprob));
    if (raw != null) {
      fillOther(this.other, raw, rows, o);
      wanted.push(this.other.el);
    }
    setChildren(this.el, wanted);
  }
}

const PIN_NOTE = "pinned \u00b7 \u2190 \u2192 move \u00b7 Esc releases";
const BRANCH_NOTE = "pinned \u00b7 click a bar to branch (b: the likeliest other) \u00b7 \u2190 \u2192 move \u00b7 Esc releases";

/** One chart, shown for token after token (`show`); `el` is its element. */
export class Chart {
  constructor() {
    this.el = h("div", "lv-chart");
    this.title = h("div", "lv-chart-title");
    this.chip = h("span", "lv-chip");
    this.where = h("span", "lv-chart-where");
    this.title.append(this.chip, this.where);
    this.split = h("div", "lv-chart-split");
    this.splitText = document.createTextNode("");
    this.splitChip = h("span", "lv-chip");
    this.splitBytes = h("span", "lv-split-bytes");
    this.split.append(this.splitText, this.splitChip, this.splitBytes);
    this.stats = h("div", "lv-chart-stats");
    this.stat = { p: h("span", "lv-stat"), logprob: h("span", "lv-stat"), rank: h("span", "lv-stat lv-rank") };
    Object.assign(this.stat, { entropy: h("span", "lv-stat lv-entropy"), processed: h("span", "lv-stat lv-processed") });
    this.empty = h("div", "lv-chart-empty");
    this.table = null; // the AltTable of the current shape
    this.columnNote = h("div", "lv-chart-note lv-column-note");
    this.pinNote = h("div", "lv-chart-note lv-pin-note", PIN_NOTE);
  }

  /**
   * Show token i. `opts`: promptLen, showIds, style (the token's colours or null), pinned (bool),
   * flags (what the source lost at this token, in words; optional); in the explorer also
   * branching (a click on a bar branches), explored ({token id: branch number} here), forced
   * (the token was chosen by a person, not sampled), column (the sliders' column, or null: none;
   * see `secondColumn`).
   */
  show(data, i, opts) {
    this.el.setAttribute("data-index", String(i));
    setTokenText(this.chip, data.tokens[i]);
    this.chip.style.background = opts.style ? opts.style.background : "";
    this.chip.style.color = opts.style ? opts.style.color : "";
    const part = i < opts.promptLen ? "prompt" : opts.forced ? "completion \u00b7 chosen by hand" : "completion";
    const where = `token ${i + 1} of ${data.n} \u00b7 ${part}`;
    setText(this.where, opts.showIds && data.tokenIds[i] >= 0 ? `${where} \u00b7 id ${data.tokenIds[i]}` : where);
    const wanted = [this.title];
    const split = data.splitOf(i);
    if (split) {
      // A piece of a character split across tokens: which piece, of what, and its own bytes.
      this.splitText.data = `piece ${split.piece + 1} of ${split.end - split.start} of `;
      setTokenText(this.splitChip, split.text);
      setText(this.splitBytes, ` \u00b7 bytes ${hexBytes(split.bytes)}`);
      wanted.push(this.split);
    }
    // What the source of this trace lost at this token (Trace.flags), in words: rare, made anew.
    for (const note of opts.flags || []) wanted.push(h("div", "lv-chart-flag", `\u26a0 ${note}`));
    const column = secondColumn(data, i, opts);
    this.showStats(data, i, column);
    wanted.push(this.stats);
    const { rows, extra } = alternatives(data, i);
    if (rows.length === 0 && !extra) {
      setText(this.empty, data.k === 0 ? "No alternatives were recorded (top_logprobs=0)." : "No alternatives for this token.");
      wanted.push(this.empty); // (and no pin note: nothing here to move through)
    } else {
      const o = { k: data.k, column, ids: !!opts.showIds };
      if (!this.table || !sameShape(this.table.o, o)) this.table = new AltTable(o);
      else this.table.o = o; // (the same columns; this token's numbers)
      this.table.fill(rows, extra, opts.explored, !!opts.branching);
      wanted.push(this.table.el);
      if (column) wanted.push(this.columnNote), setText(this.columnNote, column.note);
      if (opts.pinned) wanted.push(this.pinNote), setText(this.pinNote, opts.branching ? BRANCH_NOTE : PIN_NOTE);
    }
    setChildren(this.el, wanted);
    return this;
  }

  showStats(data, i, column) {
    const { stat } = this;
    const lp = data.logprobs[i];
    setText(stat.p, `p ${formatPercent(Math.exp(lp))}`);
    setText(stat.logprob, `logprob ${formatLogprob(lp)}`);
    const rank = data.ranks[i];
    setText(stat.rank, rank > 0 ? `rank ${rank}` : "rank ?");
    const wanted = [stat.p, stat.logprob, stat.rank];
    const ent = data.entropy[i];
    if (!Number.isNaN(ent)) wanted.push(stat.entropy), setText(stat.entropy, `entropy ${ent.toFixed(2)} nats`);
    if (column) wanted.push(stat.processed), setText(stat.processed, `${column.stat} ${columnText(column.chosen)}`);
    setChildren(this.stats, wanted);
  }
}

/** The chart of token i, as an element of its own (see `Chart.show` for `opts`). */
export function buildChart(data, i, opts) {
  return new Chart().show(data, i, opts).el;
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
