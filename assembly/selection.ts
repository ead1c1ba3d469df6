// The selection buffer shared by the scans: rows whose key reaches the
// threshold (the k-th best entry so far) are appended to a buffer of 2k
// entries, which is cut to its k best (topk.ts: selectBestRadix) whenever it
// fills; and the selection of the k best of keys stored by a scan
// (selectStoredKeys), from a threshold sampled from them.

import { SAMPLE_KEYS, SAMPLE_ROWS, workAt } from "./work-area";
import { selectBestRadix } from "./topk";

/**
 * The k-th best entry so far (the threshold a row must beat to enter the
 * buffer), its key and its row's insertion sequence: -inf until the buffer is
 * first cut, so every row enters until then. State of the one scan running
 * (a kernel call runs alone).
 */
let thresholdKey: f32 = -Infinity;
let thresholdSeq: u32 = u32.MAX_VALUE;

/** Start a selection: every row enters the buffer until it is first cut. */
@inline export function startSelection(): void {
  thresholdKey = -Infinity;
  thresholdSeq = u32.MAX_VALUE;
}

/** The key a row must reach to enter the buffer (a key equal to it enters only with an earlier sequence). */
@inline export function selectionThreshold(): f32 {
  return thresholdKey;
}

/** Cut a buffer of `size` entries to its k best if it holds more; returns how many it holds then. */
@inline export function keepBest(outRows: usize, outKeys: usize, seqs: usize, size: i32, k: i32): i32 {
  if (size <= k) return size;
  selectBestRadix(outRows, outKeys, size, k, seqs);
  return k;
}

@inline export function rowAt(rowList: usize, i: i32): i32 {
  return rowList ? load<i32>(rowList + (<usize>i << 2)) : i;
}

/**
 * Append (row, key) to the selection buffer (capacity 2k): the entry is
 * written at the end, and the end advances only if it ranks before the
 * threshold (branch-free but for an exact tie, which compares insertion
 * sequences). A full buffer is cut to its k best (reselect). Returns the
 * new end.
 */
