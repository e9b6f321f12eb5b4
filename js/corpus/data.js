// The corpus view's data: the payload decoded into columns (typed arrays and strings), and the
// row order that sorting and filtering give. No DOM: tested in node (test/data.test.js), and
// timed by benchmarks/corpus_view.py (sorting 10,000 rows must stay well under 100 ms).

import { readArray, readTexts } from "../toolkit/codec.js";
import { rows } from "../toolkit/rows.js";
import { ANSWER_COLUMNS, answerTest, readAnswers } from "./answers.js";
import { extraColumns, readExtra } from "./extra.js";
import { numberWords, radixOrder, rankWords, stringRanks } from "./order.js";

/** The table's columns: [name, title, kind]. "text" sorts naturally ("item 9" before "item 10"), "longtext"
 * (whole texts) by the kernel's ranks (payload.text_rank; without them, by code units of their beginning),
 * "int" / "float" as numbers. */
export const COLUMNS = rows(`
  item          | #          | int
  label         | label      | text
  text          | text       | longtext
  tokens        | tokens     | int
  perplexity    | perplexity | float
  mean_logprob  | mean lp    | float
  min_logprob   | min lp     | float
  max_surprisal | max surpr. | float
  mean_entropy  | entropy    | float
  flags         | flags      | text
`);

export const INDEX_COLUMNS = rows(`
  group              | group          | text
  count              | count          | int
  mean_surprisal     | mean surprisal | float
  max_surprisal      | max surprisal  | float
  mean_rank          | mean rank      | float
  share_rank_over_10 | rank > 10      | float
`);

function readColumns(fields, columns, n, where) {
  const out = {};
  for (const [name, , kind] of columns) {
    if (name === "item") continue;
    const values = kind === "text" || kind === "longtext" ? readTexts(fields[name], `${where}.${name}`) : readArray(fields[name], `${where}.${name}`);
    if (values == null || values.length !== n) {
      throw new RangeError(`corpus payload ${where}.${name} has ${values ? values.length : 0} values, expected ${n}`);
    }
    out[name] = values;
  }
  return out;
}

/** The table payload (logprob_viz/views/corpus/payload.py) as {n, columns, spark, sparkOffsets, sparkMax, index}. */
export function decodeCorpus(payload) {
  if (!payload || payload.version !== 1) {
    throw new TypeError(`the corpus view reads payload version 1, got ${payload ? payload.version : "none"}: rebuild js/`);
  }
  const n = payload.n;
  if (payload.windowed) {
    // a large corpus (views/corpus/window.py): rows come from the kernel a window at a time (window.js)
    return { n, windowed: true, columns: {}, answers: !!payload.answers, extra: extraColumns(payload), ranks: {},
      empty: payload.empty || [], longest: payload.longest_labels || [],
      spark: null, sparkOffsets: null, sparkMax: payload.spark_max, index: payload.index ? decodeIndex(payload.index) : null };
  }
  const columns = readColumns(payload, COLUMNS, n, "table");
  const item = new Int32Array(n);
  for (let i = 0; i < n; i++) item[i] = i;
  columns.item = item;
  const answers = readAnswers(payload, columns, n); // a corpus of choices: predicted, gold, right?
  const extra = readExtra(payload, columns, n); // a corpus of divergences or rollouts: their figures
  const sparkOffsets = readArray(payload.spark_offsets, "spark_offsets");
  if (sparkOffsets.length !== n + 1) throw new RangeError(`spark_offsets has ${sparkOffsets.length} values, expected ${n + 1}`);
  // the surprise index: in a payload saved before it moved to its own trait (`_index`, sent when its tab opens)
  const index = payload.index ? decodeIndex(payload.index) : null;
  // the kernel's ranks (whole texts in code-point order, labels in natural order); without them, ranked here
  const ranks = { text: readRanks(payload, "text_rank", n), label: readRanks(payload, "label_rank", n) };
  return { n, columns, answers, extra, ranks, spark: readArray(payload.spark, "spark"), sparkOffsets, sparkMax: payload.spark_max, index };
}

function readRanks(payload, name, n) {
  const ranks = payload[name] ? readArray(payload[name], name) : null;
  if (ranks && ranks.length !== n) throw new RangeError(`${name} has ${ranks.length} values, expected ${n}`);
  return ranks;
}

/** The surprise index (the `_index` trait: {token, class}, each a table of groups) as {token, class} of
 * {n, columns}; null while the kernel has not sent it (an empty trait). */
