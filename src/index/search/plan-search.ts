// Which search a request is: vector (query vectors), keyword (query texts
// alone) or hybrid (both, one text per vector), checked and laid out as a plan.
import type { IndexRead } from '../index-read.js';
import type { SearchOptions, SearchPlan } from '../types.js';
import { planHybridSearch } from './hybrid.js';
import { planKeywordSearch } from './keyword.js';
import { fusionWithoutBothArms } from './options.js';
import { checkStages, decayWithoutVectors, stagesApart, planStagedSearch } from './stages.js';
import { planVectorSearch } from './vector.js';

export function planSearch(index: IndexRead, queries: ArrayLike<number>[] | null, options: SearchOptions): SearchPlan {
  const texts = options.queryTexts;
  const vectorCount = queries?.length ?? 0;
  if (options.fusion !== undefined && (texts === undefined || vectorCount === 0)) throw fusionWithoutBothArms();
  checkStages(options);
  if (stagesApart(options)) return planStagedSearch(index, queries ?? [], options, null);
  if (options.decay !== undefined && vectorCount === 0) throw decayWithoutVectors();
  if (texts === undefined) return planVectorSearch(index, queries ?? [], options);
  if (vectorCount === 0) return planKeywordSearch(index, texts, options);
  return planHybridSearch(index, queries!, texts, options, null);
}
