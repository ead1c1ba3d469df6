// Response bodies of every JSON route. The OpenAPI document is generated from
// these (src/openapi/), and the conformance test checks every real response
// against what the document declares.
import * as v from 'valibot';
import { METRICS, SPEC_LIMITS, VECTOR_TYPES } from '../config.js';
import { CountSchema, JsonObjectSchema, metricsSchema, SessionSchema, TimestampSchema } from './envelope.js';
import { LimitsSchema } from './limits-response.js';

const IdSchema = v.string();
const TextSchema = v.pipe(v.nullable(v.string()), v.description("The vector's text (with includeText); null for a vector without one."));
/** A record's ttl and expiry (per-record TTL), on a record that has one. */
const RecordTtlEntries = {
  ttlMs: v.optional(v.pipe(CountSchema, v.description('The ttl the record was last written with (absent: it never expires).'))),
  expiresAt: v.optional(
    v.pipe(TimestampSchema, v.description('When the record expires: ttlMs after its last write or touch. From then on every read leaves it out.')),
  ),
};
export const StoredVectorSchema = v.strictObject({
  id: IdSchema,
  vector: v.pipe(v.array(v.number()), v.description('Components as stored (float32), printed as the shortest decimal that rounds to them.')),
  metadata: JsonObjectSchema,
  text: v.optional(TextSchema),
  ...RecordTtlEntries,
});

const RankSchema = v.pipe(
  v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))),
  v.description("1-based rank in that arm's candidates; null when the arm did not rank this vector."),
);

export const SearchHitSchema = v.strictObject({
  id: IdSchema,
  score: v.pipe(
    v.number(),
    v.description(
      'Vector search: cosine similarity (higher is nearer) or Euclidean distance for l2 (lower is nearer). Keyword search: BM25. Hybrid search: the fused score (higher is better).',
    ),
  ),
  metadata: v.optional(JsonObjectSchema),
  text: v.optional(TextSchema),
  vectorScore: v.optional(
    v.pipe(
      v.nullable(v.number()),
      v.description("Hybrid search: the vector arm's score (cosine or l2 distance); null when that arm did not rank this vector."),
    ),
  ),
  vectorRank: v.optional(RankSchema),
  textScore: v.optional(v.pipe(v.nullable(v.number()), v.description('Hybrid search: the BM25 score; null when the keyword arm did not rank this vector.'))),
  textRank: v.optional(RankSchema),
  mmrRank: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(1), v.description('With mmr: the 1-based order in which MMR picked this hit (the order of the list).')),
  ),
});

const SearchGroupSchema = v.strictObject({
  value: v.pipe(v.nullable(v.union([v.string(), v.number(), v.boolean()])), v.description('The scalar at groupBy.path that the group shares.')),
  hits: v.pipe(v.array(SearchHitSchema), v.description("The group's best groupBy.size hits, best first.")),
});
const SearchGroupsSchema = v.pipe(
  v.array(SearchGroupSchema),
  v.description('With groupBy: the topK groups, ordered by their best hit (ties by its insertion order, then by value).'),
);

export const SearchStatsSchema = v.strictObject({
  exact: v.boolean(),
  metric: v.nullable(v.picklist(METRICS)),
  topK: v.pipe(CountSchema, v.maxValue(SPEC_LIMITS.maxTopK)),
  candidatePool: v.pipe(CountSchema, v.maxValue(SPEC_LIMITS.maxCandidatePool)),
  matched: CountSchema,
  scanned: CountSchema,
  textMatched: v.optional(
    v.pipe(
      CountSchema,
      v.description(
        'Keyword and hybrid search: vectors whose text holds at least one query term and that passed the filter (per query; the largest for search-many).',
      ),
    ),
  ),
});

const UpsertMutationSchema = v.strictObject({ added: CountSchema, replaced: CountSchema });
const DeleteMutationSchema = v.strictObject({ deleted: CountSchema, notFound: v.array(IdSchema) });
const UpdateMutationSchema = v.strictObject({ updated: CountSchema });

