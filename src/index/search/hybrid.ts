// Hybrid search: per query, the vector arm's and the text arm's best
// candidatePool (at least topK), fused; with decay, the fused score decayed
// over every kept row; scoreThreshold applies to the (decayed) fused score.
import { SPEC_LIMITS } from '../../config.js';
import { apiError } from '../../errors.js';
import { parseFilter } from '../filter.js';
import type { IndexRead } from '../index-read.js';
import { fuse, type ArmHit, type Fusion } from '../text/fusion.js';
import type { SearchHit, SearchOptions, SearchOutput, SearchPlan, SearchStats } from '../types.js';
import { decayByRow, decayFused, resolveDecay } from './decay.js';
import { hitOf, noSizes } from './hits.js';
import { filterBitmap, queryTerms, textArm } from './keyword.js';
import { resolveSearchOptions } from './options.js';
import { stepsPlan, type QuerySteps } from './search-plan.js';
import { planVectorSearch } from './vector.js';

const DEFAULT_FUSION: Fusion = { method: 'rrf', k: SPEC_LIMITS.defaultRrfK };

/** One text per query vector. `own`: per query, a row left out of both arms (a query by id). */
export function planHybridSearch(index: IndexRead, queries: ArrayLike<number>[], texts: string[], options: SearchOptions, own: number[] | null): SearchPlan {
  if (texts.length !== queries.length) {
    throw apiError('VALIDATION_ERROR', `a hybrid search takes one query text per query vector: ${queries.length} vectors, ${texts.length} texts`, {
      path: '/queryTexts',
      expected: queries.length,
      actual: texts.length,
    });
  }
  const { topK, candidatePool } = resolveSearchOptions(options);
  const fusion = options.fusion ?? DEFAULT_FUSION;
  const filter = options.filter ? parseFilter(options.filter) : null;
  const terms = queryTerms(index, texts, options);
  // decay applies to the fused score, over every kept row (decay.ts).
  const decay = options.decay ? resolveDecay(options.decay) : null;
  const decays = decay ? decayByRow(index, decay, Date.now()) : null;
  // The vector arm: the candidatePool best (one more to drop a query's own vector), unthresholded.
  const extra = own ? 1 : 0;
  const vectorPlan = planVectorSearch(index, queries, {
    topK: candidatePool + extra,
    candidatePool: candidatePool + extra,
    filter: options.filter,
    pathOf: options.pathOf,
  });
  function* finish(vectorOut: SearchOutput): QuerySteps {
    const bitmap = filterBitmap(index, filter);
    const stats: SearchStats = { ...vectorOut.stats, topK, candidatePool, textMatched: 0 };
    const sizes = noSizes();
    const lowerIsBetter = index.config.metric === 'l2';
    const seqOf = (row: number) => index.rows.order.seqOf(index.rows.idAt(row))!;
    const threshold = options.scoreThreshold;
    const results: SearchHit[][] = [];
    for (let j = 0; j < terms.length; j++) {
      const exclude = own ? own[j] : -1;
      const vectorHits: ArmHit[] = [];
      for (const { id, score } of vectorOut.results[j]) {
        const row = index.rows.rowOf(id)!;
        if (row !== exclude && vectorHits.length < candidatePool) vectorHits.push({ row, score });
      }
      const text = yield* textArm(index, terms[j], candidatePool, bitmap, undefined, exclude);
      stats.textMatched! += text.matched;
      const list: SearchHit[] = [];
      let fusedHits = fuse(vectorHits, text.hits, fusion, lowerIsBetter, seqOf);
      if (decay) {
        const keep = (row: number) => row !== exclude && (bitmap === null || bitmap.has(row));
        const unranked = (row: number) => ({ row, score: 0, vectorScore: null, vectorRank: null, textScore: null, textRank: null });
        fusedHits = decayFused(fusedHits, decays!, decay.weight, keep, topK, threshold ?? Number.NEGATIVE_INFINITY, seqOf, unranked);
      }
      for (const fused of fusedHits) {
        if (list.length === topK || (threshold !== undefined && !(fused.score >= threshold))) break;
        const hit = hitOf(index, fused.row, fused.score, options, sizes);
        hit.vectorScore = fused.vectorScore;
        hit.vectorRank = fused.vectorRank;
        hit.textScore = fused.textScore;
        hit.textRank = fused.textRank;
        list.push(hit);
      }
      results.push(list);
      yield;
    }
    return { results, stats, ...sizes };
  }
  return stepsPlan(
    vectorPlan.work,
    () => vectorPlan.run(),
    (executor) => vectorPlan.runOn(executor),
    finish,
  );
}
