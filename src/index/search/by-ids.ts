// Search with stored vectors as the queries, each left out of its own
// results: the top topK + 1 are found and the query's own id dropped (or the
// last, when a tie or the filter kept the id out). VECTOR_NOT_FOUND names
// the first id not stored.
import { apiError, pointer } from '../../errors.js';
import type { IndexRead } from '../index-read.js';
import { liveRowOf } from '../live-rows.js';
import type { SearchOptions, SearchOutput, SearchPlan } from '../types.js';
import { planHybridSearch } from './hybrid.js';
import { fusionWithoutBothArms, resolveSearchOptions } from './options.js';
import { mapPlan } from './search-plan.js';
import { checkStages, planStagedSearch, stagesApart } from './stages.js';
import { planVectorSearch } from './vector.js';

export function planSearchByIds(index: IndexRead, ids: string[], options: SearchOptions): SearchPlan {
  const pathOf = options.pathOf ?? ((j: number) => pointer('queryIds', j));
  const queries = ids.map((id, j) => {
    const row = liveRowOf(index, id);
    if (row === undefined) throw apiError('VECTOR_NOT_FOUND', `no vector with id "${id}"`, { path: pathOf(j), id });
    return index.kernel!.readRow(row);
  });
  const { topK, candidatePool } = resolveSearchOptions(options, true);
  checkStages(options);
  if (stagesApart(options)) {
    return planStagedSearch(
      index,
      queries,
      { ...options, pathOf },
      ids.map((id) => index.rows.rowOf(id)!),
    );
  }
  if (options.queryTexts !== undefined) {
    const own = ids.map((id) => index.rows.rowOf(id)!);
    return planHybridSearch(index, queries, options.queryTexts, { ...options, pathOf }, own);
  }
  if (options.fusion !== undefined) throw fusionWithoutBothArms();
  const withoutOwn = (out: SearchOutput): SearchOutput => {
    const results = out.results.map((list, j) => {
      const own = list.findIndex((hit) => hit.id === ids[j]);
      if (own >= 0) list.splice(own, 1);
      return list.slice(0, topK);
    });
    return { results, stats: { ...out.stats, topK }, metadataJsonBytes: out.metadataJsonBytes, textJsonBytes: out.textJsonBytes };
  };
  return mapPlan(planVectorSearch(index, queries, { ...options, topK: topK + 1, candidatePool, pathOf }), withoutOwn);
}
