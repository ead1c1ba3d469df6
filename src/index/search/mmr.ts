// Maximal marginal relevance: from the exact top candidates (best first),
// pick greedily the one with the best lambda x relevance - (1 - lambda) x
// its greatest similarity to a hit already picked, the first pick being the
// best match. Similarity between stored vectors is the session metric's
// (cosine, or minus the l2 distance), scored by the kernel: one pass over the
// candidates per pick. Ties go to the earlier candidate (better relevance,
// then insertion order), so diversity 0 is the plain order.
import type { IndexRead } from '../index-read.js';
import { goodnessOfKey } from './scored-rows.js';

/** The candidates' indices in the order MMR picks them (at most `k`); a pause may come after each pick. */
export function* mmrOrder(index: IndexRead, rows: Int32Array, relevance: Float64Array, lambda: number, k: number): Generator<void, Int32Array, void> {
  const n = rows.length;
  const picks = new Int32Array(Math.min(k, n));
  if (picks.length === 0) return picks;
  const kernel = index.kernel!;
  const similarity = goodnessOfKey(index.config.metric === 'cosine');
  const nearest = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  const picked = new Uint8Array(n);
  picked[0] = 1; // the best match first
  for (let p = 1; p < picks.length; p++) {
    const keys = kernel.rowKeys(kernel.readRow(rows[picks[p - 1]]), rows, index.rows.size, index.memoryGuard);
    let best = -1,
      bestScore = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      if (picked[i]) continue;
      const s = similarity(keys[i]);
      if (s > nearest[i]) nearest[i] = s;
      const score = lambda * relevance[i] - (1 - lambda) * nearest[i];
      if (best < 0 || score > bestScore) {
        best = i;
        bestScore = score;
      }
    }
    picks[p] = best;
    picked[best] = 1;
    yield;
  }
  return picks;
}
