// The int8 first stage: approximate keys from the int8 codes (int8.ts), four
// rows per step, and the candidate pool the binding re-ranks in float32.

import { dotI8RowsX4 } from "./int8";
import { appendLane, keepBest, KEYS_FIRST_ROWS_PER_POOL, rowAt, selectionThreshold, selectStoredKeys, startSelection } from "./selection";
import { gather4, METRIC_COSINE, METRIC_DOT, METRIC_L2, WITH_DOT } from "./scan";

/**
 * First stage of an int8 search: approximate keys from the int8 codes of
 * rows [0, count) (or `rowList`) for one query; the best `candidates` (the
 * candidate pool) end up in outRows/outKeys[0, returned count), in no particular
 * order (the binding re-ranks them exactly in float32). outRows/outKeys
 * must have room for 2 x candidates entries (the selection buffer).
 *
 *   codes:  `stride` int8 per row; scales: per-row float32 (max|v| / 127)
 *   aux:    per-row float32: 1/||v|| (cosine) or ||v||^2 (l2)
 *   query16: the query's codes widened to i16; queryScale its max|q| / 127
 * Keys: cosine dot * scale * invNorm; l2 2 * dot * scale * queryScale - ||v||^2
 * (the query's own norm is the same for every row); dot (benchmarks): dot * scale.
 *
 * `keyScratch` (0: none) is room for count rounded up to 4 float32, 16-byte
 * aligned: with it, a pool of at least KEYS_FIRST_MIN_POOL and at least
 * KEYS_FIRST_ROWS_PER_POOL rows per pool entry, the scan only stores every
 * key and the pool is selected after it (scanInt8Keys, selectStoredKeys).
 */
export function searchInt8(
  codes: usize, stride: i32, scales: usize, aux: usize, seqs: usize,
  rowList: usize, count: i32,
  query16: usize, queryScale: f32, metric: i32, candidates: i32,
  outRows: usize, outKeys: usize, keyScratch: usize,
): i32 {
  if (candidates <= 0) return 0; // nothing to keep (the selection buffer needs at least 1)
  if (keyScratch != 0 && candidates >= KEYS_FIRST_MIN_POOL && count >= KEYS_FIRST_ROWS_PER_POOL * candidates) {
    if (metric == METRIC_COSINE) {
      scanInt8Keys(codes, stride, scales, aux, rowList, count, query16, queryScale, METRIC_COSINE, keyScratch);
    } else if (metric == METRIC_L2 || !WITH_DOT) {
      scanInt8Keys(codes, stride, scales, aux, rowList, count, query16, queryScale, METRIC_L2, keyScratch);
    } else {
      scanInt8Keys(codes, stride, scales, aux, rowList, count, query16, queryScale, METRIC_DOT, keyScratch);
    }
    return selectStoredKeys(keyScratch, seqs, rowList, count, candidates, outRows, outKeys);
  }
  if (metric == METRIC_COSINE) {
    return scanInt8(codes, stride, scales, aux, seqs, rowList, count, query16, queryScale, METRIC_COSINE, candidates, outRows, outKeys);
  }
  if (metric == METRIC_L2 || !WITH_DOT) {
    return scanInt8(codes, stride, scales, aux, seqs, rowList, count, query16, queryScale, METRIC_L2, candidates, outRows, outKeys);
  }
  return scanInt8(codes, stride, scales, aux, seqs, rowList, count, query16, queryScale, METRIC_DOT, candidates, outRows, outKeys);
}

/**
 * The smallest pool the int8 first stage selects after the scan (the binding
 * passes keyScratch from this pool on), and the rows per pool entry it needs:
 * below them the threshold in the scan rejects nearly every step anyway.
 */
export const KEYS_FIRST_MIN_POOL: i32 = 256;

/**
 * The int8 scan of a large pool, keys first: the scan stores the four keys
 * of every step with one v128 store and nothing else (no compare, no branch,
 * no append inside the memory-bound loop); the key of list position
 * g + l * quarter lands at 4g + l, the count % 4 tail at its own position.
 */
