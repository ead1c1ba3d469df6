// What a stored vector costs in the JS heap (V8, 64-bit pointers), so the
// server's memory budget can count ids beside the linear memories and the
// metadata stores (which are ArrayBuffers, counted as allocated). Estimates,
// not measurements: each constant is an upper figure for the V8 structure
// named, with hash tables at their emptiest (half full after a doubling).
// test/index/heap-size.test.ts stores thousands of vectors of each kind of
// metadata and checks the estimate against the measured growth of the heap.
//
// Environment-free (the browser SDK's index runs the same code).

/** A heap object's size, rounded up to V8's 8-byte allocation unit. */
const align8 = (bytes: number) => (bytes + 7) & ~7;

/** Characters past U+00FF make V8 store a string two bytes a character. */
const TWO_BYTE = /[\u0100-\uffff]/;

/** A string: a 16-byte header and one or two bytes a character. */
export function stringHeapBytes(text: string): number {
  return align8(16 + (TWO_BYTE.test(text) ? 2 * text.length : text.length));
}

/**
 * Per stored vector, besides its id's characters: its entries in the id ->
 * row and id -> seq maps (3 words each, in tables at most half full), and its
 * slots in the ids array and in the insertion-order log (seq, id), all grown
 * by 1.5x. Its metadata is outside the heap (src/index/metadata/).
 */
export const ROW_HEAP_BYTES = 192;
