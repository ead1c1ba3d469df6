// The kernel's mutable fixed-size buffers (a tile's sums, the per-query heap
// sizes and roots of a pass, a key sample, radix counters) at one movable
// base: each instance over a shared memory (one per worker thread) points
// it at a region of its own (setWorkArea), so searches run side by side.

/** A tile's sums (32 bytes), then its even-chunk sums between passes (128). */
export const TILE_SUMS: usize = 0;
/** Per query of a pass (TILE_PASS_QUERIES = 16): heap size (i32) and worst kept key (f32). */
export const HEAP_SIZES: usize = 160;
export const HEAP_ROOTS: usize = 224;
/** selectStoredKeys' sample of 512 rows and keys. */
export const SAMPLE_ROWS: usize = 288;
export const SAMPLE_KEYS: usize = 2336;
/** The radix select's 2^10 counters. */
export const BUCKETS: usize = 4384;
export const WORK_AREA_BYTES: i32 = 8480;

const STATIC_AREA: usize = memory.data(8480, 16);
let workArea: usize = STATIC_AREA;

/** Point this instance's buffers at `at` (WORK_AREA_BYTES, 16-byte aligned); 0 puts them back in static data. */
export function setWorkArea(at: usize): void {
  workArea = at != 0 ? at : STATIC_AREA;
}

@inline export function workAt(offset: usize): usize {
  return workArea + offset;
}
