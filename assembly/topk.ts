// Bounded top-k selection: a binary heap of at most k (row, key) pairs whose
// root is the worst kept entry. A candidate that is not better than the root
// is rejected with one comparison, so after the first few thousand rows almost
// every row costs a single compare; only k pairs ever leave the kernel.

/** a is worse than b: lower key, or equal key and later insertion. */
@inline function worse(keyA: f32, rowA: i32, keyB: f32, rowB: i32, seqs: usize): bool {
  if (keyA != keyB) return keyA < keyB;
  return load<u32>(seqs + (<usize>rowA << 2)) > load<u32>(seqs + (<usize>rowB << 2));
}

import { BUCKETS, workAt } from "./work-area";

@inline function rowOf(rows: usize, i: i32): i32 { return load<i32>(rows + (<usize>i << 2)); }
@inline function keyOf(keys: usize, i: i32): f32 { return load<f32>(keys + (<usize>i << 2)); }
@inline function put(rows: usize, keys: usize, i: i32, row: i32, key: f32): void {
  store<i32>(rows + (<usize>i << 2), row);
  store<f32>(keys + (<usize>i << 2), key);
}

/** Move the entry (row, key) down from slot i until the heap holds in [0, size). */
@inline function siftDown(rows: usize, keys: usize, size: i32, i: i32, row: i32, key: f32, seqs: usize): void {
  while (true) {
    let child = 2 * i + 1;
    if (child >= size) break;
    const right = child + 1;
    // The worse child, without a branch: which one it is is a coin flip.
    if (right < size) child += <i32>worse(keyOf(keys, right), rowOf(rows, right), keyOf(keys, child), rowOf(rows, child), seqs);
    const childKey = keyOf(keys, child), childRow = rowOf(rows, child);
    if (!worse(childKey, childRow, key, row, seqs)) break;
    put(rows, keys, i, childRow, childKey);
    i = child;
  }
  put(rows, keys, i, row, key);
}

/** Offer one candidate to a heap of `size` entries (capacity k); returns the new size. */
@inline export function heapOffer(rows: usize, keys: usize, size: i32, k: i32, row: i32, key: f32, seqs: usize): i32 {
  if (size < k) {
    // Sift up from the end.
    let i = size;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const parentKey = keyOf(keys, parent), parentRow = rowOf(rows, parent);
      if (!worse(key, row, parentKey, parentRow, seqs)) break;
      put(rows, keys, i, parentRow, parentKey);
      i = parent;
    }
    put(rows, keys, i, row, key);
    return size + 1;
  }
  // Full: only a candidate better than the worst kept entry gets in.
  if (!worse(keyOf(keys, 0), rowOf(rows, 0), key, row, seqs)) return size;
  siftDown(rows, keys, size, 0, row, key, seqs);
  return size;
}

/** Arrange entries [0, size) as the heap above (root = the worst). */
export function heapify(rows: usize, keys: usize, size: i32, seqs: usize): void {
  for (let i = (size >> 1) - 1; i >= 0; i--) siftDown(rows, keys, size, i, rowOf(rows, i), keyOf(keys, i), seqs);
}

/** Heap-sort in place so that slot 0 holds the best entry. */
export function heapSortBestFirst(rows: usize, keys: usize, size: i32, seqs: usize): void {
  // Repeatedly move the worst (root) to the end of the shrinking heap.
  for (let end = size - 1; end > 0; end--) {
    const rootRow = rowOf(rows, 0), rootKey = keyOf(keys, 0);
    const lastRow = rowOf(rows, end), lastKey = keyOf(keys, end);
    put(rows, keys, end, rootRow, rootKey);
    siftDown(rows, keys, end, 0, lastRow, lastKey, seqs);
  }
}

// Pool selection for large k (the int8 first stage keeps up to 2048
// candidates): candidates better than a threshold are appended to a buffer
// of 2k entries; when it fills, a quickselect moves the k best to the front
// and the k-th best becomes the new threshold. Each row costs one compare
// against the threshold, and the buffer is re-selected only as often as 2k
// rows beat it, instead of a log2(k)-deep heap sift for each of them.

