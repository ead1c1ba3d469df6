// search-many: queries scored in register tiles of four queries x two rows
// (simd.ts tile4x2), up to TILE_PASS_QUERIES queries per pass over the rows.
// A pass goes through the rows in blocks of ROW_BLOCK_BYTES, each swept by
// every tile in turn: a row is read from memory once for all the pass's
// queries (the later tiles find it in L2), each tile's four queries stay in
// L1 during its sweep, and every tile step does eight products for six
// loads. A tile gives each query exactly the sums the single scan gives it,
// so a query's ids and scores do not depend on its batch.

import { HEAP_ROOTS, HEAP_SIZES, TILE_SUMS, workAt } from "./work-area";
import { tile4x2 } from "./simd";
import { heapOffer } from "./topk";
import { rowAt } from "./selection";
import { METRIC_COSINE, METRIC_L2 } from "./scan";

/** Most queries one pass over the rows scores: four tiles of four (their chunks take 16 * dim floats of scratch). */
export const TILE_PASS_QUERIES: i32 = 16;

/** Rows a block of the pass holds: 128 KB, well inside L2, so the tiles after the first read it from there. */
const ROW_BLOCK_BYTES: usize = 128 << 10;

// In the work area: one tile's sums (row 0's four queries, then row 1's), and
// per query of the pass its heap's size (i32) and worst kept key (f32; -inf
// until the heap is full).

/**
 * Copy `groups` x 4 queries (`stride` bytes apart) to `block` by 4-float
 * chunk: the floats [4c, 4c + 4) of query 4g + j go to
 * block + g * (dim / 4) * 64 + (4c + j) * 16, so a tile reads its four
 * queries at constant offsets from one pointer. The dim % 4 tail stays in
 * the original queries.
 */
export function interleave4(queries: usize, stride: usize, dim: i32, groups: i32, block: usize): void {
  const chunks = dim >> 2;
  for (let j = 0, n = groups << 2; j < n; j++) {
    const q = queries + <usize>j * stride;
    const to = block + <usize>(j >> 2) * (<usize>chunks << 6) + (<usize>(j & 3) << 4);
    for (let c = 0; c < chunks; c++) {
      v128.store(to + (<usize>c << 6), v128.load(q + (<usize>c << 4)));
    }
  }
}

/**
 * Keep the `k` best rows of rowList[0..count) (rows 0..count-1 without a
 * list) for each of `nq` queries (a multiple of 4, at most
 * TILE_PASS_QUERIES), stored `rowBytes` apart at `queries` and interleaved
 * in `block` by interleave4. Query j's heap is outRows/outKeys + j * k.
 */
export function scanTiles(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, queries: usize, block: usize, nq: i32, metric: i32, k: i32,
  outRows: usize, outKeys: usize,
): void {
  memory.fill(workAt(HEAP_SIZES), 0, <usize>nq << 2);
  for (let j = 0; j < nq; j++) store<f32>(workAt(HEAP_ROOTS) + (<usize>j << 2), -Infinity);
  // One function per loop: V8 allocates registers over a whole function, and
  // the l2 and product tiles inlined side by side in one slowed both.
  if (metric == METRIC_L2) {
    scanTilesL2(vectors, seqs, dim, rowBytes, rowList, count, queries, block, nq, k, outRows, outKeys);
  } else {
    scanTilesProducts(vectors, invNorms, seqs, dim, rowBytes, rowList, count, queries, block, nq, metric == METRIC_COSINE, k, outRows, outKeys);
  }
}

function scanTilesL2(
  vectors: usize, seqs: usize, dim: i32, rowBytes: usize, rowList: usize, count: i32,
  queries: usize, block: usize, nq: i32, k: i32, outRows: usize, outKeys: usize,
): void {
  scanTilesOf(vectors, 0, seqs, dim, rowBytes, rowList, count, queries, block, nq, true, false, k, outRows, outKeys);
}