@inline function scanInt8Keys(
  codes: usize, stride: i32, scales: usize, aux: usize,
  rowList: usize, count: i32,
  query16: usize, queryScale: f32, metric: i32, keyScratch: usize,
): void {
  const twiceQueryScale: f32 = <f32>2 * queryScale;
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const r0 = rowAt(rowList, g), r1 = rowAt(rowList, g + quarter);
    const r2 = rowAt(rowList, g + 2 * quarter), r3 = rowAt(rowList, g + 3 * quarter);
    v128.store(keyScratch + (<usize>g << 4), int8KeysX4(codes, stride, scales, aux, query16, twiceQueryScale, metric, r0, r1, r2, r3));
  }
  const i = quarter << 2, left = count - i;
  if (left > 0) {
    const r0 = rowAt(rowList, i);
    const r1 = left > 1 ? rowAt(rowList, i + 1) : r0;
    const r2 = left > 2 ? rowAt(rowList, i + 2) : r0;
    v128.store(keyScratch + (<usize>i << 2), int8KeysX4(codes, stride, scales, aux, query16, twiceQueryScale, metric, r0, r1, r2, r0));
  }
}

/**
 * searchInt8's scan, four rows per step as in the float32 scan (one from each
 * quarter of the rows; the count % 4 tail in a padded step): a step whose
 * four keys are all strictly below the threshold is rejected with one
 * vector compare, the others append their rows (appendLane). The loop is
 * scanRowsX4's (scan.ts) written out again: one loop for both, with a constant flag
 * choosing the keys, came out of binaryen 3 KB larger, with a second copy of
 * the float32 dot loop in scanOne.
 */
@inline function scanInt8(
  codes: usize, stride: i32, scales: usize, aux: usize, seqs: usize,
  rowList: usize, count: i32,
  query16: usize, queryScale: f32, metric: i32, k: i32,
  outRows: usize, outKeys: usize,
): i32 {
  const twiceQueryScale: f32 = <f32>2 * queryScale;
  startSelection();
  let size = 0;
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const r0 = rowAt(rowList, g), r1 = rowAt(rowList, g + quarter);
    const r2 = rowAt(rowList, g + 2 * quarter), r3 = rowAt(rowList, g + 3 * quarter);
    const keys = int8KeysX4(codes, stride, scales, aux, query16, twiceQueryScale, metric, r0, r1, r2, r3);
    if (i32x4.all_true(f32x4.lt(keys, f32x4.splat(selectionThreshold())))) continue;
    size = appendLane(outRows, outKeys, seqs, size, k, r0, f32x4.extract_lane(keys, 0));
    size = appendLane(outRows, outKeys, seqs, size, k, r1, f32x4.extract_lane(keys, 1));
    size = appendLane(outRows, outKeys, seqs, size, k, r2, f32x4.extract_lane(keys, 2));
    size = appendLane(outRows, outKeys, seqs, size, k, r3, f32x4.extract_lane(keys, 3));
  }
  const i = quarter << 2, left = count - i;
  if (left > 0) {
    const r0 = rowAt(rowList, i);
    const r1 = left > 1 ? rowAt(rowList, i + 1) : r0;
    const r2 = left > 2 ? rowAt(rowList, i + 2) : r0;
    const keys = int8KeysX4(codes, stride, scales, aux, query16, twiceQueryScale, metric, r0, r1, r2, r0);
    size = appendLane(outRows, outKeys, seqs, size, k, r0, f32x4.extract_lane(keys, 0));
    if (left > 1) size = appendLane(outRows, outKeys, seqs, size, k, r1, f32x4.extract_lane(keys, 1));
    if (left > 2) size = appendLane(outRows, outKeys, seqs, size, k, r2, f32x4.extract_lane(keys, 2));
  }
  size = keepBest(outRows, outKeys, seqs, size, k);
  return size;
}

/**
 * The first stage's approximate keys of rows r0..r3 as lanes (the same float
 * operations in every lane, so each equals the row's key computed alone):
 * cosine dot * scale * invNorm; l2 2 * dot * scale * queryScale - ||v||^2
 * (the query's own norm is the same for every row); dot (benchmarks): dot * scale.
 */
@inline function int8KeysX4(
  codes: usize, stride: i32, scales: usize, aux: usize, query16: usize,
  twiceQueryScale: f32, metric: i32, r0: i32, r1: i32, r2: i32, r3: i32,
): v128 {
  const s = <usize>stride;
  const dots = dotI8RowsX4(query16, codes + <usize>r0 * s, codes + <usize>r1 * s, codes + <usize>r2 * s, codes + <usize>r3 * s, stride);
  const scaled = f32x4.mul(f32x4.convert_i32x4_s(dots), gather4(scales, r0, r1, r2, r3));
  if (metric == METRIC_COSINE) return f32x4.mul(scaled, gather4(aux, r0, r1, r2, r3));
  if (metric == METRIC_L2) return f32x4.sub(f32x4.mul(scaled, f32x4.splat(twiceQueryScale)), gather4(aux, r0, r1, r2, r3));
  return scaled;
}
