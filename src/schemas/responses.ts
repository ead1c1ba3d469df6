// Response bodies of every JSON route. The OpenAPI document is generated from
// these (src/openapi/), and the conformance test checks every real response
// against what the document declares.
import * as v from 'valibot';
import { ANALYZERS, BACKENDS, METRICS, SPEC_LIMITS, VECTOR_TYPES } from '../config.js';
import { CountSchema, JsonObjectSchema, metricsSchema, SessionSchema, TimestampSchema } from './envelope.js';

const IdSchema = v.string();
const TextSchema = v.pipe(v.nullable(v.string()), v.description("The vector's text (with includeText); null for a vector without one."));
/** A record's ttl and expiry (per-record TTL), on a record that has one. */
const RecordTtlEntries = {
  ttlMs: v.optional(v.pipe(CountSchema, v.description('The ttl the record was last written with (absent: it never expires).'))),
  expiresAt: v.optional(
    v.pipe(TimestampSchema, v.description('When the record expires: ttlMs after its last write or touch. From then on every read leaves it out.')),
  ),
};
const BoundsSchema = v.strictObject({ min: CountSchema, max: CountSchema, default: CountSchema });

export const LimitsSchema = v.pipe(
  v.strictObject({
    maxDimensions: CountSchema,
    maxVectorsPerSession: CountSchema,
    maxSessions: CountSchema,
    sessionTtlMs: CountSchema,
    topK: BoundsSchema,
    candidatePool: BoundsSchema,
    stages: v.pipe(
      v.strictObject({
        mmrCandidates: BoundsSchema,
        groupSize: BoundsSchema,
        decay: v.strictObject({ defaultMidpoint: v.number(), defaultWeight: v.number() }),
        maxPathBytes: CountSchema,
      }),
      v.description("The search stages: mmr.candidates, groupBy.size, decay's defaults, and the UTF-8 bytes of a stage's metadata path."),
    ),
    batch: v.strictObject({ addMany: CountSchema, getMany: CountSchema, deleteMany: CountSchema, searchMany: CountSchema }),
    maxIdLength: CountSchema,
    maxMetadataBytes: CountSchema,
    maxTextBytes: v.pipe(CountSchema, v.description("UTF-8 bytes of one vector's text.")),
    recordTtl: v.pipe(
      v.strictObject({ maxTtlMs: CountSchema, sweepIntervalMs: CountSchema }),
      v.description(
        "Per-record TTL: a record's longest ttlMs (MAX_RECORD_TTL_MS), and how often expired records' memory is freed (reads leave them out from the instant they expire).",
      ),
    ),
    text: v.pipe(
      v.strictObject({
        analyzers: v.array(v.picklist(ANALYZERS)),
        defaultAnalyzer: v.picklist(ANALYZERS),
        maxQueryTextBytes: CountSchema,
        maxQueryTextBytesPerRequest: CountSchema,
        bm25: v.strictObject({ k1: v.number(), b: v.number() }),
        fusion: v.strictObject({ defaultMethod: v.literal('rrf'), rrfK: BoundsSchema, defaultAlpha: v.number() }),
      }),
      v.description("Keyword and hybrid search: the analyzers, the query text limit, BM25's parameters (Lucene's IDF) and the fusion defaults."),
    ),
    maxBodyBytes: CountSchema,
    maxImportBytes: v.pipe(CountSchema, v.description('Bytes of one POST /vectors/import body.')),
    maxAnswerBytes: v.pipe(CountSchema, v.description('Bytes of one answer of search, search-many, get-many or list; past it 400 ANSWER_TOO_LARGE.')),
    mcp: v.pipe(
      v.strictObject({
        maxBodyBytes: v.pipe(
          CountSchema,
          v.description(`Bytes of one POST /mcp body (${SPEC_LIMITS.maxMcpBodyBytes}, or maxBodyBytes when lower); past it 413 PAYLOAD_TOO_LARGE.`),
        ),
        maxAnswerBytes: v.pipe(
          CountSchema,
          v.description(
            'Bytes of one answer of the tools recall and list_memories, structured and text together (MAX_MCP_ANSWER_BYTES); past it the tool error ANSWER_TOO_LARGE.',
          ),
        ),
      }),
      v.description("POST /mcp, the Model Context Protocol endpoint (docs/mcp.md): its body and answer caps; every other limit is the routes' own."),
    ),
    list: BoundsSchema,
    facet: v.strictObject({
      limit: BoundsSchema,
      maxRanges: v.pipe(CountSchema, v.description('Numeric ranges of one POST /vectors/facet.')),
    }),
    maxFieldPathLength: v.pipe(CountSchema, v.description('Characters of the metadata path of a facet or an orderBy.')),
    maxJsonDepth: CountSchema,
    maxMetadataKeys: CountSchema,
    maxFilterKeys: CountSchema,
    maxFilterNodes: v.pipe(
      CountSchema,
      v.description(
        'Nodes of one filter: each field condition, each element of $in/$nin, each $and/$or/$not and each of their clauses; past it 400 VALIDATION_ERROR.',
      ),
    ),
    maxIndexedValueBytes: v.pipe(
      CountSchema,
      v.description(
        "UTF-8 bytes of the longest metadata string (or object's or array's canonical JSON) the filter index keeps as a key; longer ones are keyed by a hash, and filters on them read the few rows under it.",
      ),
    ),
    rateLimits: v.pipe(
      v.strictObject({
        tokensPerMinutePerAddress: CountSchema,
        requestsPerSecondPerToken: CountSchema,
        requestBurstPerToken: CountSchema,
      }),
      v.description('0 means the limit is off.'),
    ),
    memoryBudgetBytes: v.pipe(
      CountSchema,
      v.description(
        'Bytes callers can make the server hold: linear memories, metadata and text stores (off the JS heap), the JS heap of stored ids, bodies and answers in flight; 0 means no budget.',
      ),
    ),
    memoryStoredMaxBytes: v.pipe(
      CountSchema,
      v.description(
        'The most of memoryBudgetBytes stored data (linear memories, metadata and text stores, stored ids) may take; a write past it is refused with 503 SERVER_AT_CAPACITY, and the rest stays for bodies and answers in flight.',
      ),
    ),
    persistent: v.pipe(v.boolean(), v.description('Whether sessions survive a restart of the server.')),
    persistence: v.pipe(
      v.strictObject({
        jobs: v.pipe(CountSchema, v.description('Session logs reopened, compacted or rewritten at once (PERSISTENCE_JOBS); the rest wait their turn.')),
        bufferBytesPerJob: v.pipe(CountSchema, v.description('Bytes of buffers each such job holds, about, counted in memoryBudgetBytes.')),
        dataDirMaxBytes: v.pipe(
          CountSchema,
          v.description(
            'Bytes of all session logs at most (DATA_DIR_MAX_BYTES, derived from the free space at start by default); past it a change gets 507 DISK_QUOTA_EXCEEDED. 0: no quota.',
          ),
        ),
        maxSessionLogBytes: v.pipe(
          CountSchema,
          v.description("Bytes of one session's log at most (MAX_SESSION_LOG_BYTES); past it a change gets 507 SESSION_LOG_FULL."),
        ),
        lockStaleMs: v.pipe(
          CountSchema,
          v.description(
            "LOCK_STALE_MS: a DATA_DIR lock whose heartbeat (the lock file's mtime) is older is taken over by a server starting on the same directory.",
          ),
        ),
        lockHeartbeatMs: v.pipe(CountSchema, v.description("How often the lock's holder refreshes its heartbeat (a third of lockStaleMs).")),
      }),
      v.description('With DATA_DIR: the background work on session logs (meaningful when persistent is true).'),
    ),
    maxAbsComponent: v.number(),
    metrics: v.array(v.picklist(METRICS)),
    vectorTypes: v.array(v.picklist(VECTOR_TYPES)),
    defaultMetric: v.picklist(METRICS),
    backend: v.pipe(v.picklist(BACKENDS), v.description('The kernel build that answers searches (KERNEL_BUILD).')),
    corsOrigins: v.pipe(v.array(v.string()), v.description('Origins whose web pages may call the service (CORS_ORIGINS); ["*"]: any.')),
    admission: v.pipe(
      v.strictObject({
        maxConnections: CountSchema,
        maxBodiesInFlight: CountSchema,
        maxBodiesInFlightPerToken: CountSchema,
        maxBodyBytesInFlight: CountSchema,
        maxSmallBodiesInFlight: v.pipe(CountSchema, v.description('Bodies announcing at most smallBodyBytes being received at once (a lane of their own).')),
        smallBodyBytes: CountSchema,
        maxBodiesInFlightPerAddress: v.pipe(CountSchema, v.description('Large bodies one client address (IPv6 by its /64) has in flight at once; 0: off.')),
        maxImportsInFlight: CountSchema,
        maxImportsInFlightPerToken: CountSchema,
        maxSessionsPerAddress: CountSchema,
        headersTimeoutMs: CountSchema,
        bodyGraceMs: CountSchema,
        minBodyBytesPerSec: CountSchema,
        idleTimeoutMs: CountSchema,
        socketTimeoutMs: CountSchema,
        maxWasmMemories: CountSchema,
        shutdownDrainMs: CountSchema,
      }),
      v.description(
        'Connections, bodies and imports in flight, sessions per address, timeouts, WebAssembly memories and the shutdown drain time (see the configuration table).',
      ),
    ),
    embedding: v.pipe(
      v.strictObject({
        models: v.array(
          v.strictObject({
            name: v.string(),
            dimensions: CountSchema,
            metric: v.picklist(METRICS),
            maxTokens: v.optional(
              v.pipe(
                CountSchema,
                v.description("Tokens the model reads of a text; the rest is truncated (the builtin model's; an endpoint's model has its own)."),
              ),
            ),
          }),
        ),
        maxTexts: v.pipe(CountSchema, v.description('Texts per POST /embed (MAX_EMBED_TEXTS).')),
        maxTextBytes: v.pipe(CountSchema, v.description('UTF-8 bytes of one text of POST /embed (MAX_EMBED_TEXT_BYTES).')),
        maxBytes: v.pipe(CountSchema, v.description('UTF-8 bytes of all texts of one POST /embed (MAX_EMBED_BYTES).')),
        textsInFlight: v.pipe(CountSchema, v.description('Texts being embedded or waiting, all tokens together; past it 503 EMBEDDING_BUSY.')),
        textsInFlightPerToken: v.pipe(CountSchema, v.description('Texts of one token being embedded or waiting; past it 503 EMBEDDING_BUSY.')),
        threads: v.pipe(CountSchema, v.description('Threads that embed texts (EMBEDDING_THREADS), each holding the model.')),
        endpoint: v.optional(
          v.pipe(
            v.strictObject({
              timeoutMs: v.pipe(CountSchema, v.description('One request to the endpoint at most (EMBEDDING_TIMEOUT_MS).')),
              attempts: v.pipe(CountSchema, v.description('Tries of one request in all (EMBEDDING_ATTEMPTS).')),
              batchTexts: v.pipe(CountSchema, v.description('Texts per request to the endpoint (EMBEDDING_BATCH_TEXTS).')),
            }),
            v.description('With EMBEDDING_URL: the OpenAI-compatible endpoint that embeds the texts (its URL and key are not shown).'),
          ),
        ),
      }),
      v.description('The embedding models the server runs (POST /embed, records with text and no vector, text queries) and their limits.'),
    ),
    kernelThreads: v.pipe(
      CountSchema,
      v.description('Threads that run large searches beside the event loop (KERNEL_THREADS); 1: every search runs on the event loop.'),
    ),
  }),
  v.description('The limits in force on this server (the same numbers bound the request schemas).'),
);

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
