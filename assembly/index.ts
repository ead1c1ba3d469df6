// tempvec kernel: exact nearest-neighbour scans over one linear memory.
//
// Every export is a flat function over byte addresses and counts; the
// TypeScript binding (src/kernel/kernel-instance.ts) owns the memory layout
// and checks every bound before calling in, so nothing here allocates,
// asserts or throws (the module is built with --runtime stub --noAssert).
//
// Scores are "keys" where larger is nearer:
//   cosine: dot(q, v) * invNorm[v]   (JS passes each query at unit length)
//   l2:     -sum((q - v)^2)           (JS turns it into the distance)
// Ties are broken by the slot's sequence number (earlier insertion first),
// so results do not depend on where a vector happens to sit.

import { dotRowsX4, l2RowsX4, rows4, rows6 } from "./simd";
import { heapify, heapOffer, heapSortBestFirst, selectBestRadix } from "./topk";
import { dotI8RowsX4 } from "./int8";
export { decodeFloat32Base64, BASE64_BAD_TEXT, BASE64_OUT_OF_RANGE } from "./base64";
export { storeInverseNorms } from "./norms";

export const METRIC_COSINE: i32 = 0;
export const METRIC_L2: i32 = 1;
/** Bare dot product (no norm): the baseline the benchmarks hold cosine and l2 to. */
export const METRIC_DOT: i32 = 2;

/** First byte the binding may use: static data of this module ends here. */
export function heapBase(): usize {
  return __heap_base;
}

/**
 * Read `bytes` bytes (a multiple of 64) from `start` with 16-byte SIMD loads
 * and do nothing else: the memory floor a scan of the same rows cannot beat.
 * The sum is returned so the loads cannot be optimised away.
 */
export function readFloor(start: usize, bytes: usize): f32 {
  let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0), acc2 = f32x4.splat(0), acc3 = f32x4.splat(0);
  const end = start + bytes;
  for (let p = start; p < end; p += 64) {
    acc0 = f32x4.add(acc0, v128.load(p));
    acc1 = f32x4.add(acc1, v128.load(p, 16));
    acc2 = f32x4.add(acc2, v128.load(p, 32));
    acc3 = f32x4.add(acc3, v128.load(p, 48));
  }
  const s = f32x4.add(f32x4.add(acc0, acc1), f32x4.add(acc2, acc3));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3);
}

/**
 * The floor as the single-query scan reads: `bytes` (a multiple of 64) from
 * `start` as four streams, one per quarter, in lockstep (the remainder after
 * four equal quarters of whole 64-byte blocks is read at the end). Memory
 * serves four far-apart streams faster than one, so this is the floor that
 * scan is held to; readFloor is the one-stream pass.
 */
export function readFloor4(start: usize, bytes: usize): f32 {
  let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0), acc2 = f32x4.splat(0), acc3 = f32x4.splat(0);
  const quarter = (bytes >> 8) << 6;
  const p1 = start + quarter, p2 = p1 + quarter, p3 = p2 + quarter;
  for (let o: usize = 0; o < quarter; o += 64) {
    acc0 = f32x4.add(acc0, f32x4.add(v128.load(start + o), v128.load(start + o, 16)));
    acc1 = f32x4.add(acc1, f32x4.add(v128.load(p1 + o), v128.load(p1 + o, 16)));
    acc2 = f32x4.add(acc2, f32x4.add(v128.load(p2 + o), v128.load(p2 + o, 16)));
    acc3 = f32x4.add(acc3, f32x4.add(v128.load(p3 + o), v128.load(p3 + o, 16)));
    acc0 = f32x4.add(acc0, f32x4.add(v128.load(start + o, 32), v128.load(start + o, 48)));
    acc1 = f32x4.add(acc1, f32x4.add(v128.load(p1 + o, 32), v128.load(p1 + o, 48)));
    acc2 = f32x4.add(acc2, f32x4.add(v128.load(p2 + o, 32), v128.load(p2 + o, 48)));
    acc3 = f32x4.add(acc3, f32x4.add(v128.load(p3 + o, 32), v128.load(p3 + o, 48)));
  }
  const rest = readFloor(p3 + quarter, bytes - (quarter << 2));
  const s = f32x4.add(f32x4.add(acc0, acc1), f32x4.add(acc2, acc3));
  return f32x4.extract_lane(s, 0) + f32x4.extract_lane(s, 1) + f32x4.extract_lane(s, 2) + f32x4.extract_lane(s, 3) + rest;
}

