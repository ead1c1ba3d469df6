// A search's best rows out of the rows it touched: a heap of the best `k`
// so far with its worst on top, so most rows cost one comparison.

/** The best `k` of `touched[0, matched)` by `scores` (at or above `threshold`), best first; ties by the seq of the write (`seqOf[docOfRow[row]]`), earlier first. */
export function topRows(
  scores: Float64Array,
  touched: Int32Array,
  matched: number,
  k: number,
  threshold: number,
  seqOf: Float64Array,
  docOfRow: Int32Array,
): { rows: Int32Array; scores: Float64Array } {
  // A heap of the best so far, its worst on top: worse = lower score, or the same score written later.
  const heap = new Int32Array(Math.min(k, matched));
  let size = 0;
  const worse = (a: number, b: number) => scores[a] < scores[b] || (scores[a] === scores[b] && seqOf[docOfRow[a]] > seqOf[docOfRow[b]]);
  const siftDown = () => {
    for (let i = 0; ; ) {
      const l = 2 * i + 1,
        r = l + 1;
      let top = i;
      if (l < size && worse(heap[l], heap[top])) top = l;
      if (r < size && worse(heap[r], heap[top])) top = r;
      if (top === i) return;
      const held = heap[i];
      heap[i] = heap[top];
      heap[top] = held;
      i = top;
    }
  };
  for (let t = 0; t < matched; t++) {
    const row = touched[t],
      score = scores[row];
    if (!(score >= threshold)) continue;
    if (size < heap.length) {
      let i = size++;
      heap[i] = row;
      while (i > 0) {
        const parent = (i - 1) >>> 1;
        if (!worse(heap[i], heap[parent])) break;
        const held = heap[i];
        heap[i] = heap[parent];
        heap[parent] = held;
        i = parent;
      }
      continue;
    }
    // Most rows lose to the worst kept at once: compare the scores before anything else.
    const least = scores[heap[0]];
    if (score < least || (score === least && !worse(heap[0], row))) continue;
    heap[0] = row;
    siftDown();
  }
  const rows = new Int32Array(size),
    out = new Float64Array(size);
  for (let i = size - 1; i >= 0; i--) {
    rows[i] = heap[0];
    out[i] = scores[heap[0]];
    heap[0] = heap[--size];
    siftDown();
  }
  return { rows, scores: out };
}
