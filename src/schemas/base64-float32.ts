// Vectors sent as base64 strings of little-endian float32 (4 bytes per
// component): decoding is a memory copy, against parsing and checking a
// decimal number per component for a JSON array.

/**
 * Padded base64 (RFC 4648): the standard alphabet, with the URL-safe "-" and
 * "_" also accepted (Node's decoder reads both). Published in the OpenAPI
 * document; decoding checks the same thing faster (see decodeFloat32Base64).
 */
export const BASE64_PATTERN = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}==|[A-Za-z0-9+/_-]{3}=)?$/;

/** Characters of the base64 form of `floats` float32 values. */
export const base64Length = (floats: number) => Math.ceil((floats * 4) / 3) * 4;

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Bytes a padded base64 string of `text.length` characters must decode to. */
function expectedBytes(text: string): number {
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  return (text.length / 4) * 3 - pad;
}

function decodeBytes(text: string): Uint8Array | null {
  // Node's Buffer decodes natively; browsers take the atob path.
  const B = (globalThis as { Buffer?: { from(s: string, enc: string): Uint8Array } }).Buffer;
  if (B) return B.from(text, 'base64');
  try {
    const binary = atob(text);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

/**
 * The float32 values of a base64 string, or null when it is not padded
 * base64 (BASE64_PATTERN) or its byte count is not a multiple of 4. Checks
 * nothing else.
 *
 * Rather than run the pattern (slow on long strings), the string is decoded
 * and the byte count compared with what its length implies: decoders skip
 * characters outside the alphabet, padding inside the text and whitespace,
 * and with a length that is a multiple of 4, skipping even one character
 * always yields fewer bytes than expected.
 */
export function decodeFloat32Base64(text: string): Float32Array | null {
  if (text.length % 4 !== 0 || text.charCodeAt(text.length - 3) === 61 /* = */) return null;
  const bytes = decodeBytes(text);
  if (bytes === null || bytes.length !== expectedBytes(text) || bytes.length % 4 !== 0) return null;
  const out = new Float32Array(bytes.length / 4);
  if (littleEndian) {
    new Uint8Array(out.buffer).set(bytes);
  } else {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
  }
  return out;
}

/** The base64 form of float32 values (little-endian), for clients and tests. */
export function encodeFloat32Base64(values: ArrayLike<number>): string {
  // A Float32Array is read in place on little-endian machines (no copy).
  const floats = values instanceof Float32Array && littleEndian ? values : Float32Array.from(values);
  const bytes = new Uint8Array(floats.buffer, floats.byteOffset, floats.byteLength);
  if (!littleEndian) {
    const view = new DataView(floats.buffer);
    for (let i = 0; i < floats.length; i++) view.setFloat32(i * 4, floats[i], true);
  }
  const B = (globalThis as { Buffer?: { from(b: ArrayBufferLike, offset: number, length: number): { toString(enc: string): string } } }).Buffer;
  if (B) return B.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
  return btoa(binary);
}
