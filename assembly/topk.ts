// Bounded top-k selection: a binary heap of at most k (row, key) pairs whose
// root is the worst kept entry. A candidate that is not better than the root
// is rejected with one comparison, so after the first few thousand rows almost
// every row costs a single compare; only k pairs ever leave the kernel.

/** a is worse than b: lower key, or equal key and later insertion. */
@inline function worse(keyA: f32, rowA: i32, keyB: f32, rowB: i32, seqs: usize): bool {
  if (keyA != keyB) return keyA < keyB;
  return load<u32>(seqs + (<usize>rowA << 2)) > load<u32>(seqs + (<usize>rowB << 2));
}

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
