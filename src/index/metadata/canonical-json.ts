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

/** Half `half` (0 or 1) of a 64-bit hash of `text`'s UTF-16 units: FNV-1a, seeded, with murmur3's finaliser. */
export function hashText(text: string, half: 0 | 1): number {
  let h = SEEDS[half] ^ 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
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
