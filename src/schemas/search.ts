// Request bodies of /search and /search-many.
import * as v from 'valibot';
import { SPEC_LIMITS, type Config } from '../config.js';
import { commonSchemas, VectorSchema } from './common.js';
import { exactlyOne } from './exactly-one.js';

export function searchSchemas(config: Config) {
  const { FilterSchema, IdSchema } = commonSchemas(config);
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
    scoreThreshold: v.optional(v.pipe(
      v.number(), v.finite(),
      v.description('Leave out results worse than this: under cosine those with score < scoreThreshold, under l2 those with distance > scoreThreshold. Fewer than topK results may come back.'),
    )),
  };
  return {
    SearchRequestSchema: v.pipe(
      v.strictObject({
        queryVector: v.optional(VectorSchema),
        queryId: v.optional(v.pipe(IdSchema, v.description('Search with this stored vector as the query; the id itself is left out of the results.'))),
        ...searchOptions,
      }),
      exactlyOne(['queryVector', 'queryId']),
    ),
    SearchManyRequestSchema: v.pipe(
      v.strictObject({
        queryVectors: v.optional(v.pipe(v.array(VectorSchema), v.minLength(1), v.maxLength(config.maxSearchManyBatch))),
        queryIds: v.optional(v.pipe(
          v.array(IdSchema), v.minLength(1), v.maxLength(config.maxSearchManyBatch),
          v.description('Search with these stored vectors as the queries; each id is left out of its own results.'),
        )),
        ...searchOptions,
      }),
      exactlyOne(['queryVectors', 'queryIds']),
    ),
  };
}
