// Request bodies of /search and /search-many.
import * as v from 'valibot';
import { SPEC_LIMITS, type Config } from '../config.js';
import { commonSchemas, VectorSchema } from './common.js';

export function searchSchemas(config: Config) {
  const { FilterSchema } = commonSchemas(config);
  const searchOptions = {
    topK: v.optional(v.pipe(
      v.number(), v.integer(), v.minValue(SPEC_LIMITS.minTopK), v.maxValue(SPEC_LIMITS.maxTopK),
      v.description('How many results per query.'),
    ), SPEC_LIMITS.defaultTopK),
    candidatePool: v.optional(v.pipe(
      v.number(), v.integer(), v.minValue(SPEC_LIMITS.minCandidatePool), v.maxValue(SPEC_LIMITS.maxCandidatePool),
      v.description('First-stage candidates per query; raised to topK when smaller. int8 sessions: the candidatePool best by the int8 codes are re-ranked exactly in float32 (larger: better recall, slower). float32 sessions: the scan is exact, so it only bounds the first stage and changes no result.'),
    ), SPEC_LIMITS.defaultCandidatePool),
    includeMetadata: v.optional(v.pipe(v.boolean(), v.description('Return each result\'s metadata.')), false),
    filter: v.optional(FilterSchema),
  };
  return {
    SearchRequestSchema: v.strictObject({ queryVector: VectorSchema, ...searchOptions }),
    SearchManyRequestSchema: v.strictObject({
      queryVectors: v.pipe(v.array(VectorSchema), v.minLength(1), v.maxLength(config.maxSearchManyBatch)),
      ...searchOptions,
    }),
  };
}
