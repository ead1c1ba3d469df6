// One l2 query searched in two exact passes: upper bounds of every row's key
// from the dot-product loop, then the l2 sum of the rows the bounds leave.

import { dotRowsX4 } from "./simd";
import { heapSortBestFirst } from "./topk";
import { appendPassing, KEYS_FIRST_ROWS_PER_POOL, rowAt, selectPool, storedRows } from "./selection";
import { gather4, METRIC_L2, scanOne } from "./scan";

/**
 * The exact single-query l2 search in two passes, for what the l2 loop costs:
 * a subtract per float more than the dot loop, which is what bounds the scan
 * when rows sit in cache (and nearly so at 100k x 384). Same rows and keys,
 * best first, as search() with one l2 query; returns how many rows were
 * scored exactly (the second pass).
 *
 * 1. Every row gets an upper bound of its exact key from the dot loop:
 *      2 q.v - ||v||^2 - ||q||^2 + (L2_BOUND_PER_DIM * dim + L2_BOUND_BASE) * 2^-24 * (||q|| + ||v||)^2 + dim * 2^-140
 *    (||v|| = 1 / invNorm). The expansion and the exact l2 sum both round
 *    within the relative term (each float32 sum of dim terms by at most about
 *    dim * 2^-24 of its magnitude, (||q|| + ||v||)^2 bounding every
 *    magnitude); the absolute term covers underflow in subnormal products.
 * 2. The k rows of the best bounds are scored exactly; T, the worst of their
 *    keys, is at most the true k-th best key.
 * 3. Every row of the true top k then has bound >= key >= T, so the exact
 *    scan of the rows whose bound reaches T finds them all, with the keys and
 *    the tie-break by sequence that scanning every row would give (a row's key
 *    does not depend on the list it is scanned in).
 *
 * Scratch, 16-byte aligned: `bounds` count (rounded up to 4) float32, `list`
 * count int32, poolRows/poolKeys and outRows/outKeys 2k entries each.
 * Below KEYS_FIRST_ROWS_PER_POOL rows per result the plain scan runs instead.
 */
export function searchL2Bounded(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32,
  rowList: usize, count: i32, query: usize, queryNorm: f32, k: i32,
  outRows: usize, outKeys: usize,
  bounds: usize, list: usize, poolRows: usize, poolKeys: usize,
): i32 {
  if (k <= 0) return 0;
  const rowBytes = <usize>dim << 2;
  if (count < KEYS_FIRST_ROWS_PER_POOL * k) {
    scanOne(vectors, invNorms, seqs, dim, rowBytes, rowList, count, query, METRIC_L2, k, outRows, outKeys);
    heapSortBestFirst(outRows, outKeys, min(k, count), seqs);
    return count;
  }
  scanL2Bounds(vectors, invNorms, dim, rowBytes, rowList, count, query, queryNorm, bounds);
  const pooled = selectPool(bounds, seqs, rowList, count, k, poolRows, poolKeys);
  scanOne(vectors, invNorms, seqs, dim, rowBytes, poolRows, pooled, query, METRIC_L2, k, outRows, outKeys);
  // scanOne leaves its k best as a heap whose root, at 0, is the worst.
  const listed = listReaching(bounds, rowList, count, load<f32>(outKeys), list);
  scanOne(vectors, invNorms, seqs, dim, rowBytes, list, listed, query, METRIC_L2, k, outRows, outKeys);
  heapSortBestFirst(outRows, outKeys, min(k, listed), seqs);
  return listed;
}

/** searchL2Bounded's slack per dimension and base, in units of 2^-24 (float32's unit roundoff) of (||q|| + ||v||)^2; twice what the rounding needs. */
export const L2_BOUND_PER_DIM: i32 = 4;

export const L2_BOUND_BASE: i32 = 64;

/**
 * Upper bounds of the l2 keys of every listed row from the dot loop, stored
 * as scanInt8Keys stores its keys (list position g + l * quarter at 4g + l,
 * the count % 4 tail at its own position).
 */
