// The stages after the nearest-neighbour scan, one pipeline for every search
// that asks for them (docs/api.md, "Search stages"):
//   1. filter: the rows the filter keeps (every row without one), the query's own left out;
//   2. decay: each kept row's score = (1 - weight) x similarity + weight x decay;
//   3. mmr (over the exact top `candidates` by that score) or groupBy (over every kept row),
//      or else the top k by that score.
// The kernel scores every kept row (KernelInstance.rowKeys, in steps of
// ROWS_PER_STEP rows; MMR alone takes its candidates from a search's exact top
// k), so each stage is exact over them, not over a candidate pool. mmr and groupBy do not
// combine (400 naming both), nor does either with a query text; decay on a
// hybrid search decays the fused score (hybrid.ts), and is refused on a keyword one.
import { SPEC_LIMITS } from '../../config.js';
import { apiError, pointer } from '../../errors.js';
import { parseFilter } from '../filter.js';
import type { SearchHits, SearchRequest } from '../../kernel/search-request.js';
import type { IndexRead } from '../index-read.js';
import type { DecayOptions, SearchGroup, SearchHit, SearchOptions, SearchOutput, SearchPlan, SearchStats } from '../types.js';
import { decayByRow, resolveDecay } from './decay.js';
import { groupPositions } from './group-by.js';
import { hitOf, noSizes } from './hits.js';
import { mmrOrder } from './mmr.js';
import { resolveSearchOptions } from './options.js';
import { bestPositions, giveGoodness, keptPositions, takeGoodness, type ScoredRows } from './scored-rows.js';
import { answeredPlan, stepsPlan, type QuerySteps } from './search-plan.js';
import { rowsMatching, toFloat32Queries } from './vector.js';

/** The combinations the pipeline refuses, with both fields named. */
export function checkStages(options: SearchOptions): void {
  if (options.mmr !== undefined && options.groupBy !== undefined) {
    throw apiError('VALIDATION_ERROR', 'mmr and groupBy do not combine: mmr diversifies one list of hits, groupBy answers groups instead', {
      path: pointer('mmr'),
      fields: ['mmr', 'groupBy'],
    });
  }
  if (options.queryTexts !== undefined && (options.mmr !== undefined || options.groupBy !== undefined)) {
    const stage = options.mmr !== undefined ? 'mmr' : 'groupBy';
    throw apiError('VALIDATION_ERROR', `${stage} applies to a search by vector or id, not with a query text (keyword or hybrid search)`, {
      path: pointer(stage),
      fields: [stage, 'queryText'],
    });
  }
}

/** decay on a keyword search (query texts alone): refused, naming both. */
export function decayWithoutVectors() {
  return apiError('VALIDATION_ERROR', 'decay applies to a search by vector or id, or a hybrid one (it decays the fused score), not to a keyword search alone', {
    path: pointer('decay'),
    fields: ['decay', 'queryText'],
  });
}

/** Whether the stages run apart from the hybrid search (which applies decay itself). */
export const stagesApart = (options: SearchOptions) =>
  options.mmr !== undefined || options.groupBy !== undefined || (options.decay !== undefined && options.queryTexts === undefined);

/** The search of `queries` through the stages; `own`: per query, a row left out (a search by ids), or null. */
export function planStagedSearch(index: IndexRead, queries: ArrayLike<number>[], options: SearchOptions, own: number[] | null): SearchPlan {
  checkStages(options);
  const { topK, candidatePool } = resolveSearchOptions(options);
  const candidates = Math.max(options.mmr?.candidates ?? SPEC_LIMITS.defaultMmrCandidates, topK);
  const pathOf = options.pathOf ?? ((j: number) => pointer('queryVectors', j));
  const filter = options.filter ? parseFilter(options.filter) : null;
  const { config, kernel } = index;
  const size = index.rows.size;
  const stats: SearchStats = { exact: true, metric: config.metric, topK, candidatePool: options.mmr ? candidates : candidatePool, matched: 0, scanned: 0 };
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
  // The filter's rows that are live now (per-record TTL); null: every row.
  const rowList = rowsMatching(index, filter);
  stats.matched = rowList ? rowList.length : size;
  stats.scanned = stats.matched;
  const decay = options.decay ? resolveDecay(options.decay) : null;
  const decays = decay ? decayByRow(index, decay, Date.now()) : null;
  const rows = rowList ?? iota(size);
  // MMR alone takes its candidates from the kernel's top k (a search's scan: on the kernel pool when
  // large); the other stages score every kept row, in chunks with a pause after each.
  const candidateScan = options.mmr && !decay;
  const request: SearchRequest = { queries: packed, queryCount: queries.length, k: candidates + (own ? 1 : 0), count: size, rowList, guard: index.memoryGuard };
  function* steps(top: SearchHits | null): QuerySteps {
    const sizes = noSizes();
    const out = empty();
    const dim = kernel!.dim;
    for (let j = 0; j < queries.length; j++) {
      const query = packed.subarray(j * dim, (j + 1) * dim);
      const ownRow = own ? own[j] : -1;
      const scored = top
        ? topRows(index, top, j, options.scoreThreshold, ownRow)
        : yield* scoreRows(index, query, rows, rowList === null, decay, decays, options.scoreThreshold, ownRow);
      // A score as the hit shows it: the final score with decay, else the similarity or the l2 distance.
      const scoreOf = decay || config.metric === 'cosine' ? (i: number) => scored.good[i] : (i: number) => -scored.good[i];
      const hitAt = (i: number) => hitOf(index, scored.rows[i], scoreOf(i), options, sizes);
      yield;
      const seqs = kernel!.seqs();
      if (options.groupBy) {
        const groups = groupPositions(index, scored, seqs, options.groupBy.path, options.groupBy.size ?? SPEC_LIMITS.defaultGroupSize, topK);
        out.groups![j] = groups.map(({ value, positions }): SearchGroup => ({ value, hits: Array.from(positions, hitAt) }));
      } else if (options.mmr) {
        const pool = decay ? bestPositions(scored, seqs, candidates) : keptPositions(scored, candidates);
        const relevance = new Float64Array(pool.length);
        const poolRows = new Int32Array(pool.length);
        for (let c = 0; c < pool.length; c++) {
          relevance[c] = scored.good[pool[c]];
          poolRows[c] = scored.rows[pool[c]];
        }
        const order = yield* mmrOrder(index, poolRows, relevance, 1 - options.mmr.diversity, topK);
        out.results[j] = Array.from(order, (c, rank): SearchHit => ({ ...hitAt(pool[c]), mmrRank: rank + 1 }));
      } else {
        out.results[j] = Array.from(bestPositions(scored, seqs, topK), hitAt);
      }
      giveGoodness(scored.good);
      yield;
    }
    return { ...out, ...sizes };
  }
  return stepsPlan(
    queries.length * stats.scanned * kernel.dim,
    () => (candidateScan ? kernel.search(request) : null),
    async (executor) => (candidateScan ? kernel.search(request, executor) : null),
    steps,
  );
}

