// The wire codec's reader, for every view: mirrors logprob_viz/views/codec.py (its docstring
// describes the format). Every array arrives as {dtype, shape, buffer}; a reader never types an
// array by its field name. Texts arrive as {blob, offsets} of two such arrays. A message with
// binary parts carries `buffer_paths`: where each buffer goes back. No DOM: tested in node.

import { decodeTexts } from "./tokens.js";
import { setPath } from "./model.js";

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export const DTYPES = {
  float32: Float32Array,
  int32: Int32Array,
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
};

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
  if (Ctor === Uint8Array) return bytes;
  if (!LITTLE_ENDIAN) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const out = new Ctor(length);
    const get = GETTERS.get(Ctor);
    for (let i = 0; i < length; i++) out[i] = view[get](i * size, true);
    return out;
  }
  if (bytes.byteOffset % size === 0) return new Ctor(bytes.buffer, bytes.byteOffset, length);
  return new Ctor(bytes.slice().buffer, 0, length);
}

/** The typed array of a `{dtype, shape, buffer}` field (null stays null), checked against its shape. */
export function readArray(field, name) {
  if (field == null) return null;
  const Ctor = DTYPES[field.dtype];
  if (!Ctor) {
    throw new TypeError(`payload array ${name} has dtype ${JSON.stringify(field.dtype)}, not one of ${Object.keys(DTYPES).join(", ")}`);
  }
  const arr = typedArray(field.buffer, Ctor);
  const count = (field.shape ?? [arr.length]).reduce((a, b) => a * b, 1);
  if (arr.length !== count) throw new RangeError(`payload array ${name} holds ${arr.length} values; its shape [${field.shape}] says ${count}`);
  return arr;
}


/** The strings of a `{blob, offsets}` texts field (codec.py `texts`): text e is blob[offsets[e], offsets[e + 1]). */
export function readTexts(field, name) {
  if (field == null) return [];
  const blob = readArray(field.blob, `${name}.blob`) ?? new Uint8Array(0);
  const offsets = readArray(field.offsets, `${name}.offsets`);
  const count = Math.max(0, offsets.length - 1);
  if (count > 0 && offsets[count] > blob.length) {
    throw new RangeError(`payload texts ${name} end at byte ${offsets[count]} of a ${blob.length}-byte blob`);
  }
  return decodeTexts(blob, offsets, count);
}

/** The typed array of field `name` of `fields`, checked to hold `length` values. */
export function sizedArray(fields, name, length) {
  const arr = readArray(fields[name], name);
  if (arr == null) throw new TypeError(`payload array ${name} is missing`);
  if (length != null && arr.length !== length) throw new RangeError(`payload array ${name} has ${arr.length} values, expected ${length}`);
  return arr;
}

/** The payload of a custom message from the kernel (codec.py `message`), its buffers put back at their paths. */
export function unpackMessage(msg, buffers) {
  (msg.buffer_paths || []).forEach((path, i) => setPath(msg.payload, path, buffers[i]));
  return msg.payload;
}
