// The stages after the nearest-neighbour scan, one pipeline for every search
// that asks for them (docs/api.md, "Search stages"):
//   1. filter: the rows the filter keeps (every row without one), the query's own left out;
//   2. decay: each kept row's score = (1 - weight) x similarity + weight x decay;
//   3. mmr (over the exact top `candidates` by that score) or groupBy (over every kept row),
//      or else the top k by that score.
// Every kept row is scored by the kernel (KernelInstance.rowKeys), so each
// stage is exact over them, not over a candidate pool. mmr and groupBy do not
// combine (400 naming both), nor does either stage with a query text (for now).
import { SPEC_LIMITS } from '../../config.js';
import { apiError, pointer } from '../../errors.js';
import { parseFilter } from '../filter.js';
import type { IndexRead } from '../index-read.js';
import type { DecayOptions, SearchGroup, SearchHit, SearchOptions, SearchOutput, SearchPlan, SearchStats } from '../types.js';
import { decayByRow, resolveDecay } from './decay.js';
import { groupPositions } from './group-by.js';
import { hitOf, noSizes } from './hits.js';
import { mmrOrder } from './mmr.js';
import { resolveSearchOptions } from './options.js';
import { bestPositions, goodnessOfKey, type ScoredRows } from './scored-rows.js';
import { answeredPlan, stepsPlan, type QuerySteps } from './search-plan.js';
import { rowsMatching, toFloat32Queries } from './vector.js';

/** Whether the search asks for any stage. */
export const hasStages = (options: SearchOptions) => options.mmr !== undefined || options.groupBy !== undefined || options.decay !== undefined;

/** The combinations the pipeline refuses, with both fields named. */
export function checkStages(options: SearchOptions): void {
  if (options.mmr !== undefined && options.groupBy !== undefined) {
    throw apiError('VALIDATION_ERROR', 'mmr and groupBy do not combine: mmr diversifies one list of hits, groupBy answers groups instead', {
      path: '/mmr',
      fields: ['mmr', 'groupBy'],
    });
  }
  if (options.queryTexts !== undefined) {
    const stage = options.mmr !== undefined ? 'mmr' : options.groupBy !== undefined ? 'groupBy' : 'decay';
    throw apiError('VALIDATION_ERROR', `${stage} applies to a search by vector or id, not with a query text (keyword or hybrid search)`, {
      path: pointer(stage),
      fields: [stage, 'queryText'],
    });
  }
}

/** The search of `queries` through the stages; `own`: per query, a row left out (a search by ids), or null. */
export function planStagedSearch(index: IndexRead, queries: ArrayLike<number>[], options: SearchOptions, own: number[] | null): SearchPlan {
  checkStages(options);
  const { topK } = resolveSearchOptions(options);
  const candidates = Math.max(options.mmr?.candidates ?? SPEC_LIMITS.defaultMmrCandidates, topK);
  const pathOf = options.pathOf ?? ((j: number) => pointer('queryVectors', j));
  const filter = options.filter ? parseFilter(options.filter) : null;
  const { config, kernel } = index;
  const size = index.rows.size;
  const stats: SearchStats = { exact: true, metric: config.metric, topK, candidatePool: options.mmr ? candidates : topK, matched: 0, scanned: 0 };
  const empty = (): SearchOutput => ({
    results: queries.map((): SearchHit[] => []),
    ...(options.groupBy ? { groups: queries.map((): SearchGroup[] => []) } : {}),
    stats,
    metadataJsonBytes: 0,
    textJsonBytes: 0,
  });
  if (!kernel || size === 0) {
    toFloat32Queries(index, queries, kernel?.dim ?? queries[0]?.length ?? 0, pathOf);
    return answeredPlan(empty());
  }
  const packed = toFloat32Queries(index, queries, kernel.dim, pathOf);
  const rowList = filter ? rowsMatching(index, filter) : null;
  stats.matched = rowList ? rowList.length : size;
  stats.scanned = stats.matched;
  const decay = options.decay ? resolveDecay(options.decay) : null;
  const decays = decay ? decayByRow(index, decay, Date.now()) : null;
  function* steps(): QuerySteps {
    const sizes = noSizes();
    const out = empty();
    const dim = kernel!.dim;
    for (let j = 0; j < queries.length; j++) {
      const scored = scoreRows(index, packed.subarray(j * dim, (j + 1) * dim), rowList, decay, decays, options.scoreThreshold, own ? own[j] : -1);
      // A score as the hit shows it: the final score with decay, else the similarity or the l2 distance.
      const scoreOf = decay || config.metric === 'cosine' ? (i: number) => scored.good[i] : (i: number) => -scored.good[i];
      const hitAt = (i: number) => hitOf(index, scored.rows[i], scoreOf(i), options, sizes);
      yield;
      const seqs = kernel!.seqs();
      if (options.groupBy) {
        const groups = groupPositions(index, scored, seqs, options.groupBy.path, options.groupBy.size ?? SPEC_LIMITS.defaultGroupSize, topK);
        out.groups![j] = groups.map(({ value, positions }): SearchGroup => ({ value, hits: Array.from(positions, hitAt) }));
      } else if (options.mmr) {
        const pool = bestPositions(scored, seqs, candidates);
        const relevance = Float64Array.from(pool, (i) => scored.good[i]);
        const order = yield* mmrOrder(
          index,
          Int32Array.from(pool, (i) => scored.rows[i]),
          relevance,
          1 - options.mmr.diversity,
          topK,
        );
        out.results[j] = Array.from(order, (c, rank): SearchHit => ({ ...hitAt(pool[c]), mmrRank: rank + 1 }));
      } else {
        out.results[j] = Array.from(bestPositions(scored, seqs, topK), hitAt);
      }
      yield;
    }
    return { ...out, ...sizes };
  }
  return stepsPlan(
    queries.length * stats.scanned * kernel.dim,
    () => null,
    async () => null,
    steps,
  );
}

/** Every kept row's goodness for one query: the kernel's keys, decayed, the row `own` and those past the threshold left out. */
function scoreRows(
  index: IndexRead,
  query: Float32Array,
  rowList: Int32Array | null,
  decay: Required<DecayOptions> | null,
  decays: Float64Array | null,
  threshold: number | undefined,
  own: number,
): ScoredRows {
  const kernel = index.kernel!;
  const size = index.rows.size;
  const cosine = index.config.metric === 'cosine';
  const keys = kernel.rowKeys(query, rowList, size, index.memoryGuard);
  const rows = rowList ?? Int32Array.from({ length: size }, (_, i) => i);
  const good = new Float64Array(rows.length);
  const goodness = goodnessOfKey(cosine);
  if (decay && decays) {
    const w = decay.weight;
    for (let i = 0; i < rows.length; i++) good[i] = (1 - w) * goodness(keys[i]) + w * decays[rows[i]];
  } else {
    for (let i = 0; i < rows.length; i++) good[i] = goodness(keys[i]);
  }
  // scoreThreshold as goodness: a final score or similarity at least it, an l2 distance at most it.
  const floor = threshold === undefined ? Number.NEGATIVE_INFINITY : decay || cosine ? threshold : -threshold;
  for (let i = 0; i < rows.length; i++) if (!(good[i] >= floor) || rows[i] === own) good[i] = Number.NEGATIVE_INFINITY;
  return { rows, good };
}