/** A success body: success, the route's fields, optionally session, and its metrics. */
function success<E extends v.ObjectEntries>(metricFields: readonly string[], entries: E) {
  return v.strictObject({ success: v.literal(true), ...entries, metrics: metricsSchema(metricFields, 'required') });
}
const withSession = <E extends v.ObjectEntries>(metricFields: readonly string[], entries: E) => success(metricFields, { session: SessionSchema, ...entries });

export const OverviewResponseSchema = success([], {
  name: v.string(),
  version: v.string(),
  description: v.string(),
  links: v.strictObject({
    openapi: v.string(),
    sdk: v.string(),
    sdkTypes: v.string(),
    kernel: v.string(),
    limits: v.string(),
    token: v.string(),
  }),
  routes: v.array(v.strictObject({ method: v.string(), path: v.string() })),
});

/** What the memory budget counts now (src/limits/memory-budget.ts). */
const MemoryUsageSchema = v.pipe(
  v.strictObject({
    memoryBudgetBytes: CountSchema,
    memoryUsedBytes: v.pipe(CountSchema, v.description('The sum of the six below, and with DATA_DIR the buffers of session logs being reopened or compacted.')),
    linearMemoryBytes: v.pipe(CountSchema, v.description('Linear memory of all sessions.')),
    heapBytes: v.pipe(
      CountSchema,
      v.description(
        'Estimated JS heap of the sessions: their ids (bounded per vector by MAX_ID_LENGTH), insertion logs and filter path caches, and the token hashes remembered without a session.',
      ),
    ),
    metadataBytes: v.pipe(
      CountSchema,
      v.description(
        'Metadata and text stores of the sessions, outside the JS heap: metadata and text bytes, row tables, filter and keyword index dictionaries and postings, as allocated.',
      ),
    ),
    bodiesInFlightBytes: v.pipe(CountSchema, v.description('Request bodies being read and parsed.')),
    answersInFlightBytes: v.pipe(CountSchema, v.description('Answers being built or sent.')),
    embeddingBytes: v.pipe(
      CountSchema,
      v.description('The embedding threads started (each its model, activations and heap) and the vectors of texts being embedded.'),
    ),
  }),
  v.description("What the server's memory budget counts now."),
);

export const LimitsResponseSchema = success([], {
  limits: LimitsSchema,
  usage: v.strictObject({ activeSessions: CountSchema, maxSessions: CountSchema, ...MemoryUsageSchema.entries }),
});

export const HealthResponseSchema = success([], { status: v.literal('ok') });

export const ReadyResponseSchema = success([], {
  status: v.literal('ready'),
  checks: v.strictObject({ kernelCompiled: v.boolean(), sessionsRestored: v.boolean(), shuttingDown: v.boolean() }),
});

export const TokenResponseSchema = success(['tokenIssueMs'], {
  token: v.pipe(
    v.string(),
    v.description(
      'Bearer token; the only copy. Send it as Authorization: Bearer <token>. Opaque to clients: 43 base64url characters (256 random bits), prefixed with `<instanceId>.` when the server has an INSTANCE_ID (a proxy routes on that prefix).',
    ),
  ),
  tokenType: v.literal('Bearer'),
  session: SessionSchema,
  limits: LimitsSchema,
});

