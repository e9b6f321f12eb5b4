// Pure helpers of the view: decoding the binary payload, the colour scale, number formats
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
  const tokens = new Array(n);
  for (let i = 0; i < n; i++) tokens[i] = slice(i);
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

function checked(name, array, length) {
  if (array.length !== length) {
    throw new RangeError(`payload field ${name} has ${array.length} values, expected ${length}`);
  }
  return array;
}

/**
 * The alternatives of token `i`, most likely first, and where the chosen token stands.
 *
 * Returns `{ rows: [{ text, logprob, processed, chosen }], chosenIndex, extra }`, where `extra`
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
    };
  }
  return { rows, chosenIndex, extra };
}

// ---- colour ------------------------------------------------------------------------------

/** viridis (matplotlib's, sampled at 10 even steps): perceptually uniform, colour-blind safe. */
export const VIRIDIS = [
  [68, 1, 84],
  [72, 40, 120],
  [62, 74, 137],
  [49, 104, 142],
  [38, 130, 142],
  [31, 158, 137],
  [53, 183, 121],
  [109, 205, 89],
  [180, 222, 44],
  [253, 231, 37],
];

/** viridis at t in [0, 1] as [r, g, b] (0..255), interpolated linearly between the samples. */
export function viridis(t) {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (VIRIDIS.length - 1);
  const lo = Math.floor(x);
  const hi = Math.min(lo + 1, VIRIDIS.length - 1);
  const f = x - lo;
  return VIRIDIS[lo].map((c, ch) => Math.round(c + (VIRIDIS[hi][ch] - c) * f));
}

/** The CSS gradient of the legend: the same samples, left (0%) to right (100%). */
export function viridisGradient() {
  const stops = VIRIDIS.map((c, i) => `rgb(${c.join(",")}) ${((i / (VIRIDIS.length - 1)) * 100).toFixed(1)}%`);
  return `linear-gradient(to right, ${stops.join(", ")})`;
}

/** Background and text colour of a token with this logprob; null when the logprob is unknown. */
export function tokenColors(logprob) {
  if (logprob == null || Number.isNaN(logprob)) return null;
  const rgb = viridis(Math.exp(logprob));
  return { background: `rgb(${rgb.join(",")})`, color: readableOn(rgb) };
}

/** Black or white, whichever contrasts more with the background (WCAG relative luminance). */
export function readableOn([r, g, b]) {
  const lin = (c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  return (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) ? "#000" : "#fff";
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
 * the view can mark each space, tab and newline. Other control characters are their own
 * segments ("control") so they can be shown by their code.
 */
export function segments(text) {
  const out = [];
  let run = "";
  for (const ch of text) {
    const code = ch.codePointAt(0);
    const kind = WS_KINDS.get(ch) ?? (code < 0x20 || code === 0x7f ? "control" : null);
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

/** How a control character is shown: its escape, e.g. "\\x07". */
export function controlGlyph(ch) {
  return `\\x${ch.codePointAt(0).toString(16).padStart(2, "0")}`;
}
