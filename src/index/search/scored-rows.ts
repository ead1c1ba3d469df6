// A query's score for every row a stage reads (the filter's, all without
// one): the kernel scores them all (KernelInstance.rowKeys), and each score
// becomes a "goodness", larger is better, that the stages compare: cosine
// similarity, minus the l2 distance, or the decayed final score. A row left
// out (the query's own, or one past scoreThreshold) has goodness -Infinity.

/** Rows and their goodness, position by position. */
export interface ScoredRows {
  rows: Int32Array;
  good: Float64Array;
}

/** Whether position `i` takes part (not left out). */
export const kept = (good: Float64Array, i: number) => good[i] > Number.NEGATIVE_INFINITY;

/** A kernel key as goodness: cosine similarity (clamped as a search clamps it), or minus the l2 distance. */
export function goodnessOfKey(cosine: boolean): (key: number) => number {
  return cosine ? (key) => Math.max(-1, Math.min(1, key)) : (key) => -Math.sqrt(Math.max(0, -key));
}

/** Whether position a is worse than position b: lower goodness, or equal and inserted later. */
function worse(good: Float64Array, rows: Int32Array, seqs: Uint32Array, a: number, b: number): boolean {
  return good[a] < good[b] || (good[a] === good[b] && seqs[rows[a]] > seqs[rows[b]]);
}

/** The best `m` kept positions, best first (goodness, then insertion order): a heap of m, its worst on top. */
export function bestPositions({ rows, good }: ScoredRows, seqs: Uint32Array, m: number): Int32Array {
  const heap = new Int32Array(Math.max(0, Math.min(m, rows.length)));
  let size = 0;
  const down = (from: number, end: number) => {
    let at = from;
    for (;;) {
      const left = 2 * at + 1;
      if (left >= end) return;
      let child = left;
      if (left + 1 < end && worse(good, rows, seqs, heap[left + 1], heap[left])) child = left + 1;
      if (!worse(good, rows, seqs, heap[child], heap[at])) return;
      const t = heap[at];
      heap[at] = heap[child];
      heap[child] = t;
      at = child;
    }
  };
  for (let i = 0; i < rows.length && heap.length > 0; i++) {
    if (!kept(good, i)) continue;
    if (size < heap.length) {
      let at = size++;
      heap[at] = i;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (!worse(good, rows, seqs, heap[at], heap[parent])) break;
        const t = heap[at];
        heap[at] = heap[parent];
        heap[parent] = t;
        at = parent;
      }
    } else if (worse(good, rows, seqs, heap[0], i)) {
      heap[0] = i;
      down(0, size);
    }
  }
  // Heap sort: the worst goes to the end each time, so the array ends best first.
  for (let end = size - 1; end > 0; end--) {
    const t = heap[0];
    heap[0] = heap[end];
    heap[end] = t;
    down(0, end);
  }
  return heap.subarray(0, size);
}
