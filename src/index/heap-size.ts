// What a stored vector costs in the JS heap (V8, 64-bit pointers), so the
// server's memory budget can count ids, metadata and the metadata value index
// beside the linear memories. Estimates, not measurements: each constant is an
// upper figure for the V8 structure named, with hash tables at their emptiest
// (half full after a doubling). test/index/heap-size.test.ts stores thousands
// of vectors of each kind of metadata and checks the estimate against the
// measured growth of the heap.
//
// Environment-free (the browser SDK's index runs the same code).

/** A heap object's size, rounded up to V8's 8-byte allocation unit. */
const align8 = (bytes: number) => (bytes + 7) & ~7;

/** Characters past U+00FF make V8 store a string two bytes a character. */
const TWO_BYTE = /[^\u0000-\u00ff]/;

/** A string: a 16-byte header and one or two bytes a character. */
export function stringHeapBytes(text: string): number {
  return align8(16 + (TWO_BYTE.test(text) ? 2 * text.length : text.length));
}

/**
 * Per stored vector, besides its id's characters: its entries in the id ->
 * row and id -> seq maps (3 words each, in tables at most half full), and its
 * slots in the row arrays (ids, metadata, the two cost arrays) and in the
 * insertion-order log (seq, id), all grown by 1.5x.
 */
export const ROW_HEAP_BYTES = 224;

/** A metadata object: header, properties store, and a dictionary entry (3 words, half full) per key. */
const OBJECT_BYTES = 64;
const KEY_BYTES = 48;
/** An array: header and backing store, a word per element grown by 1.5x. */
const ARRAY_BYTES = 48;
const ELEMENT_BYTES = 12;
/** A number that is not a small integer is a boxed double. */
const NUMBER_BYTES = 16;

/**
 * The metadata value index (metadata-index.ts): a row in a Set (2 words and
 * a half-word of bucket, half full); a new (path, value) posting (the key
 * string aside: a Map entry, the posting object, an empty Set's table); a
 * new path (its entry, an exists Set and a values Map, a Map entry).
 */
export const SET_MEMBER_BYTES = 40;
export const POSTING_BYTES = 256;
export const PATH_BYTES = 448;

const isSmallInteger = (value: number) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31;

/** The heap a parsed JSON value holds (objects, arrays, strings, boxed numbers; keys are shared strings). */
export function jsonHeapBytes(value: unknown): number {
  if (typeof value === 'string') return stringHeapBytes(value);
  if (typeof value === 'number') return isSmallInteger(value) ? 0 : NUMBER_BYTES;
  if (value === null || typeof value !== 'object') return 0;
  if (Array.isArray(value)) {
    let bytes = ARRAY_BYTES + ELEMENT_BYTES * value.length;
    for (const item of value) bytes += jsonHeapBytes(item);
    return bytes;
  }
  let bytes = OBJECT_BYTES;
  for (const key of Object.keys(value)) bytes += KEY_BYTES + jsonHeapBytes((value as Record<string, unknown>)[key]);
  return bytes;
}
