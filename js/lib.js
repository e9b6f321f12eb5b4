// Pure helpers of the view: decoding the binary payload, number formats
// and the whitespace segmentation of token text. No DOM here, so `npm test` runs them in node.

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The bytes of a buffer from the kernel (DataView, ArrayBuffer or typed array) as a Uint8Array view. */
export function asBytes(value) {
  if (value == null) return new Uint8Array(0);
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(`expected a binary buffer, got ${Object.prototype.toString.call(value)}`);
}

const GETTERS = new Map([
  [Float32Array, "getFloat32"],
  [Uint16Array, "getUint16"],
  [Int32Array, "getInt32"],
  [Uint32Array, "getUint32"],
]);

/**
 * A typed array over a little-endian buffer, without copying when it can.
 *
 * Buffers from the kernel are DataViews into one ArrayBuffer holding the whole message, so their
 * byteOffset need not be a multiple of the element size: then the bytes are copied once into an
 * aligned buffer (a typed array cannot start at a misaligned offset).
 */
export function typedArray(value, Ctor) {
  const bytes = asBytes(value);
  const size = Ctor.BYTES_PER_ELEMENT;
  if (bytes.byteLength % size !== 0) {
    throw new RangeError(`a ${Ctor.name} buffer must hold a multiple of ${size} bytes, got ${bytes.byteLength}`);
  }
  const length = bytes.byteLength / size;
  if (!LITTLE_ENDIAN && size > 1) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const out = new Ctor(length);
    const get = GETTERS.get(Ctor);
    for (let i = 0; i < length; i++) out[i] = view[get](i * size, true);
    return out;
  }
  if (bytes.byteOffset % size === 0) return new Ctor(bytes.buffer, bytes.byteOffset, length);
  return new Ctor(bytes.slice().buffer, 0, length);
}

/**
 * Decode the `_payload` trait written by `logprob_viz.widget.encode_trace`.
 *
 * Texts come as a table of distinct (id, text) entries (ids stored + 1, 0: none), decoded at
 * once; tokens and alternatives are references into it (r: entry r - 1; 0: none). `dtypes`
 * says which of those arrays are uint16 ("u2") rather than uint32. A character split across
 * tokens comes as runs of tokens with, for each of their tokens, the text it completes and its
 * raw bytes (`splitOf(i)`).
 */
export function decodePayload(payload) {
  if (!payload || typeof payload.n !== "number") {
    return decodePayload({ n: 0, k: 0 });
  }
  const n = payload.n;
  const k = payload.k ?? 0;
  const dtypes = payload.dtypes || {};
  const unsigned = (name) => (dtypes[name] === "u2" ? Uint16Array : Uint32Array);
  const Ref = unsigned("refs");
  const f32 = (name, len) => checked(name, payload[name] == null ? new Float32Array(len).fill(NaN) : typedArray(payload[name], Float32Array), len);
  const i32 = (name, len, fill) => checked(name, payload[name] == null ? new Int32Array(len).fill(fill) : typedArray(payload[name], Int32Array), len);
  const refs = (name, len) => checked(name, payload[name] == null ? new Ref(len) : typedArray(payload[name], Ref), len);
  const blob = asBytes(payload.text);
  const offsets = payload.text_offsets == null ? new Uint32Array(1) : typedArray(payload.text_offsets, unsigned("text_offsets"));
  const u = Math.max(0, offsets.length - 1);
  const decoder = new TextDecoder("utf-8");
  const table = decodeTokens(decoder, blob, offsets, u) ?? Array.from({ length: u }, (_, e) => decoder.decode(blob.subarray(offsets[e], offsets[e + 1])));
  const tableIds = payload.text_ids == null ? new Uint32Array(u) : checked("text_ids", typedArray(payload.text_ids, unsigned("text_ids")), u); // id + 1; 0: none
  const textOf = (r) => (r > 0 && r <= u ? table[r - 1] : "");
  const idOf = (r) => (r > 0 && r <= u ? tableIds[r - 1] - 1 : -1);
  const tokenRefs = refs("token_text", n);
  const topRefs = refs("top_text", n * k);
  const tokens = new Array(n);
  const tokenIds = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    tokens[i] = textOf(tokenRefs[i]);
    tokenIds[i] = idOf(tokenRefs[i]);
  }
  const hasProcessed = payload.processed_logprobs != null;
  const splits = decodeSplits(payload, n, textOf, Ref);
  return {
    n,
    k,
    tokens,
    /** What token i shows in the text: its own text, or, in a split character's run, the text it completes. */
    shown: splits ? splits.shown(tokens) : tokens,
    tokenIds,
    logprobs: f32("logprobs", n),
    ranks: i32("ranks", n, 0),
    entropy: f32("entropy", n),
    topLogprobs: f32("top_logprobs", n * k),
    processedLogprobs: hasProcessed ? f32("processed_logprobs", n) : null,
    processedTopLogprobs: hasProcessed ? f32("processed_top_logprobs", n * k) : null,
    /** How many alternatives token i has: its leading non-zero references. */
    topCount(i) {
      let j = 0;
      while (j < k && topRefs[i * k + j] !== 0) j++;
      return j;
    },
    /** The text of alternative `j` of token `i`. */
    altText(i, j) {
      return textOf(topRefs[i * k + j]);
    },
    /** The token id of alternative `j` of token `i`, -1 when unknown. */
    altId(i, j) {
      return idOf(topRefs[i * k + j]);
    },
    /**
     * Token i's place in a character split across tokens: `{ start, end, piece, bytes, text }`
     * (its run [start, end), its position in it, its raw bytes, the run's whole text), or null.
     */
    splitOf(i) {
      return splits ? splits.of(i) : null;
    },
  };
}