export function decodeIndex(fields) {
  if (!fields || !fields.token) return null;
  const index = {};
  for (const by of ["token", "class"]) {
    const g = readArray(fields[by].count, `index.${by}.count`).length;
    index[by] = { n: g, columns: readColumns(fields[by], INDEX_COLUMNS, g, `index.${by}`) };
  }
  return index;
}

export const TEXT_KEY_CHARS = 200; // without the kernel's ranks, whole texts sort by their first 200 characters

/** The sort key of a whole text: its first TEXT_KEY_CHARS characters. */
export function prefixKey(s) {
  return s.length > TEXT_KEY_CHARS ? s.slice(0, TEXT_KEY_CHARS) : s;
}

/** The sort key of a text in natural order: case folded, digit runs zero-padded ("item 9" < "item 10"). */
export function naturalKey(s) {
  return s.toLowerCase().replace(/\d+/g, (d) => d.padStart(16, "0"));
}

/**
 * `rows` (an Int32Array of row numbers) sorted by `values` (a column), stable: equal values keep
 * their order in `rows`. Unknown numbers (NaN) go last in both directions. Texts ("text") sort
 * by their natural keys, whole texts ("longtext") by their first TEXT_KEY_CHARS characters' code
 * units. Both go through order.js's radix passes: a comparator sort took 0.8 s (numbers) to 4.5 s
 * (whole texts) at 1M rows.
 */
export function sortRows(rows, values, kind, descending) {
  if (kind === "text" || kind === "longtext") {
    return radixOrder(rows, rankWords(rows, stringRanks(values, kind === "text" ? naturalKey : prefixKey), descending));
  }
  return radixOrder(rows, numberWords(rows, values, descending));
}

/** A number input's value: null when empty or not a number. */
export function numberOrNull(value) {
  if (value == null || value === "") return null;
  const x = Number(value);
  return Number.isFinite(x) ? x : null;
}

/** A test of "contains `needle`, in any case" (null for an empty needle): a case-insensitive regular
 * expression, which scans 1M texts in ~40 ms where lower-casing them first took ~300 ms. */
export function containsTest(needle) {
  if (!needle) return null;
  const pattern = new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "iu");
  return (s) => pattern.test(s);
}

/**
 * The rows (Int32Array, in corpus order) that pass `filters`: {text, label} contain (in any case,
 * Unicode case folding) the given strings, ppl_min <= perplexity <= ppl_max (an unknown perplexity
 * passes only when no range is set); for a corpus of choices, {predicted, correct} too (answers.js,
 * whose lower-cased texts `lower` caches between calls).
 */
export function filterRows(data, filters, lower) {
  const { n, columns } = data;
  const text = containsTest(filters.text || "");
  const label = containsTest(filters.label || "");
  const lo = numberOrNull(filters.ppl_min);
  const hi = numberOrNull(filters.ppl_max);
  const out = new Int32Array(n);
  let count = 0;
  const ppl = columns.perplexity;
  const answer = answerTest(columns, filters, lower); // null: no answer filter
  for (let i = 0; i < n; i++) {
    if (lo != null && !(ppl[i] >= lo)) continue;
    if (hi != null && !(ppl[i] <= hi)) continue;
    if (label && !label(columns.label[i])) continue;
    if (text && !text(columns.text[i])) continue;
    if (answer && !answer(i)) continue;
    out[count++] = i;
  }
  return out.slice(0, count);
}

/** The rows to show: filtered, then sorted by `sort` ({column, descending}; column "" keeps corpus order). */
export function visibleRows(data, filters, sort, lower) {
  const rows = filterRows(data, filters, lower);
  const column = [...COLUMNS, ...(data.answers ? ANSWER_COLUMNS : []), ...(data.extra || [])].find(([name]) => name === sort.column);
  if (!column) return rows;
  const ranks = data.ranks && data.ranks[column[0]];
  if (ranks) return radixOrder(rows, rankWords(rows, ranks, !!sort.descending));
  return sortRows(rows, data.columns[column[0]], column[2], !!sort.descending);
}

/** The group rows of an index sorted by `sort` ({column, descending}), default: the payload's order. */
export function indexRows(index, sort) {
  const rows = new Int32Array(index.n);
  for (let i = 0; i < index.n; i++) rows[i] = i;
  const column = INDEX_COLUMNS.find(([name]) => name === sort.column);
  if (!column) return rows;
  return sortRows(rows, index.columns[column[0]], column[2], !!sort.descending);
}
