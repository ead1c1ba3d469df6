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

import { TILE_PASS_QUERIES, interleave4, scanTiles } from "./tiles";
import { heapify, heapOffer, heapSortBestFirst } from "./topk";
import { KEYS_FIRST_MIN_TOPK, KEYS_FIRST_ROWS_PER_POOL, rowAt, selectStoredKeys } from "./selection";
import { METRIC_COSINE, METRIC_DOT, METRIC_L2, WITH_DOT, scanKeys, scanKeysInOrder, scanOne } from "./scan";
export { METRIC_COSINE, METRIC_L2 } from "./scan";
export { KEYS_FIRST_MIN_TOPK, KEYS_FIRST_ROWS_PER_POOL } from "./selection";
export { TILE_PASS_QUERIES } from "./tiles";
export { searchL2Bounded, L2_BOUND_PER_DIM, L2_BOUND_BASE } from "./l2-bounds";
export { searchInt8, KEYS_FIRST_MIN_POOL } from "./int8-search";
export { decodeFloat32Base64, BASE64_BAD_TEXT, BASE64_OUT_OF_RANGE } from "./base64";
export { storeInverseNorms } from "./norms";
export { setWorkArea, WORK_AREA_BYTES } from "./work-area";

/** 1 in the relaxed-SIMD build (simd.ts's madd fused), 0 in the simd128 build: the binding tells them apart by it. */
export const RELAXED_SIMD: i32 = ASC_FEATURE_RELAXED_SIMD ? 1 : 0;

/** First byte the binding may use: static data of this module ends here. */
export function heapBase(): usize {
  return __heap_base;
}

/**
 * Score `nq` queries (stored back to back at `queries`, `dim` floats each)
 * against stored rows and keep the `k` best per query.
 *
 * Rows are `rowList[0..count)` when `rowList` is not 0 (a filtered search),
 * otherwise rows 0..count-1. Query j's results are written best-first to
 * outRows/outKeys at [j*k, j*k + min(k, count)); both must have room for
 * (nq + 1) * k entries (a single-query scan selects through [j*k, j*k + 2k)).
 * `block` is scratch of min(nq & ~3, TILE_PASS_QUERIES) * dim floats
 * (16-byte aligned) for the query tiles, unused below 4 queries. `keyScratch` (0: none) is room for count rounded
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
    } else if (WITH_DOT && metric == METRIC_DOT) {
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
  // Groups of four queries, up to TILE_PASS_QUERIES a pass over the rows,
  // share each load of a stored row; the nq % 4 left are scanned one by one.
  while (nq - j >= 4) {
    const m = min(TILE_PASS_QUERIES, (nq - j) & ~3);
    interleave4(queries + <usize>j * rowBytes, rowBytes, dim, m >> 2, block);
    scanTiles(vectors, invNorms, seqs, dim, rowBytes, rowList, count,
      queries + <usize>j * rowBytes, block, m, metric, k,
      outRows + (<usize>(j * k) << 2), outKeys + (<usize>(j * k) << 2));
    j += m;
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
 * Every listed row's key for one query (`rowList` 0: rows 0..count-1), with
 * no selection, in list order at keys[0..count): what an exact stage over
 * all filtered rows (decay, groupBy) or between stored vectors (MMR) scores.
 * The same step as a search's scan (keysX4: rows g, g + Q, g + 2Q, g + 3Q),
 * so a row's key is the one a search gives it.
 */
export function scoreRows(
  vectors: usize, invNorms: usize, dim: i32, rowList: usize, count: i32,
  query: usize, metric: i32, keys: usize,
): void {
  const rowBytes = <usize>dim << 2;
  if (metric == METRIC_COSINE) {
    scanKeysInOrder(vectors, invNorms, dim, rowBytes, rowList, count, query, METRIC_COSINE, keys);
  } else {
    scanKeysInOrder(vectors, invNorms, dim, rowBytes, rowList, count, query, METRIC_L2, keys);
  }
}

/**
 * Copy rows rowList[0..count) into one block of count x dim floats at
 * `block`, and their inverse norms to `blockNorms`: a row list that is
 * scored many times (MMR's candidates) is then scanned as one stream.
 */
export function gatherRows(vectors: usize, invNorms: usize, dim: i32, rowList: usize, count: i32, block: usize, blockNorms: usize): void {
  const rowBytes = <usize>dim << 2;
  for (let i = 0; i < count; i++) {
    const row = <usize>load<i32>(rowList + (<usize>i << 2));
    memory.copy(block + <usize>i * rowBytes, vectors + row * rowBytes, rowBytes);
    store<f32>(blockNorms + (<usize>i << 2), load<f32>(invNorms + (row << 2)));
  }
}