function decodeSplits(payload, n, textOf, Ref) {
  if (payload.split_starts == null) return null;
  const starts = typedArray(payload.split_starts, Int32Array);
  const ends = checked("split_ends", typedArray(payload.split_ends, Int32Array), starts.length);
  if (starts.length === 0) return null;
  let m = 0;
  for (let g = 0; g < starts.length; g++) {
    if (!(starts[g] >= 0 && starts[g] < ends[g] && ends[g] <= n)) throw new RangeError(`split run ${g} is [${starts[g]}, ${ends[g]}), outside the ${n} tokens`);
    m += ends[g] - starts[g];
  }
  const texts = checked("split_text", typedArray(payload.split_text, Ref), m);
  const raw = asBytes(payload.split_bytes);
  const offsets = checked("split_byte_offsets", typedArray(payload.split_byte_offsets, Uint32Array), m + 1);
  const member = new Map(); // token -> [run, index of the token among all runs' tokens]
  m = 0;
  for (let g = 0; g < starts.length; g++) for (let i = starts[g]; i < ends[g]; i++) member.set(i, [g, m++]);
  return {
    shown(tokens) {
      const out = tokens.slice();
      for (const [i, [, at]] of member) out[i] = textOf(texts[at]);
      return out;
    },
    of(i) {
      const hit = member.get(i);
      if (!hit) return null;
      const [g, at] = hit;
      const first = at - (i - starts[g]);
      let text = "";
      for (let j = first; j < first + ends[g] - starts[g]; j++) text += textOf(texts[j]);
      return { start: starts[g], end: ends[g], piece: i - starts[g], bytes: raw.subarray(offsets[at], offsets[at + 1]), text };
    },
  };
}

/** Bytes as hex pairs: "20 F0 9F". */
export function hexBytes(bytes) {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, "0")).join(" ");
}

/**
 * The first n texts of the blob, decoded in one call (100,000 small decodes take ~10x longer):
 * UTF-8 byte offsets become UTF-16 offsets by counting lead bytes. Null when the bytes are not
 * valid UTF-8 (the counts would not match); the caller then decodes text by text.
 */
export function decodeTokens(decoder, blob, offsets, n) {
  if (n === 0) return [];
  const whole = decoder.decode(blob.subarray(offsets[0], offsets[n]));
  const tokens = new Array(n);
  let unit = 0;
  for (let i = 0; i < n; i++) {
    const start = unit;
    for (let b = offsets[i]; b < offsets[i + 1]; b++) {
      const byte = blob[b];
      if ((byte & 0xc0) !== 0x80) unit += byte >= 0xf0 ? 2 : 1; // a lead byte; 4-byte: a surrogate pair
    }
    tokens[i] = whole.slice(start, unit);
  }
  return unit === whole.length && !whole.includes("\ufffd") ? tokens : null;
}