@inline function swapEntries(rows: usize, keys: usize, i: i32, j: i32): void {
  const ri = rowOf(rows, i), ki = keyOf(keys, i);
  put(rows, keys, i, rowOf(rows, j), keyOf(keys, j));
  put(rows, keys, j, ri, ki);
}

/** a ranks before b: higher key, or equal key and earlier insertion. */
@inline export function better(keyA: f32, rowA: i32, keyB: f32, rowB: i32, seqs: usize): bool {
  return worse(keyB, rowB, keyA, rowA, seqs);
}

/** Reorder entries [0, n) so that [0, k) holds the k best, the k-th best at k - 1 (k <= n). */
export function selectBest(rows: usize, keys: usize, n: i32, k: i32, seqs: usize): void {
  let lo = 0, hi = n - 1;
  const target = k - 1;
  while (lo < hi) {
    // Median of three as the pivot, moved to hi.
    const mid = lo + ((hi - lo) >> 1);
    if (better(keyOf(keys, mid), rowOf(rows, mid), keyOf(keys, lo), rowOf(rows, lo), seqs)) swapEntries(rows, keys, mid, lo);
    if (better(keyOf(keys, hi), rowOf(rows, hi), keyOf(keys, lo), rowOf(rows, lo), seqs)) swapEntries(rows, keys, hi, lo);
    if (better(keyOf(keys, mid), rowOf(rows, mid), keyOf(keys, hi), rowOf(rows, hi), seqs)) swapEntries(rows, keys, mid, hi);
    const pivotKey = keyOf(keys, hi), pivotSeq = load<u32>(seqs + (<usize>rowOf(rows, hi) << 2));
    // Branch-free Lomuto partition: [lo, store) ranks before the pivot and
    // [store, i) does not; entry i is swapped with entry store every time and
    // `store` advances by the comparison, so a coin-flip comparison costs no
    // misprediction. Only an exact key tie (rare) takes a branch, to the seqs.
    let store = lo;
    for (let i = lo; i < hi; i++) {
      const key = keyOf(keys, i), row = rowOf(rows, i);
      let before = key > pivotKey;
      if (key == pivotKey) before = load<u32>(seqs + (<usize>row << 2)) < pivotSeq;
      put(rows, keys, i, rowOf(rows, store), keyOf(keys, store));
      put(rows, keys, store, row, key);
      store += <i32>before;
    }
    swapEntries(rows, keys, store, hi);
    if (store == target) return;
    if (store < target) lo = store + 1;
    else hi = store - 1;
  }
}

// Radix selection for the selection buffers: one pass finds the keys' range,
// one histograms the entries by the top bits of their order-preserving
// integer image within that range, a walk down from the best bucket finds
// the bucket holding the k-th best, one compaction keeps the entries of that
// bucket and the better ones, one branch-free partition puts the better ones
// first, and only the boundary bucket (usually a few entries) goes through
// selectBest with its exact tie-break. About 3.5 light passes over the
// buffer against the quickselect's ~3 passes that swap every entry.

// The histogram's counters (2^10 at most) are in the work area (BUCKETS).
const MAX_BUCKET_BITS: u32 = 10;
/** (row, key) pairs the counters' memory holds once the walk is done. */
const SIDE_ENTRIES = 512;

/**
 * Order-preserving u32 image of a key: a larger key gives a larger image,
 * equal keys the same one (-0 is made +0 first: the comparisons treat them
 * as equal, and so must the buckets). NaN never enters a buffer.
 */
@inline function ordered(key: f32): u32 {
  const bits = reinterpret<u32>(key + <f32>0);
  return bits ^ (<u32>(<i32>bits >> 31) | 0x80000000);
}

@inline function bucketOf(key: f32, low: u32, shift: u32): i32 {
  return <i32>((ordered(key) - low) >> shift);
}

/**
 * Reorder entries [0, n) so that [0, k) holds the k best and the k-th best
 * sits at k - 1 (1 <= k <= n), as selectBest does; the same k entries,
 * in another order within [0, k - 1). Entries at [k, n) are left undefined.
 */
