// The single-query float32 scan: four rows per step, one from each quarter
// of the rows (or of the filter's row list), their four keys as one v128.

import { dotRowsX4, l2RowsX4 } from "./simd";
import { appendLane, keepBest, rowAt, selectionThreshold, startSelection } from "./selection";
import { heapify } from "./topk";

export const METRIC_COSINE: i32 = 0;

export const METRIC_L2: i32 = 1;

/** Bare dot product (no norm): the baseline the benchmarks hold cosine and l2 to. */
export const METRIC_DOT: i32 = 2;

/** Whether this build scores METRIC_DOT: only the bench build (assembly/bench.ts, --use BENCH_PROBES=1) does. */
export const WITH_DOT: bool = isDefined(BENCH_PROBES);

export function scanOne(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, query: usize, metric: i32, k: i32,
  outRows: usize, outKeys: usize,
): void {
  // One loop per metric (the metric is a constant inside each), so the row
  // loop has no metric branch.
  if (metric == METRIC_COSINE) {
    scanRowsX4(vectors, invNorms, seqs, dim, rowBytes, rowList, count, query, METRIC_COSINE, k, outRows, outKeys);
  } else if (WITH_DOT && metric == METRIC_DOT) {
    scanRowsX4(vectors, invNorms, seqs, dim, rowBytes, rowList, count, query, METRIC_DOT, k, outRows, outKeys);
  } else {
    scanRowsX4(vectors, invNorms, seqs, dim, rowBytes, rowList, count, query, METRIC_L2, k, outRows, outKeys);
  }
}

/**
 * The single-query scan, four rows per step: their four keys come out as one
 * v128, and a step whose four keys are all strictly below the threshold (the
 * k-th best entry so far; -inf until first known) is rejected with one
 * vector compare. The others append their rows to a buffer of 2k entries
 * (appendLane), which is cut to its k best whenever it fills; at the end
 * the k best are arranged as the heap search() sorts. Ties (equal keys) are
 * decided by sequence number at every step, so the result does not depend
 * on the order rows are visited in.
 *
 * The four rows of a step are one from each quarter of the rows (g, g + Q,
 * g + 2Q, g + 3Q), not four neighbours: the hardware prefetchers follow
 * four far-apart streams better than four neighbouring rows in lockstep
 * (docs/experiments/2026-11-21-scan-four-quarters.md).
 * The last count % 4 rows are scored by the same step, the missing lanes
 * filled with a copy of a real row and left out, so every row's key comes
 * from the same arithmetic wherever it falls (equal rows get equal keys).
 */
@inline export function scanRowsX4(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, query: usize, metric: i32, k: i32,
  outRows: usize, outKeys: usize,
): void {
  startSelection();
  let size = 0;
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const r0 = rowAt(rowList, g), r1 = rowAt(rowList, g + quarter);
    const r2 = rowAt(rowList, g + 2 * quarter), r3 = rowAt(rowList, g + 3 * quarter);
    const keys = keysX4(vectors, invNorms, dim, rowBytes, query, metric, r0, r1, r2, r3);
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
    const keys = keysX4(vectors, invNorms, dim, rowBytes, query, metric, r0, r1, r2, r0);
    size = appendLane(outRows, outKeys, seqs, size, k, r0, f32x4.extract_lane(keys, 0));
    if (left > 1) size = appendLane(outRows, outKeys, seqs, size, k, r1, f32x4.extract_lane(keys, 1));
    if (left > 2) size = appendLane(outRows, outKeys, seqs, size, k, r2, f32x4.extract_lane(keys, 2));
  }
  size = keepBest(outRows, outKeys, seqs, size, k);
  heapify(outRows, outKeys, size, seqs);
}

