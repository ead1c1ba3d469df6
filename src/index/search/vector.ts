// Vector search: the exact k nearest rows of each query (float32), or the
// candidatePool best by the int8 codes re-ranked exactly, filtered first.
import { apiError, pointer } from '../../errors.js';
import type { SearchHits, SearchRequest } from '../../kernel/search-request.js';
import { parseFilter, type FilterNode } from '../filter.js';
import type { IndexRead } from '../index-read.js';
import { liveMatching } from '../live-rows.js';
import type { SearchOptions, SearchPlan, SearchStats } from '../types.js';
import { assertNonZero } from '../zero-vector.js';
import { vectorResults } from './hits.js';
import { resolveSearchOptions } from './options.js';
import { answeredPlan, stepsPlan } from './search-plan.js';

export function planVectorSearch(index: IndexRead, queries: ArrayLike<number>[], options: SearchOptions): SearchPlan {
  const { topK, candidatePool } = resolveSearchOptions(options);
  const pathOf = options.pathOf ?? ((j: number) => pointer('queryVectors', j));
  // A bad filter is refused even when there is nothing to search.
  const filter = options.filter ? parseFilter(options.filter) : null;
  const { config, kernel } = index;
  const size = index.rows.size;
  const stats: SearchStats = { exact: config.vectorType === 'float32', metric: config.metric, topK, candidatePool, matched: 0, scanned: 0 };
  if (!kernel || size === 0) {
    // Nothing to find, but the queries must still agree with the session
    // (or, before the first add, with each other).
    toFloat32Queries(index, queries, kernel?.dim ?? queries[0]?.length ?? 0, pathOf);
    return answeredPlan({ results: queries.map(() => []), stats, metadataJsonBytes: 0, textJsonBytes: 0 });
  }
  const packed = toFloat32Queries(index, queries, kernel.dim, pathOf);
  const rowList = rowsMatching(index, filter);
  stats.matched = rowList ? rowList.length : size;
  stats.scanned = stats.matched;
  const queryCount = queries.length;
  // int8: the candidatePool best by the codes, re-ranked exactly; float32: one exact scan.
  const int8 = config.vectorType === 'int8';
  const request: SearchRequest = {
    queries: packed,
    queryCount,
    k: topK,
    count: size,
    rowList,
    guard: index.memoryGuard,
    candidatePool: int8 ? candidatePool : undefined,
  };
  return stepsPlan(
    queryCount * stats.scanned * kernel.dim * (int8 ? 0.25 : 1),
    () => kernel.search(request),
    (executor) => kernel.search(request, executor),
    (hits: SearchHits) => vectorResults(index, hits, queryCount, options, stats),
  );
}

/** Matching live rows in ascending order, or null when every row is one (the kernel then scans without a list). */
export function rowsMatching(index: IndexRead, filter: FilterNode | null): Int32Array | null {
  const bitmap = liveMatching(index, filter);
  if (!bitmap) return null;
  const count = bitmap.count();
  return count === index.rows.size ? null : bitmap.rows(count);
}

/** Queries packed back to back as float32, checked against the session dimension. */
export function toFloat32Queries(index: IndexRead, queries: ArrayLike<number>[], dim: number, pathOf: (j: number) => string): Float32Array {
  // One float32 query (POST /search from the server's body reader) is used as it is: the kernel only reads it.
  const single = queries.length === 1 && queries[0] instanceof Float32Array ? queries[0] : null;
  const packed = single ?? new Float32Array(queries.length * dim);
  const source = index.config.dimensions !== null ? 'the session dimension' : "the first query vector's length";
  for (let j = 0; j < queries.length; j++) {
    const query = queries[j];
    if (query.length !== dim) {
      throw apiError('DIMENSION_MISMATCH', `query vector has ${query.length} values; ${source} is ${dim}`, {
        path: pathOf(j),
        expected: dim,
        actual: query.length,
      });
    }
    let values = single;
    if (!values) {
      values = packed.subarray(j * dim, (j + 1) * dim);
      // TypedArray#set from a JS array takes V8's generic path (~30 ns a value); a loop is ~1.
      if (ArrayBuffer.isView(query)) values.set(query);
      else for (let i = 0; i < dim; i++) values[i] = query[i];
    }
    if (index.config.metric === 'cosine') assertNonZero(values, () => pathOf(j));
  }
  return packed;
}
