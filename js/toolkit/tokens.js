// Token text in JS: the one module that turns token bytes into text (the kernel's
// logprob_viz/tokens.py decides what a token reads as; this side only decodes the UTF-8 it
// sent), and says how a text's characters are shown: whitespace marked, control, zero-width and
// bidi characters as glyphs. No DOM here, so `npm test` runs it in node.

const utf8 = new TextDecoder("utf-8");

/**
 * The first n texts of a UTF-8 blob whose text e is `blob[offsets[e], offsets[e + 1])`.
 *
 * Decoded in one call when it can (100,000 small decodes take ~10x longer), then cut at the byte
 * offsets turned into UTF-16 offsets (`unitOffset`). When the bytes are not valid UTF-8 (the decode
 * holds a replacement character), text by text.
 */
export function decodeTexts(blob, offsets, n) {
  return decodeTokens(blob, offsets, n) ?? Array.from({ length: n }, (_, e) => utf8.decode(blob.subarray(offsets[e], offsets[e + 1])));
}

/** `decodeTexts`' one-call path; null when the blob is not valid UTF-8. */
export function decodeTokens(blob, offsets, n) {
  if (n === 0) return [];
  const base = offsets[0];
  const whole = utf8.decode(blob.subarray(base, offsets[n]));
  if (whole.includes("\ufffd")) return null;
  const tokens = new Array(n);
  // As many UTF-16 units as bytes: all ASCII (any other character is fewer units than bytes), so
  // the byte offsets are the units' (1M texts of 80 bytes: ~60 ms instead of ~350 ms, most of the
  // corpus view's open).
  const unitOf = whole.length === offsets[n] - base ? (b) => b : unitOffset(whole);
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = unitOf(offsets[i + 1] - base);
    tokens[i] = whole.slice(start, end);
    start = end;
  }
  return start === whole.length ? tokens : null;
}

/**
 * Byte offset -> UTF-16 offset in the valid UTF-8 that decoded to `whole`, for offsets asked in
 * increasing order. Only the non-ASCII characters move it (each of B bytes and L units moves the
 * offsets after it by B - L), and a regular expression finds them natively: a byte-by-byte count
 * was ~1-3 ms of a 1,000-token view's first render (the loop runs once, before the JIT compiles it).
 * An offset inside a character (a token that ends mid-character) gives its units to the token
 * holding its first byte.
 */
function unitOffset(whole) {
  const wide = /[^\0-\x7f]/gu; // (u: a surrogate pair is one match)
  let shift = 0; // bytes - units of the characters passed
  let next = null; // the next non-ASCII character: { lead (its first byte's offset), bytes, units }
  const advance = () => {
    const m = wide.exec(whole);
    const cp = m ? m[0].codePointAt(0) : 0;
    next = m && { lead: m.index + shift, bytes: cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4, units: m[0].length };
  };
  advance();
  return (b) => {
    while (next && next.lead + next.bytes <= b) {
      shift += next.bytes - next.units;
      advance();
    }
    return next && next.lead < b ? next.lead - shift + next.units : b - shift;
  };
}

/** Bytes as hex pairs: "20 F0 9F". */
export function hexBytes(bytes) {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, "0")).join(" ");
}

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
