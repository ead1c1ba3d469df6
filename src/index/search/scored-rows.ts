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

/** A goodness array given back by the last search done with it: a fresh one costs a page fault per 4 KB (400 KB for 50k rows). */
let spare: Float64Array | null = null;

/** A goodness array of `n` (its values undefined until written): the spare when large enough. */
export function takeGoodness(n: number): Float64Array {
  const taken = spare !== null && spare.length >= n ? spare : null;
  if (taken === null) return new Float64Array(n);
  spare = null;
  return taken.length === n ? taken : taken.subarray(0, n);
}

/** Give back a goodness array no longer read (kept if it is the largest seen). */
export function giveGoodness(good: Float64Array): void {
  const whole = good.byteOffset === 0 ? new Float64Array(good.buffer as ArrayBuffer) : null;
  if (whole !== null && (spare === null || whole.length > spare.length)) spare = whole;
}

/** Whether position `i` takes part (not left out). */
export const kept = (good: Float64Array, i: number) => good[i] > Number.NEGATIVE_INFINITY;

/** A kernel key as goodness: cosine similarity (clamped as a search clamps it), or minus the l2 distance. */
export function goodnessOfKey(cosine: boolean): (key: number) => number {
  return cosine ? (key) => Math.max(-1, Math.min(1, key)) : (key) => -Math.sqrt(Math.max(0, -key));
}

/** The kept positions, in order, at most `max`. */
export function keptPositions({ good }: ScoredRows, max = good.length): Int32Array {
  const out = new Int32Array(Math.min(max, good.length));
  let n = 0;
  for (let i = 0; i < good.length && n < out.length; i++) if (kept(good, i)) out[n++] = i;
  return out.subarray(0, n);
}

/** Whether position a is worse than position b: lower goodness, or equal and inserted later. */
function worse(good: Float64Array, rows: Int32Array, seqs: Uint32Array, a: number, b: number): boolean {
  return good[a] < good[b] || (good[a] === good[b] && seqs[rows[a]] > seqs[rows[b]]);
}

/** The best `m` kept positions, best first (goodness, then insertion order): a heap of m, its worst on top. */
export function bestPositions({ rows, good }: ScoredRows, seqs: Uint32Array, m: number): Int32Array {
  const heap = new Int32Array(Math.max(0, Math.min(m, rows.length)));
  if (heap.length === 0) return heap;
  let size = 0;
  // The heap's worst, kept in locals: most rows fall below it with one compare.
  let worstGood = Number.NEGATIVE_INFINITY,
    worstSeq = 0;
  for (let i = 0; i < rows.length; i++) {
    const g = good[i];
    if (!(g > Number.NEGATIVE_INFINITY)) continue;
    if (size < heap.length) {
      heap[size] = i;
      siftUp(heap, size++, good, rows, seqs);
    } else {
      if (g < worstGood || (g === worstGood && seqs[rows[i]] > worstSeq)) continue;
      heap[0] = i;
      siftDown(heap, 0, size, good, rows, seqs);
    }
    if (size === heap.length) {
      worstGood = good[heap[0]];
      worstSeq = seqs[rows[heap[0]]];
    }
  }
  // Heap sort: the worst goes to the end each time, so the array ends best first.
  for (let end = size - 1; end > 0; end--) {
    const t = heap[0];
    heap[0] = heap[end];
    heap[end] = t;
    siftDown(heap, 0, end, good, rows, seqs);
  }
  return heap.subarray(0, size);
}

function siftUp(heap: Int32Array, from: number, good: Float64Array, rows: Int32Array, seqs: Uint32Array): void {
  let at = from;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    if (!worse(good, rows, seqs, heap[at], heap[parent])) return;
    const t = heap[at];
    heap[at] = heap[parent];
    heap[parent] = t;
    at = parent;
  }
}

function siftDown(heap: Int32Array, from: number, end: number, good: Float64Array, rows: Int32Array, seqs: Uint32Array): void {
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
}
