// Test helpers: a view's payload pieces as views/codec.py writes them, built by hand in node.

export const DTYPE = new Map([
  [Float32Array, "float32"], [Int32Array, "int32"], [Uint8Array, "uint8"], [Uint16Array, "uint16"], [Uint32Array, "uint32"],
]);

/** `{dtype, shape, buffer}` as views/codec.py `array` writes it, the buffer a DataView over the array's bytes. */
export const field = (typed, shape = [typed.length]) => ({ dtype: DTYPE.get(typed.constructor), shape, buffer: new DataView(typed.buffer) });

/** `strings` as UTF-8 one after another, and where each starts (and the last ends). */
export function utf8Table(strings) {
  const parts = strings.map((s) => new TextEncoder().encode(s));
  const offsets = new Uint32Array(parts.length + 1);
  parts.forEach((p, i) => (offsets[i + 1] = offsets[i] + p.length));
  const blob = new Uint8Array(offsets[parts.length]);
  parts.forEach((p, i) => blob.set(p, offsets[i]));
  return { blob, offsets };
}

/** `{blob, offsets}` as views/codec.py `texts` writes it. */
export function texts(strings) {
  const { blob, offsets } = utf8Table(strings);
  return { blob: field(blob), offsets: field(offsets) };
}