/** The keys of rows r0..r3 (larger is nearer) as the lanes of one v128. */
@inline export function keysX4(
  vectors: usize, invNorms: usize, dim: i32, rowBytes: usize, query: usize, metric: i32,
  r0: i32, r1: i32, r2: i32, r3: i32,
): v128 {
  const v0 = vectors + <usize>r0 * rowBytes, v1 = vectors + <usize>r1 * rowBytes;
  const v2 = vectors + <usize>r2 * rowBytes, v3 = vectors + <usize>r3 * rowBytes;
  if (metric == METRIC_L2) return f32x4.neg(l2RowsX4(query, v0, v1, v2, v3, dim));
  const dots = dotRowsX4(query, v0, v1, v2, v3, dim);
  if (metric == METRIC_DOT) return dots;
  return f32x4.mul(dots, f32x4(
    load<f32>(invNorms + (<usize>r0 << 2)), load<f32>(invNorms + (<usize>r1 << 2)),
    load<f32>(invNorms + (<usize>r2 << 2)), load<f32>(invNorms + (<usize>r3 << 2)),
  ));
}

/** Every listed row's key, stored as scanInt8Keys stores its keys. */
export function scanKeys(
  vectors: usize, invNorms: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, query: usize, metric: i32, keyScratch: usize,
): void {
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const r0 = rowAt(rowList, g), r1 = rowAt(rowList, g + quarter);
    const r2 = rowAt(rowList, g + 2 * quarter), r3 = rowAt(rowList, g + 3 * quarter);
    v128.store(keyScratch + (<usize>g << 4), keysX4(vectors, invNorms, dim, rowBytes, query, metric, r0, r1, r2, r3));
  }
  const i = quarter << 2, left = count - i;
  if (left > 0) {
    const r0 = rowAt(rowList, i);
    const r1 = left > 1 ? rowAt(rowList, i + 1) : r0;
    const r2 = left > 2 ? rowAt(rowList, i + 2) : r0;
    v128.store(keyScratch + (<usize>i << 2), keysX4(vectors, invNorms, dim, rowBytes, query, metric, r0, r1, r2, r0));
  }
}

/** Every listed row's key, as scanKeys scores them, stored in list order (keys[i] for list entry i). */
@inline export function scanKeysInOrder(
  vectors: usize, invNorms: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, query: usize, metric: i32, keys: usize,
): void {
  const quarter = count >> 2;
  const q1 = <usize>quarter << 2;
  for (let g = 0; g < quarter; g++) {
    const r0 = rowAt(rowList, g), r1 = rowAt(rowList, g + quarter);
    const r2 = rowAt(rowList, g + 2 * quarter), r3 = rowAt(rowList, g + 3 * quarter);
    const k = keysX4(vectors, invNorms, dim, rowBytes, query, metric, r0, r1, r2, r3);
    const at = keys + (<usize>g << 2);
    store<f32>(at, f32x4.extract_lane(k, 0));
    store<f32>(at + q1, f32x4.extract_lane(k, 1));
    store<f32>(at + 2 * q1, f32x4.extract_lane(k, 2));
    store<f32>(at + 3 * q1, f32x4.extract_lane(k, 3));
  }
  const i = quarter << 2, left = count - i;
  if (left > 0) {
    const r0 = rowAt(rowList, i);
    const r1 = left > 1 ? rowAt(rowList, i + 1) : r0;
    const r2 = left > 2 ? rowAt(rowList, i + 2) : r0;
    const k = keysX4(vectors, invNorms, dim, rowBytes, query, metric, r0, r1, r2, r0);
    const at = keys + (<usize>i << 2);
    store<f32>(at, f32x4.extract_lane(k, 0));
    if (left > 1) store<f32>(at + 4, f32x4.extract_lane(k, 1));
    if (left > 2) store<f32>(at + 8, f32x4.extract_lane(k, 2));
  }
}

/** The float32 values of rows r0..r3 in a per-row array, as lanes. */
@inline export function gather4(values: usize, r0: i32, r1: i32, r2: i32, r3: i32): v128 {
  return f32x4(
    load<f32>(values + (<usize>r0 << 2)), load<f32>(values + (<usize>r1 << 2)),
    load<f32>(values + (<usize>r2 << 2)), load<f32>(values + (<usize>r3 << 2)),
  );
}
