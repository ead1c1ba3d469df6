// Metadata as UTF-8 JSON bytes (exactly JSON.stringify's text), made once per
// object: the request schema measures each metadata object against
// MAX_METADATA_BYTES, and the index stores the same bytes. Remembered per
// object until the object is collected (the request's end); a value passed
// on is never mutated, so the bytes stay true.

const utf8 = new TextEncoder();
const encoded = new WeakMap<object, Uint8Array>();

/** The UTF-8 bytes of `value` as JSON. */
export function jsonBytes(value: object): Uint8Array {
  let bytes = encoded.get(value);
  if (bytes === undefined) {
    bytes = utf8.encode(JSON.stringify(value));
    encoded.set(value, bytes);
  }
  return bytes;
}

export function jsonByteLength(value: unknown): number {
  if (typeof value === 'object' && value !== null) return jsonBytes(value).length;
  return utf8.encode(JSON.stringify(value)).length;
}