function scanTilesProducts(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize, rowList: usize, count: i32,
  queries: usize, block: usize, nq: i32, cosine: bool, k: i32, outRows: usize, outKeys: usize,
): void {
  scanTilesOf(vectors, invNorms, seqs, dim, rowBytes, rowList, count, queries, block, nq, false, cosine, k, outRows, outKeys);
}

@inline function scanTilesOf(
  vectors: usize, invNorms: usize, seqs: usize, dim: i32, rowBytes: usize,
  rowList: usize, count: i32, queries: usize, block: usize, nq: i32, l2: bool, cosine: bool, k: i32,
  outRows: usize, outKeys: usize,
): void {
  const groupBytes = <usize>(dim >> 2) << 6;
  // Rows in blocks of about ROW_BLOCK_BYTES, each block scored by every tile
  // in turn: the first tile reads the block from memory, the others from L2,
  // and each tile's four queries stay in L1 while it sweeps the block.
  const blockRows = max(2, <i32>(ROW_BLOCK_BYTES / rowBytes) & ~1);
  const tileSums = workAt(TILE_SUMS), heapRoots = workAt(HEAP_ROOTS);
  for (let first = 0; first < count; first += blockRows) {
    const last = min(count, first + blockRows);
    for (let g = 0; g < nq; g += 4) {
      const q = queries + <usize>g * rowBytes, group = block + <usize>(g >> 2) * groupBytes;
      const roots = heapRoots + (<usize>g << 2);
      for (let i = first; i < last; i += 2) {
        const row0 = rowAt(rowList, i);
        const pair = i + 1 < last; // an odd count's last row is scored as both rows of its tile
        const row1 = pair ? rowAt(rowList, i + 1) : row0;
        tile4x2(q, group, rowBytes, vectors + <usize>row0 * rowBytes, vectors + <usize>row1 * rowBytes, dim, l2, tileSums);
        let keys0 = v128.load(tileSums), keys1 = v128.load(tileSums, 16);
        if (l2) {
          keys0 = f32x4.neg(keys0);
          keys1 = f32x4.neg(keys1);
        } else if (cosine) {
          keys0 = f32x4.mul(keys0, f32x4.splat(load<f32>(invNorms + (<usize>row0 << 2))));
          keys1 = f32x4.mul(keys1, f32x4.splat(load<f32>(invNorms + (<usize>row1 << 2))));
        }
        // Four keys all strictly below their heaps' worst change nothing: one
        // compare rejects them. Anything else (ties, NaN) goes through heapOffer.
        if (!i32x4.all_true(f32x4.lt(keys0, v128.load(roots)))) {
          offerTile(outRows, outKeys, seqs, k, g, row0, keys0);
        }
        if (pair && !i32x4.all_true(f32x4.lt(keys1, v128.load(roots)))) {
          offerTile(outRows, outKeys, seqs, k, g, row1, keys1);
        }
      }
    }
  }
}

/** Offer `row` with key lane j to the heap of query first + j, for the four queries of one tile. */
function offerTile(outRows: usize, outKeys: usize, seqs: usize, k: i32, first: i32, row: i32, keys: v128): void {
  offerLane(outRows, outKeys, seqs, k, first, row, f32x4.extract_lane(keys, 0));
  offerLane(outRows, outKeys, seqs, k, first + 1, row, f32x4.extract_lane(keys, 1));
  offerLane(outRows, outKeys, seqs, k, first + 2, row, f32x4.extract_lane(keys, 2));
  offerLane(outRows, outKeys, seqs, k, first + 3, row, f32x4.extract_lane(keys, 3));
}

@inline function offerLane(outRows: usize, outKeys: usize, seqs: usize, k: i32, j: i32, row: i32, key: f32): void {
  const at = <usize>j * (<usize>k << 2);
  const sizeAt = workAt(HEAP_SIZES) + (<usize>j << 2);
  const size = heapOffer(outRows + at, outKeys + at, load<i32>(sizeAt), k, row, key, seqs);
  store<i32>(sizeAt, size);
  if (size == k) store<f32>(workAt(HEAP_ROOTS) + (<usize>j << 2), load<f32>(outKeys + at));
}