@inline export function appendLane(outRows: usize, outKeys: usize, seqs: usize, size: i32, k: i32, row: i32, key: f32): i32 {
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

/** Cut the buffer's `size` entries (k <= size) to its k best; the k-th becomes the threshold. Returns k. */
export function cutTo(outRows: usize, outKeys: usize, seqs: usize, size: i32, k: i32): i32 {
  selectBestRadix(outRows, outKeys, size, k, seqs);
  thresholdKey = load<f32>(outKeys + (<usize>(k - 1) << 2));
  thresholdSeq = load<u32>(seqs + (<usize>load<i32>(outRows + (<usize>(k - 1) << 2)) << 2));
  return k;
}

@inline export function appendAt(rows: usize, keys: usize, at: i32, row: i32, key: f32): void {
  store<i32>(rows + (<usize>at << 2), row);
  store<f32>(keys + (<usize>at << 2), key);
}

/** Rows per pool entry (or top-k result) a selection after the scan needs; below them the threshold in the scan rejects nearly every step anyway. */
export const KEYS_FIRST_ROWS_PER_POOL: i32 = 8;

/**
 * The rows whose keys a scan stored as the group at `g` (list positions g,
 * g + quarter, g + 2 quarter, g + 3 quarter), as the lanes of an i32x4;
 * `offsets` is i32x4(0, quarter, 2 quarter, 3 quarter).
 */
@inline export function storedRows(rowList: usize, g: i32, quarter: i32, offsets: v128): v128 {
  return rowList
    ? i32x4(rowAt(rowList, g), rowAt(rowList, g + quarter), rowAt(rowList, g + 2 * quarter), rowAt(rowList, g + 3 * quarter))
    : i32x4.add(i32x4.splat(g), offsets);
}

/**
 * Append the lanes of `values` set in the 4-bit `mask` at `at` (i32 or f32
 * entries), in lane order, by one swizzle and one 16-byte store: room for 4
 * entries at `at` is needed whatever the mask. Returns the new end.
 */
@inline export function appendPassing(to: usize, at: i32, values: v128, mask: i32): i32 {
  v128.store(to + (<usize>at << 2), i8x16.swizzle(values, v128.load(PASSING_FIRST + (<usize>mask << 4))));
  return at + <i32>popcnt<u32>(mask);
}

/**
 * The fewest keys selectStoredKeys samples; they go in the work area
 * (SAMPLE_ROWS, SAMPLE_KEYS) when they outnumber the 2k entries of the
 * selection buffer (a pool under 256), which otherwise holds the sample.
 */
const SMALL_SAMPLE: i32 = 512;

/**
 * Select the k best of `count` stored keys (count >= 8k) into
 * outRows/outKeys[0, k). A sample of max(2k, 512) keys (groups of four) gives
 * a first threshold: its rank in the sample is the pool's expected rank plus
 * a margin of 25% and four standard deviations, so that usually a little more
 * than k keys reach it. The stored keys then go through the same threshold,
 * buffer and cuts as the scan's own selection (appendLane), four at a time
 * with one compare, now outside the memory-bound scan. If fewer than k keys
 * reached the sample's threshold (no cut, fewer than k appended), the pass is
 * run again from -inf, so the pool is exact either way.
 */
export function selectStoredKeys(keyScratch: usize, seqs: usize, rowList: usize, count: i32, k: i32, outRows: usize, outKeys: usize): i32 {
  // 2k samples, but at least 512 (a small pool's threshold from 2k samples
  // let through some 8 times the pool), and at most half the keys; taken as
  // whole stored groups of four (one 16-byte load, rows from the four
  // quarters), every step-th group: a quarter of the cache lines touched.
  const wanted = max(2 * k, SMALL_SAMPLE);
  const sampleRows = wanted > 2 * k ? workAt(SAMPLE_ROWS) : outRows;
  const sampleKeys = wanted > 2 * k ? workAt(SAMPLE_KEYS) : outKeys;
  const quarter = count >> 2;
  const offsets = i32x4(0, quarter, 2 * quarter, 3 * quarter);
  const step = max(2, (quarter * 4 + wanted - 1) / wanted);
  const groups = quarter / step;
  const samples = groups << 2;
  for (let j = 0; j < groups; j++) {
    const g = j * step;
    v128.store(sampleKeys + (<usize>j << 4), v128.load(keyScratch + (<usize>g << 4)));
    v128.store(sampleRows + (<usize>j << 4), storedRows(rowList, g, quarter, offsets));
  }
  const expected = <f64>k * <f64>samples / <f64>count;
  const rank = min(samples, <i32>(expected * 1.25 + 4 * Math.sqrt(expected)) + 8);
  selectBestRadix(sampleRows, sampleKeys, samples, rank, seqs);
  // Read before the pass below overwrites a sample held in the buffer.
  let size = filterStoredKeys(keyScratch, seqs, rowList, count, k, outRows, outKeys, load<f32>(sampleKeys + (<usize>(rank - 1) << 2)));
  if (size < k) size = filterStoredKeys(keyScratch, seqs, rowList, count, k, outRows, outKeys, -Infinity);
  return keepBest(outRows, outKeys, seqs, size, k);
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
export function filterStoredKeys(keyScratch: usize, seqs: usize, rowList: usize, count: i32, k: i32, outRows: usize, outKeys: usize, from: f32): i32 {
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
      appendPassing(outRows, size, storedRows(rowList, g, quarter, offsets), mask);
      size = appendPassing(outKeys, size, keys, mask);
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

/**
 * The k best of `count` stored keys (count >= 8k) in outRows/outKeys[0, k):
 * a large k by selectStoredKeys' sample, a small one by the threshold and
 * cuts alone (a sample costs more than the few keys it would turn away).
 */
export function selectPool(keys: usize, seqs: usize, rowList: usize, count: i32, k: i32, outRows: usize, outKeys: usize): i32 {
  if (k >= KEYS_FIRST_MIN_TOPK) return selectStoredKeys(keys, seqs, rowList, count, k, outRows, outKeys);
  let size = filterStoredKeys(keys, seqs, rowList, count, k, outRows, outKeys, -Infinity);
  return keepBest(outRows, outKeys, seqs, size, k);
}
