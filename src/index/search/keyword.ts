// Keyword search: the BM25 best of each query text, filtered first; and the
// text arm a hybrid search fuses with its vector arm.
import { SPEC_LIMITS } from '../../config.js';
import { apiError, pointer } from '../../errors.js';
import type { RowBitmap } from '../bitmap.js';
import { parseFilter, type FilterNode } from '../filter.js';
import type { IndexRead } from '../index-read.js';
import { liveMatching } from '../live-rows.js';
import { analyzerFor } from '../config-lock.js';
import { distinctTerms } from '../text/analyzer.js';
import type { ArmHit } from '../text/fusion.js';
import type { SearchHit, SearchOptions, SearchPlan, SearchStats } from '../types.js';
import { hitOf, noSizes } from './hits.js';
import { resolveSearchOptions } from './options.js';
import { stepsPlan, type QuerySteps } from './search-plan.js';

const BM25 = { k1: SPEC_LIMITS.bm25K1, b: SPEC_LIMITS.bm25B };

/** The BM25 topK of each text, filtered first (checked now, run a query at a time). */
export function planKeywordSearch(index: IndexRead, texts: string[], options: SearchOptions): SearchPlan {
  const { topK, candidatePool } = resolveSearchOptions(options);
  const filter = options.filter ? parseFilter(options.filter) : null;
  const terms = queryTerms(index, texts, options);
  const bitmap = filterBitmap(index, filter);
  const stats: SearchStats = {
    exact: true,
    metric: index.config.metric,
    topK,
    candidatePool,
    matched: bitmap ? bitmap.count() : index.rows.size,
    scanned: 0,
    textMatched: 0,
  };
  function* steps(): QuerySteps {
    const sizes = noSizes();
    const results: SearchHit[][] = [];
    for (const queryTerms of terms) {
      const { hits, matched } = yield* textArm(index, queryTerms, topK, bitmap, options.scoreThreshold, -1);
      stats.textMatched! += matched;
      results.push(hits.map(({ row, score }) => hitOf(index, row, score, options, sizes)));
      yield;
    }
    return { results, stats, ...sizes };
  }
  return stepsPlan(
    0,
    () => null,
    async () => null,
    steps,
  );
}

/** Each query text's distinct terms under the session's analyzer (standard before any text); QUERY_TEXT_EMPTY for one without. */
export function queryTerms(index: IndexRead, texts: string[], options: SearchOptions): string[][] {
  const pathOf = options.textPathOf ?? ((j: number) => pointer('queryTexts', j));
  const analyzer = analyzerFor(index.config);
  const ahead = options.queryTerms?.analyzer === analyzer ? options.queryTerms.terms : null;
  return texts.map((text, j) => {
    const terms = ahead?.[j] ?? distinctTerms(analyzer, text);
    if (terms.length === 0) {
      throw apiError('QUERY_TEXT_EMPTY', `the query text has no terms under the ${analyzer} analyzer (it is empty, punctuation, or only stop words)`, {
        path: pathOf(j),
        analyzer,
      });
    }
    return terms;
  });
}

/** The filter's live rows as a bitmap, or null for every row. */
export function filterBitmap(index: IndexRead, filter: FilterNode | null): RowBitmap | null {
  return liveMatching(index, filter);
}

/** The BM25 best `k` of one query's terms (BM25 >= threshold), the row `exclude` left out; a pause may come after each term. */
export function* textArm(
  index: IndexRead,
  terms: string[],
  k: number,
  bitmap: RowBitmap | null,
  threshold: number | undefined,
  exclude: number,
): Generator<void, { hits: ArmHit[]; matched: number }, void> {
  const size = index.rows.size;
  if (size === 0) return { hits: [], matched: 0 };
  const found = yield* index.texts.searchSteps(terms, size, k, BM25, bitmap, threshold, exclude);
  const hits = new Array<ArmHit>(found.rows.length);
  for (let i = 0; i < hits.length; i++) hits[i] = { row: found.rows[i], score: found.scores[i] };
  return { hits, matched: found.matched };
}
