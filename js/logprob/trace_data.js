// The LogprobView's trace as the browser holds it, read through the wire codec (toolkit/codec.js;
// the layout is codec.py's `encode_trace`). A payload becomes a `TraceData` that grows:
// `apply(append)` keeps the first `start` tokens and adds the rest, so a stream's tokens are
// decoded once. No DOM here, so `npm test` runs it in node.

import { readArray } from "../toolkit/codec.js";
import { decodeTexts } from "../toolkit/tokens.js";

function sized(name, array, length) {
  if (array.length !== length) throw new RangeError(`payload array ${name} has ${array.length} values, expected ${length}`);
  return array;
}

/** A typed array that grows at its end. It adopts the first array it gets (no copy); `array` is the filled part. */
class Column {
  constructor(Ctor) {
    this.Ctor = Ctor;
    this.buf = new Ctor(0);
    this.length = 0;
  }

  get array() {
    return this.length === this.buf.length ? this.buf : this.buf.subarray(0, this.length);
  }

  truncate(length) {
    this.length = Math.min(this.length, length);
  }

  push(values) {
    const need = this.length + values.length;
    if (this.length === 0 && values instanceof this.Ctor) {
      this.buf = values; // adopted, not copied: a later push copies it before writing
      this.adopted = true;
    } else {
      if (need > this.buf.length || this.adopted) {
        const next = new this.Ctor(Math.max(need, 2 * this.length, 64));
        next.set(this.buf.subarray(0, this.length));
        this.buf = next;
        this.adopted = false;
      }
      this.buf.set(values, this.length);
    }
    this.length = need;
  }
}

const filled = (Ctor, length, value) => new Ctor(length).fill(value);

/**
 * A trace as the view reads it: `n`, `k`, `tokens`, `shown` (what the text shows: a split
 * character whole), `tokenIds`, `logprobs`, `ranks`, `entropy`, `topLogprobs` [n * k],
 * `processedLogprobs` / `processedTopLogprobs` (null without), `promptLen`, `summary`, `meta`,
 * `flagNotes`; `topCount(i)`, `altText(i, j)`, `altId(i, j)`, `splitOf(i)`.
 */
export class TraceData {
  constructor() {
    this.id = "";
    this.k = 0;
    this.promptLen = 0;
    this.summary = {};
    this.meta = {};
    this.flagNotes = {};
    this.tokens = [];
    this.shown = [];
    this.table = []; // distinct texts; reference r is table[r - 1], 0 is none
    this.tableIds = new Column(Int32Array);
    this.splits = new Map(); // token -> { start, end, piece, bytes, text }
    this.reset(0, false);
  }

  reset(k, processed) {
    this.k = k;
    this.tokens.length = this.shown.length = this.table.length = 0;
    this.tableIds = new Column(Int32Array);
    this.splits.clear();
    this.flagNotes = {};
    this.cols = {
      tokenIds: new Column(Int32Array),
      logprobs: new Column(Float32Array),
      ranks: new Column(Int32Array),
      entropy: new Column(Float32Array),
      topLogprobs: new Column(Float32Array),
      topRefs: new Column(Uint32Array),
      processedLogprobs: processed ? new Column(Float32Array) : null,
      processedTopLogprobs: processed ? new Column(Float32Array) : null,
    };
  }

  get n() {
    return this.tokens.length;
  }
  get tokenIds() {
    return this.cols.tokenIds.array;
  }
  get logprobs() {
    return this.cols.logprobs.array;
  }
  get ranks() {
    return this.cols.ranks.array;
  }
  get entropy() {
    return this.cols.entropy.array;
  }
  get topLogprobs() {
    return this.cols.topLogprobs.array;
  }
  get processedLogprobs() {
    return this.cols.processedLogprobs ? this.cols.processedLogprobs.array : null;
  }
  get processedTopLogprobs() {
    return this.cols.processedTopLogprobs ? this.cols.processedTopLogprobs.array : null;
  }

  textOf(r) {
    return r > 0 && r <= this.table.length ? this.table[r - 1] : "";
  }
  idOf(r) {
    return r > 0 && r <= this.table.length ? this.tableIds.buf[r - 1] : -1;
  }

  /** How many alternatives token i has: its leading non-zero references. */
  topCount(i) {
    const refs = this.cols.topRefs.buf;
    let j = 0;
    while (j < this.k && refs[i * this.k + j] !== 0) j++;
    return j;
  }
  altText(i, j) {
    return this.textOf(this.cols.topRefs.buf[i * this.k + j]);
  }
  altId(i, j) {
    return this.idOf(this.cols.topRefs.buf[i * this.k + j]);
  }
  /** Token i's place in a character split across tokens: `{ start, end, piece, bytes, text }`, or null. */
  splitOf(i) {
    return this.splits.get(i) ?? null;
  }

