// Request bodies of /search and /search-many.
import * as v from 'valibot';
import { SPEC_LIMITS, type Config } from '../config.js';
import { commonSchemas, utf8StringSchema } from './common.js';
import { QueryVectorSchema } from './vector.js';
import { queryFields } from './query-fields.js';
import { stageFields } from './stages.js';
import { utf8Length } from '../index/json-size.js';

/** UTF-8 bytes of all of `texts`. */
function totalUtf8Length(texts: readonly string[]): number {
  let bytes = 0;
  for (const text of texts) bytes += utf8Length(text);
  return bytes;
}

const QueryTextSchema = v.pipe(
  utf8StringSchema(SPEC_LIMITS.maxQueryTextBytes, 'a query text'),
  v.description(
    `Keyword query, ranked by BM25 over the vectors' texts (analysed like them). Alone: keyword search. With a query vector or id: hybrid search, the two rankings fused. At most ${SPEC_LIMITS.maxQueryTextBytes} bytes; one with no terms (empty, or only stop words) is 400 QUERY_TEXT_EMPTY.`,
  ),
);

const FusionSchema = v.pipe(
  v.variant('method', [
    v.strictObject({
      method: v.literal('rrf'),
      k: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(SPEC_LIMITS.maxRrfK)), SPEC_LIMITS.defaultRrfK),
    }),
    v.strictObject({
      method: v.literal('linear'),
      alpha: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1)), SPEC_LIMITS.defaultLinearAlpha),
    }),
  ]),
  v.description(
    `How a hybrid search fuses its two rankings (each arm's candidatePool best). rrf (the default, k ${SPEC_LIMITS.defaultRrfK}): score = sum over the arms of 1 / (k + rank). linear: score = alpha x the vector score + (1 - alpha) x the BM25 score, each min-max normalised over its arm's candidates (l2 distances inverted), 0 for an arm that did not rank the vector; alpha defaults to ${SPEC_LIMITS.defaultLinearAlpha}. Only with both a query text and a query vector or id.`,
  ),
);

export function searchSchemas(config: Config) {
  const { FilterSchema, IdSchema } = commonSchemas(config);
  const searchOptions = {
    topK: v.optional(
      v.pipe(v.number(), v.integer(), v.minValue(SPEC_LIMITS.minTopK), v.maxValue(SPEC_LIMITS.maxTopK), v.description('How many results per query.')),
      SPEC_LIMITS.defaultTopK,
    ),
    candidatePool: v.optional(
      v.pipe(
        v.number(),
        v.integer(),
        v.minValue(SPEC_LIMITS.minCandidatePool),
        v.maxValue(SPEC_LIMITS.maxCandidatePool),
        v.description(
          "First-stage candidates per query; raised to topK when smaller. int8 sessions: the candidatePool best by the int8 codes are re-ranked exactly in float32 (larger: better recall, slower). float32 sessions: the scan is exact, so it only bounds the first stage and changes no result. Hybrid search: each arm's candidatePool best are fused.",
        ),
      ),
      SPEC_LIMITS.defaultCandidatePool,
    ),
    includeMetadata: v.optional(v.pipe(v.boolean(), v.description("Return each result's metadata.")), false),
    includeText: v.optional(v.pipe(v.boolean(), v.description("Return each result's text (null for a vector without one).")), false),
    filter: v.optional(FilterSchema),
    scoreThreshold: v.optional(
      v.pipe(
        v.number(),
        v.finite(),
        v.description(
          'Leave out results worse than this: under cosine those with score < scoreThreshold, under l2 those with distance > scoreThreshold; for keyword and hybrid search, those whose BM25 or fused score is below it. Fewer than topK results may come back.',
        ),
      ),
    ),
    fusion: v.optional(FusionSchema),
    ...stageFields,
  };
  return {
    SearchRequestSchema: v.pipe(
      v.strictObject({
        queryVector: v.optional(QueryVectorSchema),
        queryId: v.optional(v.pipe(IdSchema, v.description('Search with this stored vector as the query; the id itself is left out of the results.'))),
        queryText: v.optional(QueryTextSchema),
        ...searchOptions,
      }),
      queryFields(['queryVector', 'queryId', 'queryText']),
    ),
    SearchManyRequestSchema: v.pipe(
      v.strictObject({
        queryVectors: v.optional(v.pipe(v.array(QueryVectorSchema), v.minLength(1), v.maxLength(config.maxSearchManyBatch))),
        queryIds: v.optional(
          v.pipe(
            v.array(IdSchema),
            v.minLength(1),
            v.maxLength(config.maxSearchManyBatch),
            v.description('Search with these stored vectors as the queries; each id is left out of its own results.'),
          ),
        ),
        queryTexts: v.optional(
          v.pipe(
            v.array(QueryTextSchema),
            v.minLength(1),
            v.maxLength(config.maxSearchManyBatch),
            v.check(
              (texts) => totalUtf8Length(texts) <= SPEC_LIMITS.maxQueryTextBytesPerRequest,
              `the query texts must be at most ${SPEC_LIMITS.maxQueryTextBytesPerRequest} bytes as UTF-8 in all (maxQueryTextBytesPerRequest)`,
            ),
            v.description(
              `Keyword queries: alone, one keyword search each; beside queryVectors or queryIds, one per query (same count), each fused with its vector query. At most ${SPEC_LIMITS.maxQueryTextBytesPerRequest} bytes in all (text.maxQueryTextBytesPerRequest).`,
            ),
          ),
        ),
        ...searchOptions,
      }),
      queryFields(['queryVectors', 'queryIds', 'queryTexts']),
    ),
  };
}