function scanL2Bounds(
  vectors: usize, invNorms: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, query: usize, queryNorm: f32, bounds: usize,
): void {
  const relative = f32x4.splat(<f32>(L2_BOUND_PER_DIM * dim + L2_BOUND_BASE) * <f32>5.9604645e-8); // 2^-24
  const absolute = f32x4.splat(<f32>dim * <f32>7.174648e-43); // 2^-140
  const qNorm = f32x4.splat(queryNorm);
  const qSquare = f32x4.splat(queryNorm * queryNorm);
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const r0 = rowAt(rowList, g), r1 = rowAt(rowList, g + quarter);
    const r2 = rowAt(rowList, g + 2 * quarter), r3 = rowAt(rowList, g + 3 * quarter);
    v128.store(bounds + (<usize>g << 4), l2BoundsX4(vectors, invNorms, dim, rowBytes, query, qNorm, qSquare, relative, absolute, r0, r1, r2, r3));
  }
  const i = quarter << 2, left = count - i;
  if (left > 0) {
    const r0 = rowAt(rowList, i);
    const r1 = left > 1 ? rowAt(rowList, i + 1) : r0;
    const r2 = left > 2 ? rowAt(rowList, i + 2) : r0;
    v128.store(bounds + (<usize>i << 2), l2BoundsX4(vectors, invNorms, dim, rowBytes, query, qNorm, qSquare, relative, absolute, r0, r1, r2, r0));
  }
}

@inline function l2BoundsX4(
  vectors: usize, invNorms: usize, dim: i32, rowBytes: usize, query: usize,
  qNorm: v128, qSquare: v128, relative: v128, absolute: v128,
  r0: i32, r1: i32, r2: i32, r3: i32,
): v128 {
  const dots = dotRowsX4(query, vectors + <usize>r0 * rowBytes, vectors + <usize>r1 * rowBytes,
    vectors + <usize>r2 * rowBytes, vectors + <usize>r3 * rowBytes, dim);
  const inv = gather4(invNorms, r0, r1, r2, r3);
  // ||v|| = 1 / invNorm; a zero row's invNorm is 0 (and one too small to
  // square in float64 has +inf): both give 0 here.
  const zero = f32x4.splat(0);
  const norm = v128.bitselect(f32x4.div(f32x4.splat(1), inv), zero, f32x4.gt(inv, zero));
  const sum = f32x4.add(qNorm, norm);
  const slack = f32x4.add(f32x4.mul(relative, f32x4.mul(sum, sum)), absolute);
  const estimate = f32x4.sub(f32x4.sub(f32x4.add(dots, dots), f32x4.mul(norm, norm)), qSquare);
  return f32x4.add(estimate, slack);
}

/**
 * The rows (in `list`) whose stored bound is not below `threshold`; a NaN
 * bound is listed too. Returns how many. Bounds stored as scanL2Bounds
 * stores them; a group's rows are appended as filterStoredKeys appends them
 * (appendPassing: before group g at most 4g are listed, so the 16-byte store
 * stays within the list's count entries).
 */
function listReaching(bounds: usize, rowList: usize, count: i32, threshold: f32, list: usize): i32 {
  const t = f32x4.splat(threshold);
  let listed = 0;
  const quarter = count >> 2;
  const offsets = i32x4(0, quarter, 2 * quarter, 3 * quarter);
  for (let g = 0; g < quarter; g++) {
    const mask = i32x4.bitmask(v128.not(f32x4.lt(v128.load(bounds + (<usize>g << 4)), t)));
    if (mask != 0) listed = appendPassing(list, listed, storedRows(rowList, g, quarter, offsets), mask);
  }
  for (let i = quarter << 2; i < count; i++) {
    store<i32>(list + (<usize>listed << 2), rowAt(rowList, i));
    listed += <i32>!(load<f32>(bounds + (<usize>i << 2)) < threshold);
  }
  return listed;
}