export const SessionResponseSchema = withSession(['dbOpenMs', 'statsReadMs'], {
  stats: v.strictObject({
    vectorCount: CountSchema,
    dimensions: v.nullable(CountSchema),
    metric: v.nullable(v.picklist(METRICS)),
    vectorType: v.picklist(VECTOR_TYPES),
    vectorBytes: v.pipe(CountSchema, v.description('Bytes of the float32 vectors stored.')),
    codeBytes: v.pipe(CountSchema, v.description('Bytes of the int8 codes stored beside them (0 for float32).')),
    rowCapacity: CountSchema,
    linearMemoryBytes: CountSchema,
    linearMemoryUsedBytes: CountSchema,
    heapBytes: v.pipe(
      CountSchema,
      v.description('Estimated JS heap of this session: its ids (bounded per vector by MAX_ID_LENGTH), its insertion log and its filter path cache.'),
    ),
    metadataBytes: v.pipe(
      CountSchema,
      v.description(
        "This session's metadata store, outside the JS heap, as allocated: metadata bytes (with room and holes a compaction reclaims), row table, filter index dictionary and postings.",
      ),
    ),
    metadataJsonBytes: v.pipe(CountSchema, v.description('UTF-8 bytes of the metadata stored, as JSON.')),
    filterIndexEntries: v.pipe(
      CountSchema,
      v.description(
        'Entries of the filter index: paths, scalar values at a path (strings up to maxIndexedValueBytes), objects and arrays at a path, hashes of longer values, long-string sets.',
      ),
    ),
    textBytes: v.pipe(
      CountSchema,
      v.description(
        "This session's text store, outside the JS heap, as allocated: text bytes, row table, keyword index dictionary and postings (counted in serverMemory.metadataBytes).",
      ),
    ),
    textIndexBytes: v.pipe(CountSchema, v.description('Of textBytes, the keyword index alone: term dictionary, postings, document lengths.')),
    textIndexTerms: v.pipe(CountSchema, v.description('Distinct terms of the keyword index.')),
  }),
  usage: v.strictObject({
    vectorCount: CountSchema,
    maxVectors: CountSchema,
    vectorsRemaining: CountSchema,
    fractionUsed: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
  }),
  serverMemory: MemoryUsageSchema,
  limits: LimitsSchema,
});

export const ResetResponseSchema = withSession(['resetMs'], {
  mutation: v.strictObject({ reset: v.literal(true), deleted: CountSchema }),
});

export const HasResponseSchema = withSession(['dbOpenMs', 'hasMs'], { id: IdSchema, has: v.boolean() });
export const GetResponseSchema = withSession(['dbOpenMs', 'getMs'], { vector: StoredVectorSchema });
export const GetManyResponseSchema = withSession(['dbOpenMs', 'getManyMs'], {
  vectors: v.array(StoredVectorSchema),
  notFound: v.array(IdSchema),
});
export const GetMetadataResponseSchema = withSession(['dbOpenMs', 'getMetadataMs'], { id: IdSchema, metadata: JsonObjectSchema });
export const SetMetadataResponseSchema = withSession(['dbOpenMs', 'setMetadataMs'], {
  id: IdSchema,
  metadata: JsonObjectSchema,
  mutation: UpdateMutationSchema,
});
export const DeleteMetadataResponseSchema = withSession(['dbOpenMs', 'deleteMetadataMs'], {
  id: IdSchema,
  metadata: JsonObjectSchema,
  mutation: UpdateMutationSchema,
});
export const AddResponseSchema = withSession(['dbOpenMs', 'embedMs?', 'capacityCheckMs', 'addMs'], { id: IdSchema, mutation: UpsertMutationSchema });
export const AddManyResponseSchema = withSession(['dbOpenMs', 'embedMs?', 'capacityCheckMs', 'addManyMs'], { mutation: UpsertMutationSchema });
export const DeleteResponseSchema = withSession(['dbOpenMs', 'deleteMs'], { id: IdSchema, mutation: DeleteMutationSchema });
export const DeleteManyResponseSchema = withSession(['dbOpenMs', 'deleteManyMs'], { mutation: DeleteMutationSchema });
export const TouchResponseSchema = withSession(['dbOpenMs', 'touchMs'], {
  mutation: v.strictObject({
    touched: v.pipe(CountSchema, v.description('Live records found: each with a ttl now expires ttlMs from now; one without a ttl never expires.')),
    notFound: v.pipe(v.array(IdSchema), v.description('Ids not stored, deleted or expired (an expired record cannot be renewed).')),
  }),
});
export const ClearResponseSchema = withSession(['dbOpenMs', 'clearMs'], { mutation: v.strictObject({ deleted: CountSchema }) });
export const SearchResponseSchema = withSession(['dbOpenMs', 'embedMs?', 'searchMs', 'resultCount'], {
  results: v.optional(
    v.pipe(
      v.array(SearchHitSchema),
      v.description('Nearest first (with decay: best final score first; with mmr: in pick order); ties broken by insertion order. Absent with groupBy.'),
    ),
  ),
  groups: v.optional(SearchGroupsSchema),
  stats: SearchStatsSchema,
});
export const SearchManyResponseSchema = withSession(['dbOpenMs', 'embedMs?', 'searchManyMs', 'queryCount', 'resultCount'], {
  results: v.optional(v.pipe(v.array(v.array(SearchHitSchema)), v.description('One list per query vector, in request order. Absent with groupBy.'))),
  groups: v.optional(v.pipe(v.array(SearchGroupsSchema), v.description('With groupBy: one list of groups per query, in request order.'))),
  stats: SearchStatsSchema,
});

