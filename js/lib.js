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
 * Token texts are decoded at once (the heatmap shows them all); alternatives' texts lazily,
 * when a token's chart is drawn.
 */
export function decodePayload(payload) {
  if (!payload || typeof payload.n !== "number") {
    return decodePayload({ n: 0, k: 0 });
  }
  const n = payload.n;
  const k = payload.k ?? 0;
  const f32 = (name, len) => checked(name, payload[name] == null ? new Float32Array(len).fill(NaN) : typedArray(payload[name], Float32Array), len);
  const i32 = (name, len, fill) => checked(name, payload[name] == null ? new Int32Array(len).fill(fill) : typedArray(payload[name], Int32Array), len);
  const blob = asBytes(payload.text);
  const offsets = checked("text_offsets", payload.text_offsets == null ? new Uint32Array(n + n * k + 1) : typedArray(payload.text_offsets, Uint32Array), n + n * k + 1);
  const decoder = new TextDecoder("utf-8");
  const slice = (s) => decoder.decode(blob.subarray(offsets[s], offsets[s + 1]));
  const tokens = decodeTokens(decoder, blob, offsets, n) ?? Array.from({ length: n }, (_, i) => slice(i));
  const hasProcessed = payload.processed_logprobs != null;
  return {
    n,
    k,
    tokens,
    tokenIds: i32("token_ids", n, -1),
    logprobs: f32("logprobs", n),
    ranks: i32("ranks", n, 0),
    entropy: f32("entropy", n),
    topLogprobs: f32("top_logprobs", n * k),
    topIds: i32("top_ids", n * k, -1),
    topCounts: i32("top_counts", n, 0),
    processedLogprobs: hasProcessed ? f32("processed_logprobs", n) : null,
    processedTopLogprobs: hasProcessed ? f32("processed_top_logprobs", n * k) : null,
    /** The text of alternative `j` of token `i`. */
    altText(i, j) {
      return slice(n + i * k + j);
    },
  };
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
  const count = Math.min(data.topCounts[i], k);
  const id = data.tokenIds[i];
  const text = data.tokens[i];
  const rows = [];
  let chosenIndex = -1;
  for (let j = 0; j < count; j++) {
    const s = i * k + j;
    const altId = data.topIds[s];
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