  /** Keep the first `start` tokens, then add the payload's (a whole trace when `start` is 0). */
  apply(payload) {
    const start = payload.start ?? 0;
    const a = payload.arrays ?? {};
    const count = payload.n - start;
    if (!(start >= 0 && start <= this.n && count >= 0)) {
      throw new RangeError(`an append of tokens ${start} to ${payload.n} does not follow the ${this.n} tokens on show`);
    }
    if (start === 0) this.reset(payload.k, a.processed_logprobs != null);
    else if (payload.k !== this.k || (a.processed_logprobs != null) !== (this.cols.processedLogprobs != null)) {
      throw new RangeError(`an append has K=${payload.k} and the trace on show K=${this.k}: the kernel sends a whole trace then`);
    }
    this.truncate(start);
    Object.assign(this, { id: payload.id ?? "", promptLen: payload.prompt_len ?? 0, summary: payload.summary ?? {}, meta: payload.meta ?? {} });
    Object.assign(this.flagNotes, payload.flag_notes ?? {});

    const base = this.table.length; // the chunk's references are to its own table, which goes after ours
    const blob = readArray(a.text, "text") ?? new Uint8Array(0);
    const offsets = readArray(a.text_offsets, "text_offsets") ?? new Uint32Array(1);
    const u = Math.max(0, offsets.length - 1);
    for (const text of decodeTexts(blob, offsets, u)) this.table.push(text);
    const idsPlusOne = a.text_ids == null ? new Uint32Array(u) : sized("text_ids", readArray(a.text_ids, "text_ids"), u);
    this.tableIds.push(Int32Array.from(idsPlusOne, (v) => v - 1));
    const shift = (refs) => (base === 0 ? refs : Uint32Array.from(refs, (r) => (r === 0 ? 0 : r + base)));
    const ref = (name, len) => shift(a[name] == null ? new Uint32Array(len) : sized(name, readArray(a[name], name), len));

    const k = this.k;
    const tokenRefs = ref("token_text", count);
    const ids = new Int32Array(count);
    for (let i = 0; i < count; i++) {
      const text = this.textOf(tokenRefs[i]);
      this.tokens.push(text);
      this.shown.push(text);
      ids[i] = this.idOf(tokenRefs[i]);
    }
    const f32 = (name, len, fill) => (a[name] == null ? filled(Float32Array, len, fill) : sized(name, readArray(a[name], name), len));
    const { cols } = this;
    cols.tokenIds.push(ids);
    cols.logprobs.push(f32("logprobs", count, NaN));
    cols.ranks.push(a.ranks == null ? new Int32Array(count) : sized("ranks", readArray(a.ranks, "ranks"), count));
    cols.entropy.push(f32("entropy", count, NaN));
    cols.topLogprobs.push(f32("top_logprobs", count * k, -Infinity));
    cols.topRefs.push(ref("top_text", count * k));
    if (cols.processedLogprobs) {
      cols.processedLogprobs.push(f32("processed_logprobs", count, NaN));
      cols.processedTopLogprobs.push(f32("processed_top_logprobs", count * k, -Infinity));
    }
    this.addSplits(a, start, count, (name, len) => ref(name, len));
  }

  truncate(start) {
    if (start >= this.n) return;
    const k = this.k;
    this.tokens.length = this.shown.length = start;
    for (const [name, col] of Object.entries(this.cols)) if (col) col.truncate(name.startsWith("top") || name === "processedTopLogprobs" ? start * k : start);
    for (const i of [...this.splits.keys()]) if (i >= start) this.splits.delete(i);
    for (const key of Object.keys(this.flagNotes)) if (Number(key) >= start) delete this.flagNotes[key];
  }

  addSplits(a, offset, count, ref) {
    const starts = readArray(a.split_starts, "split_starts");
    if (starts == null || starts.length === 0) return;
    const ends = sized("split_ends", readArray(a.split_ends, "split_ends"), starts.length);
    let m = 0;
    for (let g = 0; g < starts.length; g++) {
      if (!(starts[g] >= 0 && starts[g] < ends[g] && ends[g] <= count)) {
        throw new RangeError(`split run ${g} is [${starts[g]}, ${ends[g]}), outside the ${count} tokens`);
      }
      m += ends[g] - starts[g];
    }
    const texts = ref("split_text", m);
    const raw = readArray(a.split_bytes, "split_bytes") ?? new Uint8Array(0);
    const offsets = sized("split_byte_offsets", readArray(a.split_byte_offsets, "split_byte_offsets"), m + 1);
    let at = 0;
    for (let g = 0; g < starts.length; g++) {
      const first = at;
      let whole = "";
      for (let j = 0; j < ends[g] - starts[g]; j++) whole += this.textOf(texts[first + j]);
      for (let i = starts[g]; i < ends[g]; i++, at++) {
        this.shown[offset + i] = this.textOf(texts[at]);
        const split = { start: offset + starts[g], end: offset + ends[g], piece: i - starts[g], text: whole };
        split.bytes = raw.subarray(offsets[at], offsets[at + 1]);
        this.splits.set(offset + i, split);
      }
    }
  }
}

/** A payload (the `_payload` trait) as a TraceData; an empty trace for an empty trait. */
export function decodePayload(payload) {
  const data = new TraceData();
  if (payload && typeof payload.n === "number") data.apply(payload);
  return data;
}

/**
 * The alternatives of token `i`, most likely first, and where the chosen token stands.
 *
 * Returns `{ rows: [{ text, logprob, processed, chosen, id }], chosenIndex, extra }`, where `extra`
 * is the chosen token as a row of its own when it is not among the top-K (null otherwise).
 */
export function alternatives(data, i) {
  const { k } = data;
  const count = data.topCount(i);
  const id = data.tokenIds[i];
  const text = data.tokens[i];
  const top = data.topLogprobs;
  const processed = data.processedTopLogprobs;
  const rows = [];
  let chosenIndex = -1;
  for (let j = 0; j < count; j++) {
    const altId = data.altId(i, j);
    const altText = data.altText(i, j);
    // Ids decide when both are known; otherwise the texts do.
    const isChosen = chosenIndex < 0 && (id >= 0 && altId >= 0 ? id === altId : altText === text);
    if (isChosen) chosenIndex = j;
    rows.push({ text: altText, logprob: top[i * k + j], processed: processed ? processed[i * k + j] : null, chosen: isChosen, id: altId });
  }
  let extra = null;
  if (chosenIndex < 0 && !Number.isNaN(data.logprobs[i])) {
    const p = data.processedLogprobs;
    extra = { text, logprob: data.logprobs[i], processed: p ? p[i] : null, chosen: true, rank: data.ranks[i], id };
  }
  return { rows, chosenIndex, extra };
}