export const EmbedResponseSchema = success(['dbOpenMs', 'embedMs', 'textCount'], {
  model: v.pipe(v.string(), v.description('The model that embedded the texts.')),
  dimensions: CountSchema,
  vectors: v.pipe(
    v.array(
      v.union([
        v.pipe(v.array(v.number()), v.description('Components as JSON numbers (each float32 value exactly).')),
        v.pipe(v.string(), v.description('Base64 of little-endian float32 (vectorEncoding: base64).')),
      ]),
    ),
    v.description('One unit vector per text, in request order.'),
  ),
});

export const CountResponseSchema = withSession(['dbOpenMs', 'countMs'], { count: CountSchema });
export const ListedVectorSchema = v.strictObject({
  id: IdSchema,
  vector: v.optional(
    v.union([
      v.pipe(v.array(v.number()), v.description('Components as JSON numbers (each float32 value exactly).')),
      v.pipe(v.string(), v.description('Base64 of little-endian float32 (vectorEncoding: base64).')),
    ]),
  ),
  metadata: v.optional(JsonObjectSchema),
  text: v.optional(TextSchema),
  ...RecordTtlEntries,
});
export const ListResponseSchema = withSession(['dbOpenMs', 'listMs', 'resultCount'], {
  vectors: v.pipe(
    v.array(ListedVectorSchema),
    v.description("In insertion order (a replaced vector counts as inserted when replaced), or in orderBy's order."),
  ),
  nextCursor: v.pipe(v.nullable(v.string()), v.description('Pass as cursor for the next page; null on the last page.')),
});
const FacetValueSchema = v.union([v.number(), v.string(), v.boolean(), v.null()]);
const FacetRangeCountSchema = v.strictObject({ gte: v.optional(v.number()), lt: v.optional(v.number()), count: CountSchema });
export const FacetResponseSchema = withSession(['dbOpenMs', 'facetMs'], {
  values: v.pipe(
    v.array(v.strictObject({ value: FacetValueSchema, count: CountSchema })),
    v.description('The first `limit` values by count, descending, then by value: numbers ascending, strings by Unicode code point, false, true, null.'),
  ),
  distinctValues: v.pipe(CountSchema, v.description('Distinct values counted above 0 (values lists the first `limit`).')),
  longStrings: v.pipe(
    CountSchema,
    v.description('Rows holding a string at the path longer than maxIndexedValueBytes: such strings are not counted as values.'),
  ),
  ranges: v.optional(
    v.pipe(v.array(FacetRangeCountSchema), v.description('With ranges: each range asked, in order, with the rows holding a number in [gte, lt).')),
  ),
});
export const PatchMetadataResponseSchema = withSession(['dbOpenMs', 'patchMetadataMs'], {
  id: IdSchema,
  metadata: v.pipe(JsonObjectSchema, v.description('The metadata after the patch.')),
  mutation: UpdateMutationSchema,
});
export const ImportResponseSchema = withSession(['dbOpenMs', 'embedMs?', 'importReadMs', 'capacityCheckMs', 'importEncodeMs', 'importMs'], {
  mutation: UpsertMutationSchema,
});
