// The canonical JSON text of a value: object keys sorted, so two values are
// equal as filter-match.ts compares them (jsonEqual) exactly when their
// canonical texts are the same string. The filter index keys an array or
// object at a path by this text (or, past maxIndexedValueBytes, by its hash),
// so an equality with an array or object is found without reading rows.

import { isScalar } from '../json-value.js';

/** How values JSON cannot hold as they are (undefined, functions, NaN, ±Infinity) are read. */
export type Mode = 'stored' | 'operand';

/**
 * The canonical text of `value`, or null when it holds a value JSON cannot
 * (an operand holding one equals no stored value). 'stored' reads the value
 * as its JSON text has it: such a key left out, such an element null.
 */
export function canonicalJson(value: unknown, mode: Mode): string | null {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : mode === 'stored' ? 'null' : null;
    case 'object':
      return Array.isArray(value) ? canonicalArray(value, mode) : canonicalObject(value as Record<string, unknown>, mode);
    default:
      return mode === 'stored' ? 'null' : null;
  }
}

function canonicalArray(array: unknown[], mode: Mode): string | null {
  let out = '[';
  for (let i = 0; i < array.length; i++) {
    const item = canonicalJson(array[i], mode);
    if (item === null) return null;
    out += (i > 0 ? ',' : '') + item;
  }
  return out + ']';
}

function canonicalObject(object: Record<string, unknown>, mode: Mode): string | null {
  let out = '{';
  let first = true;
  // Sorted by UTF-16 units, a total order on distinct keys.
  for (const key of Object.keys(object).sort()) {
    const value = object[key];
    if (mode === 'stored' && (value === undefined || typeof value === 'function' || typeof value === 'symbol')) continue;
    const text = canonicalJson(value, mode);
    if (text === null) return null;
    out += (first ? '' : ',') + JSON.stringify(key) + ':' + text;
    first = false;
  }
  return out + '}';
}

/** A random seed per process and hash, so which values share a hash cannot be chosen by a caller. */
const SEEDS = [(Math.random() * 0x100000000) >>> 0, (Math.random() * 0x100000000) >>> 0];

/** The two halves of the last hashText64 (valid until the next call). */
const HASH = new Uint32Array(2);

/**
 * A 64-bit hash of `text`'s UTF-16 units: two seeded FNV-1a chains over two
 * units at a time, run side by side in one pass, each with murmur3's
 * finaliser. (A chain a half in two passes took 4.4 us of a 1 KB text, a
 * quarter of bench:rag's fill.) Only this process reads it: the filter index
 * verifies the rows under a hash, and is rebuilt on reopen.
 */
export function hashText64(text: string): Uint32Array {
  let a = SEEDS[0] ^ 0x811c9dc5,
    b = SEEDS[1] ^ 0x811c9dc5;
  const pairs = text.length & ~1;
  for (let i = 0; i < pairs; i += 2) {
    const unit = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x01000193);
  }
  // The odd last unit, and the length: "a" and "a\0" make the same pairs.
  const last = pairs < text.length ? text.charCodeAt(pairs) : 0;
  HASH[0] = fmix(Math.imul(a ^ last, 0x01000193) ^ text.length);
  HASH[1] = fmix(Math.imul(b ^ last, 0x01000193) ^ text.length);
  return HASH;
}

/** murmur3's 32-bit finaliser. */
function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** An upper bound of the UTF-8 bytes of `value`'s canonical text, counted until it passes `cap` (then cap + 1). */
export function canonicalBytesUpper(value: unknown, cap: number): number {
  if (isScalar(value)) return typeof value === 'string' ? 6 * value.length + 2 : 24;
  if (value === null || typeof value !== 'object') return 4;
  let bytes = 2;
  const array = Array.isArray(value);
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    bytes += 1 + (array ? 0 : 6 * key.length + 3) + canonicalBytesUpper(item, cap - bytes);
    if (bytes > cap) return cap + 1;
  }
  return bytes;
}