export function selectBestRadix(rows: usize, keys: usize, n: i32, k: i32, seqs: usize): void {
  if (n < 64) {
    selectBest(rows, keys, n, k, seqs);
    return;
  }
  // The images' range, four lanes at a time (the n % 4 tail by the scalar path).
  let lowV = i32x4.splat(-1), highV = i32x4.splat(0);
  const whole = n & ~3;
  for (let i = 0; i < whole; i += 4) {
    const bits = f32x4.add(v128.load(keys + (<usize>i << 2)), f32x4.splat(0));
    const image = v128.xor(bits, v128.or(i32x4.shr_s(bits, 31), i32x4.splat(0x80000000)));
    lowV = i32x4.min_u(lowV, image);
    highV = i32x4.max_u(highV, image);
  }
  let low = min(min(<u32>i32x4.extract_lane(lowV, 0), <u32>i32x4.extract_lane(lowV, 1)), min(<u32>i32x4.extract_lane(lowV, 2), <u32>i32x4.extract_lane(lowV, 3)));
  let high = max(max(<u32>i32x4.extract_lane(highV, 0), <u32>i32x4.extract_lane(highV, 1)), max(<u32>i32x4.extract_lane(highV, 2), <u32>i32x4.extract_lane(highV, 3)));
  for (let i = whole; i < n; i++) {
    const image = ordered(keyOf(keys, i));
    low = min(low, image);
    high = max(high, image);
  }
  // About two entries per bucket, 2^10 buckets at most; the shift maps the range onto them.
  const bucketBits: u32 = min<u32>(MAX_BUCKET_BITS, <u32>31 - clz<u32>(<u32>n));
  const rangeBits: u32 = <u32>32 - clz<u32>(high - low);
  const shift: u32 = rangeBits > bucketBits ? rangeBits - bucketBits : 0;
  const buckets = 1 << bucketBits;
  const counters = workAt(BUCKETS);
  memory.fill(counters, 0, <usize>buckets << 2);
  for (let i = 0; i < n; i++) {
    const at = counters + (<usize>bucketOf(keyOf(keys, i), low, shift) << 2);
    store<u32>(at, load<u32>(at) + 1);
  }
  // The bucket of the k-th best: `above` entries are in better buckets, fewer than k.
  let boundary = (<i32>((high - low) >> shift)), above = 0;
  while (true) {
    const count = load<i32>(counters + (<usize>boundary << 2));
    if (above + count >= k) break;
    above += count;
    boundary--;
  }
  const inBoundary = load<i32>(counters + (<usize>boundary << 2));
  let kept = 0;
  if (inBoundary <= SIDE_ENTRIES) {
    // One pass: the better entries to the front, in place (the write index
    // never passes the read index), the boundary bucket's aside in the
    // counters' memory (no longer needed), then back after them.
    let side = 0;
    for (let i = 0; i < n; i++) {
      const key = keyOf(keys, i), row = rowOf(rows, i);
      const bucket = bucketOf(key, low, shift);
      put(rows, keys, kept, row, key);
      kept += <i32>(bucket > boundary);
      store<i32>(counters + (<usize>side << 3), row);
      store<f32>(counters + (<usize>side << 3), key, 4);
      side += <i32>(bucket == boundary);
    }
    for (let j = 0; j < side; j++) {
      put(rows, keys, kept + j, load<i32>(counters + (<usize>j << 3)), load<f32>(counters + (<usize>j << 3), 4));
    }
    kept += side;
  } else {
    // Keep the boundary bucket and the better ones at the front, in place,
    // dropping the rest; then the better ones first (a branch-free partition).
    for (let i = 0; i < n; i++) {
      const key = keyOf(keys, i), row = rowOf(rows, i);
      put(rows, keys, kept, row, key);
      kept += <i32>(bucketOf(key, low, shift) >= boundary);
    }
    let store = 0;
    for (let i = 0; i < kept; i++) {
      const key = keyOf(keys, i), row = rowOf(rows, i);
      put(rows, keys, i, rowOf(rows, store), keyOf(keys, store));
      put(rows, keys, store, row, key);
      store += <i32>(bucketOf(key, low, shift) > boundary);
    }
  }
  // The exact select (ties by insertion sequence) inside the boundary bucket only.
  selectBest(rows + (<usize>above << 2), keys + (<usize>above << 2), kept - above, k - above, seqs);
}