function checked(name, array, length) {
  if (array.length !== length) {
    throw new RangeError(`payload field ${name} has ${array.length} values, expected ${length}`);
  }
  return array;
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
  const rows = [];
  let chosenIndex = -1;
  for (let j = 0; j < count; j++) {
    const s = i * k + j;
    const altId = data.altId(i, j);
    const altText = data.altText(i, j);
    // Ids decide when both are known; otherwise the texts do.
    const isChosen = chosenIndex < 0 && (id >= 0 && altId >= 0 ? id === altId : altText === text);
    if (isChosen) chosenIndex = j;
    rows.push({
      text: altText,
      logprob: data.topLogprobs[s],
      processed: data.processedTopLogprobs ? data.processedTopLogprobs[s] : null,
      chosen: isChosen,
      id: altId,
    });
  }
  let extra = null;
  if (chosenIndex < 0 && !Number.isNaN(data.logprobs[i])) {
    extra = {
      text,
      logprob: data.logprobs[i],
      processed: data.processedLogprobs ? data.processedLogprobs[i] : null,
      chosen: true,
      rank: data.ranks[i],
      id,
    };
  }
  return { rows, chosenIndex, extra };
}

// ---- numbers -----------------------------------------------------------------------------

/** A probability as a percentage with one decimal, "41.3%"; "<0.1%" below that (the logprob says how small). */
export function formatPercent(p) {
  if (p == null || Number.isNaN(p)) return "?";
  const pct = p * 100;
  if (pct === 0) return "0%";
  if (pct < 0.05) return "<0.1%";
  return `${pct.toFixed(1)}%`;
}

/** A logprob with three decimals ("-0.884"); "-inf" for an impossible token, "?" when unknown. */
export function formatLogprob(lp) {
  if (lp == null || Number.isNaN(lp)) return "?";
  if (lp === -Infinity) return "-inf";
  const s = lp.toFixed(3);
  return s === "-0.000" ? "0.000" : s;
}

/** A number for the header, e.g. perplexity: "12.34", or "?" when the kernel sent none. */
export function formatStat(x, digits = 2) {
  if (x == null || Number.isNaN(x)) return "?";
  if (Math.abs(x) >= 1e5) return x.toExponential(2);
  return x.toFixed(digits);
}

// ---- whitespace --------------------------------------------------------------------------

const WS_KINDS = new Map([
  [" ", "space"],
  ["\u00a0", "space"],
  ["\t", "tab"],
  ["\n", "newline"],
  ["\r", "cr"],
]);

/**
 * Split a token's text into runs of ordinary characters and single whitespace characters, so
 * the view can mark each space, tab and newline. Other control characters ("control") and
 * zero-width / bidi characters ("invisible") are their own segments, shown by a glyph.
 */
export function segments(text) {
  const out = [];
  let run = "";
  for (const ch of text) {
    const code = ch.codePointAt(0);
    const kind = WS_KINDS.get(ch) ?? (isControl(code) ? "control" : INVISIBLE.has(code) ? "invisible" : null);
    if (kind === null) {
      run += ch;
      continue;
    }
    if (run) out.push({ kind: "text", text: run });
    run = "";
    out.push({ kind, text: ch });
  }
  if (run) out.push({ kind: "text", text: run });
  return out;
}

const isControl = (code) => code < 0x20 || (code >= 0x7f && code <= 0x9f);

/** Characters that draw nothing or reorder the text: zero-width, bidi controls, BOM, soft hyphen. */
export const INVISIBLE = new Map([
  [0x00ad, "SHY"], [0x034f, "CGJ"], [0x061c, "ALM"], [0x180e, "MVS"],
  [0x200b, "ZWSP"], [0x200c, "ZWNJ"], [0x200d, "ZWJ"], [0x200e, "LRM"], [0x200f, "RLM"],
  [0x2028, "LSEP"], [0x2029, "PSEP"],
  [0x202a, "LRE"], [0x202b, "RLE"], [0x202c, "PDF"], [0x202d, "LRO"], [0x202e, "RLO"],
  [0x2060, "WJ"], [0x2061, "FA"], [0x2062, "IT"], [0x2063, "IS"], [0x2064, "IP"],
  [0x2066, "LRI"], [0x2067, "RLI"], [0x2068, "FSI"], [0x2069, "PDI"], [0xfeff, "BOM"],
]);

/** How a control or invisible character is shown: "\\x07", "\\x85", or its short name, "[RLO]". */
export function controlGlyph(ch) {
  const code = ch.codePointAt(0);
  if (INVISIBLE.has(code)) return `[${INVISIBLE.get(code)}]`;
  return `\\x${code.toString(16).padStart(2, "0")}`;
}