/** Query j's rows of the kernel's top k (exact float32, best first), the row `own` and those past the threshold left out. */
function topRows(index: IndexRead, top: SearchHits, j: number, threshold: number | undefined, own: number): ScoredRows {
  const cosine = index.config.metric === 'cosine';
  const from = j * top.perQuery;
  const rows = top.rows.subarray(from, from + top.perQuery);
  const good = new Float64Array(rows.length);
  for (let i = 0; i < rows.length; i++) good[i] = cosine ? top.scores[from + i] : -top.scores[from + i];
  markLeftOut(rows, good, thresholdAsGoodness(threshold, cosine, false), own);
  return { rows, good };
}

/** scoreThreshold as goodness: a final score or similarity at least it, an l2 distance at most it. */
function thresholdAsGoodness(threshold: number | undefined, cosine: boolean, decayed: boolean): number {
  return threshold === undefined ? Number.NEGATIVE_INFINITY : decayed || cosine ? threshold : -threshold;
}

/** Leave out (goodness -Infinity) the row `own` and the rows below `floor`. */
function markLeftOut(rows: Int32Array, good: Float64Array, floor: number, own: number): void {
  for (let i = 0; i < rows.length; i++) if (!(good[i] >= floor) || rows[i] === own) good[i] = Number.NEGATIVE_INFINITY;
}

/** Rows the kernel scores per step of scoreRows (about 10 ms at 384 floats on a slow core): a pause may come between. */
const ROWS_PER_STEP = 65_536;

/** Every kept row's goodness for one query: the kernel's keys, decayed, the row `own` and those past the threshold left out; a chunk of rows a step. */
function* scoreRows(
  index: IndexRead,
  query: Float32Array,
  rows: Int32Array,
  /** rows is every row in order (no filter): the kernel then scans ranges without a row list. */
  all: boolean,
  decay: Required<DecayOptions> | null,
  decays: Float64Array | null,
  threshold: number | undefined,
  own: number,
): Generator<void, ScoredRows, void> {
  const cosine = index.config.metric === 'cosine';
  const good = takeGoodness(rows.length);
  const floor = thresholdAsGoodness(threshold, cosine, decay !== null);
  const w = decay ? decay.weight : 0;
  const left = Number.NEGATIVE_INFINITY;
  for (let from = 0; from < rows.length; from += ROWS_PER_STEP) {
    const to = Math.min(rows.length, from + ROWS_PER_STEP);
    const read = (keys: Float32Array) => {
      // goodnessOfKey written out: this loop runs over every kept row.
      for (let i = from; i < to; i++) {
        const key = keys[i - from];
        let g = cosine ? Math.max(-1, Math.min(1, key)) : -Math.sqrt(Math.max(0, -key));
        if (decays !== null) g = (1 - w) * g + w * decays[rows[i]];
        good[i] = g >= floor && rows[i] !== own ? g : left;
      }
    };
    if (all) index.kernel!.rowKeys(query, null, to, index.memoryGuard, read, from);
    else index.kernel!.rowKeys(query, rows.subarray(from, to), index.rows.size, index.memoryGuard, read);
    if (to < rows.length) yield;
  }
  return { rows, good };
}

/** 0, 1, ..., n - 1 (read-only: the longest made so far, shared). */
let identity = new Int32Array(0);
function iota(n: number): Int32Array {
  if (identity.length < n) {
    identity = new Int32Array(n);
    for (let i = 0; i < identity.length; i++) identity[i] = i;
  }
  return identity.subarray(0, n);
}
