// Stable orders of a table's rows by one column, in time linear in the rows: an LSD radix sort
// on 16-bit digits of each row's key. At 1M rows, Array#sort with a comparator took 0.7-0.8 s for
// a number column and 4.5 s for whole texts (benchmarks/results/scale.md); the radix passes take
// tens of milliseconds. Texts get their keys' ranks once per column (cached), so every later sort
// of that column (the other direction, after a filter) is two passes over uint32 ranks.

const DIGIT_BITS = 16;
const BUCKETS = 1 << DIGIT_BITS;
const DIGIT_MASK = BUCKETS - 1;

/**
 * `rows` (Int32Array of row numbers) stably sorted by `words` (Uint32Arrays indexed by the
 * position in `rows`, most significant first): equal keys keep their order in `rows`.
 */
export function radixOrder(rows, words) {
  const n = rows.length;
  let from = new Int32Array(n); // positions into `rows`, in the order so far
  for (let i = 0; i < n; i++) from[i] = i;
  let to = new Int32Array(n);
  const count = new Int32Array(BUCKETS);
  for (let w = words.length - 1; w >= 0; w--) {
    const key = words[w];
    for (let shift = 0; shift < 32; shift += DIGIT_BITS) {
      count.fill(0);
      for (let i = 0; i < n; i++) count[(key[from[i]] >>> shift) & DIGIT_MASK]++;
      let sum = 0;
      let oneBucket = false; // every key has this digit: the pass would change nothing
      for (let b = 0; b < BUCKETS; b++) {
        const c = count[b];
        if (c === n) oneBucket = true;
        count[b] = sum;
        sum += c;
      }
      if (oneBucket) continue;
      for (let i = 0; i < n; i++) {
        const position = from[i];
        to[count[(key[position] >>> shift) & DIGIT_MASK]++] = position;
      }
      [from, to] = [to, from];
    }
  }
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = rows[from[i]];
  return out;
}

const FLOAT = new Float64Array(1);
const FLOAT_WORDS = new Uint32Array(FLOAT.buffer); // [low, high] on every little-endian engine we run in

/**
 * The keys of numbers for `radixOrder`: IEEE bits made unsigned-ordered (negatives flipped whole,
 * positives their sign bit), inverted when descending; NaN last in both directions; -0 equals 0.
 */
export function numberWords(rows, values, descending) {
  const n = rows.length;
  const high = new Uint32Array(n);
  const low = new Uint32Array(n);
  const flip = descending ? 0xffffffff : 0;
  for (let i = 0; i < n; i++) {
    const x = values[rows[i]];
    if (Number.isNaN(x)) {
      high[i] = 0xffffffff; // above every number's key, whichever the direction
      low[i] = 0xffffffff;
      continue;
    }
    FLOAT[0] = x === 0 ? 0 : x;
    let hi = FLOAT_WORDS[1];
    let lo = FLOAT_WORDS[0];
    if (hi & 0x80000000) {
      hi = ~hi;
      lo = ~lo;
    } else {
      hi |= 0x80000000;
    }
    high[i] = (hi ^ flip) >>> 0;
    low[i] = (lo ^ flip) >>> 0;
  }
  return [high, low];
}

const RANKS = new WeakMap(); // a text column -> Map(its key rule -> each row's rank)

/**
 * Each row's rank among the distinct `keyOf(value)` of the column `values`, in code-unit order
 * (`<`): equal keys, equal ranks. Keys are made once per distinct value (a label column of 1M rows
 * holds a few hundred) and the ranks cached per column and rule.
 */
export function stringRanks(values, keyOf) {
  let byRule = RANKS.get(values);
  if (!byRule) RANKS.set(values, (byRule = new Map()));
  let ranks = byRule.get(keyOf);
  if (ranks) return ranks;
  const keyed = [...new Set(values)].map((value) => [keyOf(value), value]);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const rankOf = new Map();
  let rank = -1;
  for (let i = 0; i < keyed.length; i++) {
    if (i === 0 || keyed[i][0] !== keyed[i - 1][0]) rank++;
    rankOf.set(keyed[i][1], rank);
  }
  ranks = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) ranks[i] = rankOf.get(values[i]);
  byRule.set(keyOf, ranks);
  return ranks;
}

/** The keys of texts for `radixOrder`: their ranks (`stringRanks`), inverted when descending. */
export function rankWords(rows, ranks, descending) {
  const words = new Uint32Array(rows.length);
  for (let i = 0; i < rows.length; i++) words[i] = descending ? 0xffffffff - ranks[rows[i]] : ranks[rows[i]];
  return [words];
}
