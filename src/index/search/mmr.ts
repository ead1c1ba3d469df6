// Maximal marginal relevance: from the exact top candidates (best first),
// pick greedily the one with the best lambda x relevance - (1 - lambda) x
// its greatest similarity to a hit already picked, the first pick being the
// best match. Similarity between stored vectors is the session metric's
// (cosine, or minus the l2 distance), scored by the kernel: one pass over the
// candidates per pick, gathered into one block first (KernelInstance.
// withGatheredRows: the kernel copies them, gatherRows; scattered rows were
// read about twice as slowly). Ties go to the earlier candidate (better
// relevance, then insertion order), so diversity 0 is the plain order.
//
// Lazy greedy (a candidate's last score bounds it, as picks only lower it)
// was tried: on real-valued embeddings the candidates' relevances are too
// close for the bound to skip many, and the float64 dot products it then
// needs in JS cost more than the kernel's passes.
import type { IndexRead } from '../index-read.js';
import { goodnessOfKey } from './scored-rows.js';

/** Picks made per gathering of the candidates (the event loop may get a turn between). */
const PICKS_PER_PASS = 16;

/** The candidates' indices in the order MMR picks them (at most `k`); a pause may come after every PICKS_PER_PASS picks. */
export function* mmrOrder(index: IndexRead, rows: Int32Array, relevance: Float64Array, lambda: number, k: number): Generator<void, Int32Array, void> {
  const n = rows.length;
  const picks = new Int32Array(Math.min(k, n));
  if (picks.length <= 1) return picks; // the best match first
  const kernel = index.kernel!;
  const similarity = goodnessOfKey(index.config.metric === 'cosine');
  const nearest = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  const picked = new Uint8Array(n);
  picked[0] = 1;
  // The candidates' vectors gathered into one block, scanned once per pick.
  for (let from = 1; from < picks.length; from += PICKS_PER_PASS) {
    const end = Math.min(picks.length, from + PICKS_PER_PASS);
    kernel.withGatheredRows(rows, index.rows.size, index.memoryGuard, (score) => {
      for (let p = from; p < end; p++) {
        const keys = score(kernel.readRow(rows[picks[p - 1]]));
        let best = -1,
          bestScore = Number.NEGATIVE_INFINITY;
        for (let i = 0; i < n; i++) {
          if (picked[i]) continue;
          const s = similarity(keys[i]);
          if (s > nearest[i]) nearest[i] = s;
          const marginal = lambda * relevance[i] - (1 - lambda) * nearest[i];
          if (best < 0 || marginal > bestScore) {
            best = i;
            bestScore = marginal;
          }
        }
        picks[p] = best;
        picked[best] = 1;
      }
    });
    yield;
  }
  return picks;
}
