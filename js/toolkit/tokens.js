// Token text in JS: the one module that turns token bytes into text (the kernel's
// logprob_viz/tokens.py decides what a token reads as; this side only decodes the UTF-8 it
// sent), and says how a text's characters are shown: whitespace marked, control, zero-width and
// bidi characters as glyphs. No DOM here, so `npm test` runs it in node.

const utf8 = new TextDecoder("utf-8");

/**
 * The first n texts of a UTF-8 blob whose text e is `blob[offsets[e], offsets[e + 1])`.
 *
 * Decoded in one call when it can (100,000 small decodes take ~10x longer): UTF-8 byte offsets
 * become UTF-16 offsets by counting lead bytes. When the bytes are not valid UTF-8 (the counts
 * would not match), text by text.
 */
export function decodeTexts(blob, offsets, n) {
  return decodeTokens(blob, offsets, n) ?? Array.from({ length: n }, (_, e) => utf8.decode(blob.subarray(offsets[e], offsets[e + 1])));
}

/** `decodeTexts`' one-call path; null when the blob is not valid UTF-8. */
export function decodeTokens(blob, offsets, n) {
  if (n === 0) return [];
  const base = offsets[0];
  const whole = utf8.decode(blob.subarray(base, offsets[n]));
  const tokens = new Array(n);
  if (whole.length === offsets[n] - base && !whole.includes("\ufffd")) {
    // As many UTF-16 units as bytes, none a replacement: all ASCII (any other character is fewer
    // units than bytes), so the byte offsets are the units' and no byte needs reading (1M texts of
    // 80 bytes: ~60 ms instead of ~350 ms, most of the corpus view's open).
    for (let i = 0; i < n; i++) tokens[i] = whole.slice(offsets[i] - base, offsets[i + 1] - base);
    return tokens;
  }
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