/**
 * Score `nq` queries (stored back to back at `queries`, `dim` floats each)
 * against stored rows and keep the `k` best per query.
 *
 * Rows are `rowList[0..count)` when `rowList` is not 0 (a filtered search),
 * otherwise rows 0..count-1. Query j's results are written best-first to
 * outRows/outKeys at [j*k, j*k + min(k, count)); both must have room for
 * (nq + 1) * k entries (a single-query scan selects through [j*k, j*k + 2k)).
 * `block` is scratch of 6 * dim floats (16-byte aligned) for the 6-query
 * blocks, unused below 6. `keyScratch` (0: none) is room for count rounded
 * up to 4 float32, 16-byte aligned, for one query with a large k
 * (KEYS_FIRST_MIN_TOPK).
 */
export function search(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32,
  rowList: usize, count: i32,
  queries: usize, nq: i32, metric: i32, k: i32,
  outRows: usize, outKeys: usize, block: usize, keyScratch: usize,
): void {
  if (k <= 0) return; // nothing to keep (the selection buffers need k >= 1)
  const rowBytes = <usize>dim << 2;
  if (nq == 1 && keyScratch != 0 && k >= KEYS_FIRST_MIN_TOPK && count >= KEYS_FIRST_ROWS_PER_POOL * k) {
    // A large top k of one query: every key stored, then selected (see KEYS_FIRST_MIN_TOPK).
    if (metric == METRIC_COSINE) {
      scanKeys(vectors, invNorms, dim, rowBytes, rowList, count, queries, METRIC_COSINE, keyScratch);
    } else if (metric == METRIC_DOT) {
      scanKeys(vectors, invNorms, dim, rowBytes, rowList, count, queries, METRIC_DOT, keyScratch);
    } else {
      scanKeys(vectors, invNorms, dim, rowBytes, rowList, count, queries, METRIC_L2, keyScratch);
    }
    const kept = selectStoredKeys(keyScratch, seqs, rowList, count, k, outRows, outKeys);
    heapify(outRows, outKeys, kept, seqs);
    heapSortBestFirst(outRows, outKeys, kept, seqs);
    return;
  }
  let j = 0;
  // Blocks of six, then four, queries share each load of a stored row.
  for (; j + 6 <= nq; j += 6) {
    interleave6(queries + <usize>j * rowBytes, rowBytes, dim, block);
    scanBlock6(vectors, invNorms, seqs, dim, rowBytes, rowList, count,
      queries + <usize>j * rowBytes, block, metric, k,
      outRows + (<usize>(j * k) << 2), outKeys + (<usize>(j * k) << 2));
  }
  for (; j + 4 <= nq; j += 4) {
    scanBlock4(vectors, invNorms, seqs, dim, rowBytes, rowList, count,
      queries + <usize>j * rowBytes, metric, k,
      outRows + (<usize>(j * k) << 2), outKeys + (<usize>(j * k) << 2));
  }
  for (; j < nq; j++) {
    scanOne(vectors, invNorms, seqs, dim, rowBytes, rowList, count,
      queries + <usize>j * rowBytes, metric, k,
      outRows + (<usize>(j * k) << 2), outKeys + (<usize>(j * k) << 2));
  }
  const kept = min(k, count);
  for (let q = 0; q < nq; q++) {
    heapSortBestFirst(outRows + (<usize>(q * k) << 2), outKeys + (<usize>(q * k) << 2), kept, seqs);
  }
}

/**
 * The smallest top k of one query that search() selects after the scan, when
 * the binding passes keyScratch (count rounded up to 4 float32): the scan
 * then only stores every row's key (one v128 store a step, no compare), and
 * the k best are selected from the stored keys (selectStoredKeys). Inside
 * the scan, a large k lets many steps through the threshold, each a
 * mispredicted branch and four appends, and cuts the buffer some
 * ln(count / k) times; after it, a sample's threshold lets through little
 * more than k keys, in a pass over keys already in cache.
 */
export const KEYS_FIRST_MIN_TOPK: i32 = 32;

