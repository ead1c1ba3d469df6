// GET /limits' body (and /sdk's Limits): every limit in force, each described
// for the OpenAPI document; the numbers are the ones the request schemas enforce.
import * as v from 'valibot';
import { ANALYZERS, BACKENDS, METRICS, SPEC_LIMITS, VECTOR_TYPES } from '../config.js';
import { CountSchema } from './envelope.js';

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