/** Every listed row's key, stored as scanInt8Keys stores its keys. */
function scanKeys(
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

@inline function rowAt(rowList: usize, i: i32): i32 {
  return rowList ? load<i32>(rowList + (<usize>i << 2)) : i;
}

function scanOne(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, query: usize, metric: i32, k: i32,
  outRows: usize, outKeys: usize,
): void {
  // One loop per metric (the metric is a constant inside each), so the row
  // loop has no metric branch.
  if (metric == METRIC_COSINE) {
    scanRowsX4(vectors, invNorms, seqs, dim, rowBytes, rowList, count, query, METRIC_COSINE, k, outRows, outKeys);
  } else if (metric == METRIC_DOT) {
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
 * g + 2Q, g + 3Q), not four neighbours: four neighbouring rows read in
 * lockstep measured 4x slower at 10k x 384 (and no faster at 1k) than four
 * far-apart streams, which the hardware prefetchers follow like one.
 * The last count % 4 rows are scored by the same step, the missing lanes
 * filled with a copy of a real row and left out, so every row's key comes
 * from the same arithmetic wherever it falls (equal rows get equal keys).
 */
@inline function scanRowsX4(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, query: usize, metric: i32, k: i32,
  outRows: usize, outKeys: usize,
): void {
  thresholdKey = -Infinity;
  thresholdSeq = u32.MAX_VALUE;
  let size = 0;
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const r0 = rowAt(rowList, g), r1 = rowAt(rowList, g + quarter);
    const r2 = rowAt(rowList, g + 2 * quarter), r3 = rowAt(rowList, g + 3 * quarter);
    const keys = keysX4(vectors, invNorms, dim, rowBytes, query, metric, r0, r1, r2, r3);
    if (i32x4.all_true(f32x4.lt(keys, f32x4.splat(thresholdKey)))) continue;
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
  if (size > k) {
    selectBestRadix(outRows, outKeys, size, k, seqs);
    size = k;
  }
  heapify(outRows, outKeys, size, seqs);
}

/** The keys of rows r0..r3 (larger is nearer) as the lanes of one v128. */
@inline function keysX4(
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
  let worst: f32 = Infinity;
  for (let i = 0; i < pooled; i++) worst = min(worst, load<f32>(outKeys + (<usize>i << 2)));
  const listed = listReaching(bounds, rowList, count, worst, list);
  scanOne(vectors, invNorms, seqs, dim, rowBytes, list, listed, query, METRIC_L2, k, outRows, outKeys);
  heapSortBestFirst(outRows, outKeys, min(k, listed), seqs);
  return listed;
}

/**
 * The k best of `count` stored keys (count >= 8k) in outRows/outKeys[0, k):
 * a large k by selectStoredKeys' sample, a small one by the threshold and
 * cuts alone (a sample costs more than the few keys it would turn away).
 */
function selectPool(keys: usize, seqs: usize, rowList: usize, count: i32, k: i32, outRows: usize, outKeys: usize): i32 {
  if (k >= KEYS_FIRST_MIN_TOPK) return selectStoredKeys(keys, seqs, rowList, count, k, outRows, outKeys);
  let size = filterStoredKeys(keys, seqs, rowList, count, k, outRows, outKeys, -Infinity);
  if (size > k) {
    selectBestRadix(outRows, outKeys, size, k, seqs);
    size = k;
  }
  return size;
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
 * stores them.
 */
function listReaching(bounds: usize, rowList: usize, count: i32, threshold: f32, list: usize): i32 {
  const t = f32x4.splat(threshold);
  let listed = 0;
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const b = v128.load(bounds + (<usize>g << 4));
    if (i32x4.all_true(f32x4.lt(b, t))) continue;
    listed = listIf(list, listed, rowAt(rowList, g), f32x4.extract_lane(b, 0), threshold);
    listed = listIf(list, listed, rowAt(rowList, g + quarter), f32x4.extract_lane(b, 1), threshold);
    listed = listIf(list, listed, rowAt(rowList, g + 2 * quarter), f32x4.extract_lane(b, 2), threshold);
    listed = listIf(list, listed, rowAt(rowList, g + 3 * quarter), f32x4.extract_lane(b, 3), threshold);
  }
  for (let i = quarter << 2; i < count; i++) {
    listed = listIf(list, listed, rowAt(rowList, i), load<f32>(bounds + (<usize>i << 2)), threshold);
  }
  return listed;
}

@inline function listIf(list: usize, listed: i32, row: i32, bound: f32, threshold: f32): i32 {
  store<i32>(list + (<usize>listed << 2), row);
  return listed + <i32>!(bound < threshold);
}

function scanBlock4(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, queries: usize, metric: i32, k: i32,
  outRows: usize, outKeys: usize,
): void {
  const heapBytes = <usize>k << 2;
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (let i = 0; i < count; i++) {
    const row = rowAt(rowList, i);
    const v = vectors + <usize>row * rowBytes;
    let keys: v128;
    if (metric == METRIC_COSINE) {
      keys = f32x4.mul(rows4(queries, rowBytes, v, dim, false), f32x4.splat(load<f32>(invNorms + (<usize>row << 2))));
    } else if (metric == METRIC_DOT) {
      keys = rows4(queries, rowBytes, v, dim, false);
    } else {
      keys = f32x4.neg(rows4(queries, rowBytes, v, dim, true));
    }
    s0 = heapOffer(outRows, outKeys, s0, k, row, f32x4.extract_lane(keys, 0), seqs);
    s1 = heapOffer(outRows + heapBytes, outKeys + heapBytes, s1, k, row, f32x4.extract_lane(keys, 1), seqs);
    s2 = heapOffer(outRows + 2 * heapBytes, outKeys + 2 * heapBytes, s2, k, row, f32x4.extract_lane(keys, 2), seqs);
    s3 = heapOffer(outRows + 3 * heapBytes, outKeys + 3 * heapBytes, s3, k, row, f32x4.extract_lane(keys, 3), seqs);
  }
}

/** The six query keys of one row (written by rows6, read back as two v128). */
const lanes: usize = memory.data(32, 16);

/**
 * Copy six queries (`stride` bytes apart) to `block` chunk by chunk: the
 * 4 floats [4c, 4c + 4) of query j go to block + (6c + j) * 16, so the block
 * loop reads all six at constant offsets from one pointer. The dim % 4
 * tail stays in the original queries.
 */
function interleave6(queries: usize, stride: usize, dim: i32, block: usize): void {
  const chunks = dim >> 2;
  for (let j = 0; j < 6; j++) {
    const q = queries + <usize>j * stride;
    for (let c = 0; c < chunks; c++) {
      v128.store(block + ((<usize>(c * 6 + j)) << 4), v128.load(q + (<usize>c << 4)));
    }
  }
}

function scanBlock6(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, queries: usize, block: usize, metric: i32, k: i32,
  outRows: usize, outKeys: usize,
): void {
  const heapBytes = <usize>k << 2;
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
  // The worst kept key of each query's heap (-inf while it is not full; the
  // two unused lanes +inf): a row whose six keys are all strictly below them
  // changes no heap, and is rejected with two vector compares instead of six
  // heapOffer calls. Anything else (ties, NaN) goes through heapOffer.
  let rootsLo = f32x4.splat(-Infinity), rootsHi = f32x4(-Infinity, -Infinity, Infinity, Infinity);
  for (let i = 0; i < count; i++) {
    const row = rowAt(rowList, i);
    const v = vectors + <usize>row * rowBytes;
    let lo: v128, hi: v128;
    if (metric == METRIC_L2) {
      rows6(queries, block, rowBytes, v, dim, true, lanes);
      lo = f32x4.neg(v128.load(lanes));
      hi = f32x4.neg(v128.load(lanes, 16));
    } else {
      rows6(queries, block, rowBytes, v, dim, false, lanes);
      lo = v128.load(lanes);
      hi = v128.load(lanes, 16);
      if (metric == METRIC_COSINE) {
        const invNorm = f32x4.splat(load<f32>(invNorms + (<usize>row << 2)));
        lo = f32x4.mul(lo, invNorm);
        hi = f32x4.mul(hi, invNorm);
      }
    }
    if (i32x4.all_true(v128.and(f32x4.lt(lo, rootsLo), f32x4.lt(hi, rootsHi)))) continue;
    s0 = heapOffer(outRows, outKeys, s0, k, row, f32x4.extract_lane(lo, 0), seqs);
    s1 = heapOffer(outRows + heapBytes, outKeys + heapBytes, s1, k, row, f32x4.extract_lane(lo, 1), seqs);
    s2 = heapOffer(outRows + 2 * heapBytes, outKeys + 2 * heapBytes, s2, k, row, f32x4.extract_lane(lo, 2), seqs);
    s3 = heapOffer(outRows + 3 * heapBytes, outKeys + 3 * heapBytes, s3, k, row, f32x4.extract_lane(lo, 3), seqs);
    s4 = heapOffer(outRows + 4 * heapBytes, outKeys + 4 * heapBytes, s4, k, row, f32x4.extract_lane(hi, 0), seqs);
    s5 = heapOffer(outRows + 5 * heapBytes, outKeys + 5 * heapBytes, s5, k, row, f32x4.extract_lane(hi, 1), seqs);
    if (s5 == k) { // the six heaps fill together; from here on they stay full
      rootsLo = f32x4(load<f32>(outKeys), load<f32>(outKeys + heapBytes), load<f32>(outKeys + 2 * heapBytes), load<f32>(outKeys + 3 * heapBytes));
      rootsHi = f32x4(load<f32>(outKeys + 4 * heapBytes), load<f32>(outKeys + 5 * heapBytes), Infinity, Infinity);
    }
  }
}

/**
 * First stage of an int8 search: approximate keys from the int8 codes of
 * rows [0, count) (or `rowList`) for one query; the best `k` (the candidate
 * pool) end up in outRows/outKeys[0, returned count), in no particular
 * order (the binding re-ranks them exactly in float32). outRows/outKeys
 * must have room for 2k entries (the selection buffer).
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
  query16: usize, queryScale: f32, metric: i32, k: i32,
  outRows: usize, outKeys: usize, keyScratch: usize,
): i32 {
  if (k <= 0) return 0; // nothing to keep (the selection buffer needs k >= 1)
  if (keyScratch != 0 && k >= KEYS_FIRST_MIN_POOL && count >= KEYS_FIRST_ROWS_PER_POOL * k) {
    if (metric == METRIC_COSINE) {
      scanInt8Keys(codes, stride, scales, aux, rowList, count, query16, queryScale, METRIC_COSINE, keyScratch);
    } else if (metric == METRIC_L2) {
      scanInt8Keys(codes, stride, scales, aux, rowList, count, query16, queryScale, METRIC_L2, keyScratch);
    } else {
      scanInt8Keys(codes, stride, scales, aux, rowList, count, query16, queryScale, METRIC_DOT, keyScratch);
    }
    return selectStoredKeys(keyScratch, seqs, rowList, count, k, outRows, outKeys);
  }
  if (metric == METRIC_COSINE) {
    return scanInt8(codes, stride, scales, aux, seqs, rowList, count, query16, queryScale, METRIC_COSINE, k, outRows, outKeys);
  }
  if (metric == METRIC_L2) {
    return scanInt8(codes, stride, scales, aux, seqs, rowList, count, query16, queryScale, METRIC_L2, k, outRows, outKeys);
  }
  return scanInt8(codes, stride, scales, aux, seqs, rowList, count, query16, queryScale, METRIC_DOT, k, outRows, outKeys);
}

/**
 * The smallest pool the int8 first stage selects after the scan (the binding
 * passes keyScratch from this pool on), and the rows per pool entry it needs:
 * below them the threshold in the scan rejects nearly every step anyway.
 */
export const KEYS_FIRST_MIN_POOL: i32 = 256;
export const KEYS_FIRST_ROWS_PER_POOL: i32 = 8;

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

/** The row whose key scanInt8Keys stored at `index`. */
@inline function rowOfStored(rowList: usize, count: i32, index: i32): i32 {
  const quarter = count >> 2;
  return rowAt(rowList, index < quarter << 2 ? (index >> 2) + (index & 3) * quarter : index);
}

/** Room for selectStoredKeys' sample (static data of this module, 32 KB: the first page of every memory holds it). */
const SAMPLE_CAPACITY: i32 = 4096;
const SAMPLE_ROWS: usize = memory.data(SAMPLE_CAPACITY << 2, 16);
const SAMPLE_KEYS: usize = memory.data(SAMPLE_CAPACITY << 2, 16);

/**
 * Select the k best of `count` stored keys (count >= 8k) into
 * outRows/outKeys[0, k). A sample of 1024 to 4096 keys (every stride-th) gives
 * a first threshold: its rank in the sample is the pool's expected rank plus
 * a margin of 25% and four standard deviations, so that usually a little more
 * than k keys reach it. The stored keys then go through the same threshold,
 * buffer and cuts as the scan's own selection (appendLane), four at a time
 * with one compare, now outside the memory-bound scan. If fewer than k keys
 * reached the sample's threshold (no cut, fewer than k appended), the pass is
 * run again from -inf, so the pool is exact either way.
 */
function selectStoredKeys(keyScratch: usize, seqs: usize, rowList: usize, count: i32, k: i32, outRows: usize, outKeys: usize): i32 {
  // 2k samples, but at least 512 (a small pool's threshold from 2k samples
  // let through some 8 times the pool), and at most half the keys.
  const wanted = min(SAMPLE_CAPACITY, max(2 * k, 512));
  const stride = max(2, (count + wanted - 1) / wanted);
  const samples = count / stride;
  for (let j = 0; j < samples; j++) {
    const index = j * stride;
    appendAt(SAMPLE_ROWS, SAMPLE_KEYS, j, rowOfStored(rowList, count, index), load<f32>(keyScratch + (<usize>index << 2)));
  }
  const expected = <f64>k / <f64>stride;
  const rank = min(samples, <i32>(expected * 1.25 + 4 * Math.sqrt(expected)) + 8);
  selectBestRadix(SAMPLE_ROWS, SAMPLE_KEYS, samples, rank, seqs);
  let size = filterStoredKeys(keyScratch, seqs, rowList, count, k, outRows, outKeys, load<f32>(SAMPLE_KEYS + (<usize>(rank - 1) << 2)));
  if (size < k) size = filterStoredKeys(keyScratch, seqs, rowList, count, k, outRows, outKeys, -Infinity);
  if (size > k) {
    selectBestRadix(outRows, outKeys, size, k, seqs);
    size = k;
  }
  return size;
}

/**
 * Append every stored key at or above `from` (then at or above the cuts'
 * thresholds) to the buffer; returns its end. Four keys at a time: one
 * compare gives a 4-bit mask of the lanes that pass, one swizzle by that
 * mask's entry of PASSING_FIRST moves them (and their rows) to the front,
 * and one store of each writes them at the end, which advances by their
 * count: no branch per lane and no store per key. The buffer is cut to its
 * k best (the k-th becoming the threshold) whenever fewer than 4 entries
 * are left free. Keys equal to the threshold enter too (the cuts break ties).
 * Below 8 entries (2k - 4 < k) the lanes go one by one (appendLane).
 */
function filterStoredKeys(keyScratch: usize, seqs: usize, rowList: usize, count: i32, k: i32, outRows: usize, outKeys: usize, from: f32): i32 {
  thresholdKey = from;
  thresholdSeq = u32.MAX_VALUE; // a key equal to `from` enters
  let size = 0;
  const quarter = count >> 2;
  if (k < 8) {
    for (let g = 0; g < quarter; g++) {
      const keys = v128.load(keyScratch + (<usize>g << 4));
      if (i32x4.all_true(f32x4.lt(keys, f32x4.splat(thresholdKey)))) continue;
      size = appendLane(outRows, outKeys, seqs, size, k, rowAt(rowList, g), f32x4.extract_lane(keys, 0));
      size = appendLane(outRows, outKeys, seqs, size, k, rowAt(rowList, g + quarter), f32x4.extract_lane(keys, 1));
      size = appendLane(outRows, outKeys, seqs, size, k, rowAt(rowList, g + 2 * quarter), f32x4.extract_lane(keys, 2));
      size = appendLane(outRows, outKeys, seqs, size, k, rowAt(rowList, g + 3 * quarter), f32x4.extract_lane(keys, 3));
    }
  } else {
    const offsets = i32x4(0, quarter, 2 * quarter, 3 * quarter);
    for (let g = 0; g < quarter; g++) {
      const keys = v128.load(keyScratch + (<usize>g << 4));
      const mask = i32x4.bitmask(f32x4.ge(keys, f32x4.splat(thresholdKey)));
      if (mask == 0) continue;
      const rows = rowList
        ? i32x4(rowAt(rowList, g), rowAt(rowList, g + quarter), rowAt(rowList, g + 2 * quarter), rowAt(rowList, g + 3 * quarter))
        : i32x4.add(i32x4.splat(g), offsets);
      const front = v128.load(PASSING_FIRST + (<usize>mask << 4));
      v128.store(outKeys + (<usize>size << 2), i8x16.swizzle(keys, front));
      v128.store(outRows + (<usize>size << 2), i8x16.swizzle(rows, front));
      size += <i32>popcnt<u32>(mask);
      if (size > 2 * k - 4) size = cutTo(outRows, outKeys, seqs, size, k);
    }
  }
  for (let i = quarter << 2; i < count; i++) {
    size = appendLane(outRows, outKeys, seqs, size, k, rowAt(rowList, i), load<f32>(keyScratch + (<usize>i << 2)));
  }
  return size;
}

/** i8x16.swizzle indices that move the lanes set in a 4-bit mask to the front, one v128 per mask (16). */
const PASSING_FIRST: usize = memory.data<u8>([
  0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x00, 0x01, 0x02, 0x03, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x04, 0x05, 0x06, 0x07, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x08, 0x09, 0x0a, 0x0b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x0a, 0x0b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x80, 0x80, 0x80, 0x80,
  0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x00, 0x01, 0x02, 0x03, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x04, 0x05, 0x06, 0x07, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80,
  0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
  0x00, 0x01, 0x02, 0x03, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80,
  0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x80, 0x80, 0x80, 0x80,
  0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f
], 16);

/** Cut the buffer's `size` entries (k <= size) to its k best; the k-th becomes the threshold. Returns k. */
function cutTo(outRows: usize, outKeys: usize, seqs: usize, size: i32, k: i32): i32 {
  selectBestRadix(outRows, outKeys, size, k, seqs);
  thresholdKey = load<f32>(outKeys + (<usize>(k - 1) << 2));
  thresholdSeq = load<u32>(seqs + (<usize>load<i32>(outRows + (<usize>(k - 1) << 2)) << 2));
  return k;
}

/**
 * The k-th best entry so far (the threshold a row must beat to enter the
 * selection buffer of the single-query scan or the int8 first stage): -inf
 * until the buffer is first cut, so every row enters until then. State of
 * the one scan running (a kernel call runs alone).
 */
let thresholdKey: f32 = -Infinity;
let thresholdSeq: u32 = u32.MAX_VALUE;

/**
 * searchInt8's scan, four rows per step as in the float32 scan (one from each
 * quarter of the rows; the count % 4 tail in a padded step): a step whose
 * four keys are all strictly below the threshold is rejected with one
 * vector compare, the others append their rows (appendLane). The loop is
 * scanRowsX4's written out again: one loop for both, with a constant flag
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
  thresholdKey = -Infinity;
  thresholdSeq = u32.MAX_VALUE;
  let size = 0;
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const r0 = rowAt(rowList, g), r1 = rowAt(rowList, g + quarter);
    const r2 = rowAt(rowList, g + 2 * quarter), r3 = rowAt(rowList, g + 3 * quarter);
    const keys = int8KeysX4(codes, stride, scales, aux, query16, twiceQueryScale, metric, r0, r1, r2, r3);
    if (i32x4.all_true(f32x4.lt(keys, f32x4.splat(thresholdKey)))) continue;
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
  if (size > k) {
    selectBestRadix(outRows, outKeys, size, k, seqs);
    size = k;
  }
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

/** The float32 values of rows r0..r3 in a per-row array, as lanes. */
@inline function gather4(values: usize, r0: i32, r1: i32, r2: i32, r3: i32): v128 {
  return f32x4(
    load<f32>(values + (<usize>r0 << 2)), load<f32>(values + (<usize>r1 << 2)),
    load<f32>(values + (<usize>r2 << 2)), load<f32>(values + (<usize>r3 << 2)),
  );
}

/**
 * Append (row, key) to the selection buffer (capacity 2k): the entry is
 * written at the end, and the end advances only if it ranks before the
 * threshold (branch-free but for an exact tie, which compares insertion
 * sequences). A full buffer is cut to its k best (reselect). Returns the
 * new end.
 */
@inline function appendLane(outRows: usize, outKeys: usize, seqs: usize, size: i32, k: i32, row: i32, key: f32): i32 {
  appendAt(outRows, outKeys, size, row, key);
  let enters = key > thresholdKey;
  if (key == thresholdKey) enters = load<u32>(seqs + (<usize>row << 2)) < thresholdSeq; // rare: a tie
  size += <i32>enters;
  if (size == 2 * k) size = reselect(outRows, outKeys, seqs, k);
  return size;
}

/** Cut the full buffer to its k best; the k-th becomes the threshold. Returns k. */
function reselect(outRows: usize, outKeys: usize, seqs: usize, k: i32): i32 {
  return cutTo(outRows, outKeys, seqs, 2 * k, k);
}

@inline function appendAt(rows: usize, keys: usize, at: i32, row: i32, key: f32): void {
  store<i32>(rows + (<usize>at << 2), row);
  store<f32>(keys + (<usize>at << 2), key);
}
