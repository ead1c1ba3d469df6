// The configuration: its fields, and the environment variable, default and
// README line of each configurable one (the README table is generated from
// CONFIG_VARIABLES by `npm run docs`).
import { defaultKernelThreads, defaultMemoryBudget } from './machine-defaults.js';
import { type FsyncMode, type KernelBuild, PERSISTENCE_JOB_BUFFER_BYTES } from './spec-limits.js';

const MiB = 1024 * 1024;

/** What one embedding thread holds, rounded (src/embedding/embedding-pool.ts counts it exactly). */
const EMBEDDING_THREAD_MIB = 60;

export interface Config {
  port: number;
  host: string;
  sessionTtlMs: number;
  /** How often expired sessions are swept; derived from the TTL unless set. */
  sweepIntervalMs: number;
  /** How long the token of an expired session still answers SESSION_EXPIRED. */
  expiredTokenMemoryMs: number;
  maxVectorsPerSession: number;
  maxSessions: number;
  maxAddManyBatch: number;
  maxGetManyBatch: number;
  maxDeleteManyBatch: number;
  maxSearchManyBatch: number;
  maxIdLength: number;
  maxMetadataBytes: number;
  maxTextBytes: number;
  /** Longest ttlMs of a record (per-record TTL). */
  maxRecordTtlMs: number;
  maxBodyBytes: number;
  maxJsonDepth: number;
  maxMetadataKeys: number;
  maxFilterKeys: number;
  maxFilterNodes: number;
  tokenRatePerMin: number;
  requestRatePerSec: number;
  memoryBudgetBytes: number;
  dataDir: string;
  fsync: FsyncMode;
  /** `*`, or a comma-separated list of origins (src/http/cors.ts). */
  corsOrigins: string;
  instanceId: string;
  trustProxy: number;
  maxImportBytes: number;
  maxConnections: number;
  maxBodiesInFlight: number;
  maxBodiesInFlightPerToken: number;
  maxBodyBytesInFlight: number;
  maxSmallBodiesInFlight: number;
  maxBodiesInFlightPerAddress: number;
  maxImportsInFlight: number;
  maxSessionsPerAddress: number;
  /** Bearer token GET /metrics requires; '' leaves it open. */
  metricsToken: string;
  metricsWindowMs: number;
  headersTimeoutMs: number;
  bodyGraceMs: number;
  minBodyBytesPerSec: number;
  idleTimeoutMs: number;
  socketTimeoutMs: number;
  maxWasmMemories: number;
  shutdownDrainMs: number;
  maxAnswerBytes: number;
  maxMcpAnswerBytes: number;
  kernelThreads: number;
  persistenceJobs: number;
  /** With DATA_DIR: bytes of all files in it at most (0 in CONFIG_VARIABLES: derived at start, defaultDataDirMaxBytes). */
  dataDirMaxBytes: number;
  maxSessionLogBytes: number;
  lockStaleMs: number;
  kernelBuild: KernelBuild;
  embeddingThreads: number;
  /** 1: load the model on the embedding threads at start; 0: on first use. */
  embeddingPreload: number;
  maxEmbedTexts: number;
  maxEmbedTextBytes: number;
  maxEmbedBytes: number;
  /** Texts being embedded or waiting, all tokens together: EMBEDDING_IN_FLIGHT_TOKENS times the per-token cap (published in /limits). */
  embeddingTextsInFlight: number;
  embeddingTextsInFlightPerToken: number;
  /** An OpenAI-compatible /v1/embeddings URL: the server's model is then that endpoint's ('' : the builtin model). */
  embeddingUrl: string;
  embeddingModel: string;
  /** Sent as a bearer token to the endpoint only; never in /limits, errors or logs. */
  embeddingApiKey: string;
  embeddingDimensions: number;
  embeddingTimeoutMs: number;
  embeddingAttempts: number;
  embeddingBatchTexts: number;
}

/** name in the environment, default (a function where it is read from the machine: by loadConfig, not at import), one-line description (README table). */
export const CONFIG_VARIABLES = [
  ['PORT', 'port', 3000, 'TCP port the server listens on'],
  ['HOST', 'host', '127.0.0.1', 'address the server binds to'],
  ['SESSION_TTL_MS', 'sessionTtlMs', 1_800_000, 'inactivity time after which a session expires'],
  ['MAX_VECTORS_PER_SESSION', 'maxVectorsPerSession', 50_000, 'capacity of one index (maxVectors)'],
  ['MAX_SESSIONS', 'maxSessions', 10_000, 'live sessions; POST /token answers 503 beyond it'],
  ['MAX_ADD_MANY_BATCH', 'maxAddManyBatch', 1000, 'vectors per POST /vectors/add-many'],
  ['MAX_GET_MANY_BATCH', 'maxGetManyBatch', 1000, 'ids per POST /vectors/get-many'],
  ['MAX_DELETE_MANY_BATCH', 'maxDeleteManyBatch', 1000, 'ids per POST /vectors/delete-many'],
  ['MAX_SEARCH_MANY_BATCH', 'maxSearchManyBatch', 64, 'query vectors per POST /search-many'],
  ['MAX_ID_LENGTH', 'maxIdLength', 256, 'characters in a vector id'],
  ['MAX_METADATA_BYTES', 'maxMetadataBytes', 8192, "UTF-8 bytes of one vector's metadata as JSON"],
  ['MAX_TEXT_BYTES', 'maxTextBytes', 32_768, "UTF-8 bytes of one vector's text (searched by keywords; at most 1 MiB)"],
  ['MAX_RECORD_TTL_MS', 'maxRecordTtlMs', 604_800_000, 'longest ttlMs of a record (per-record TTL; a record never outlives its session)'],
  ['MAX_BODY_BYTES', 'maxBodyBytes', 32 * 1024 * 1024, 'bytes of one request body'],
  ['MAX_JSON_DEPTH', 'maxJsonDepth', 8, 'nesting depth of one metadata object or filter (the object itself is 1)'],
  ['MAX_METADATA_KEYS', 'maxMetadataKeys', 256, "keys of one vector's metadata, nested objects' keys included"],
  ['MAX_FILTER_KEYS', 'maxFilterKeys', 64, "keys of one search filter, nested objects' keys included"],
  [
    'MAX_FILTER_NODES',
    'maxFilterNodes',
    1024,
    'nodes of one filter: each field condition, each element of $in/$nin, each $and/$or/$not and each of their clauses',
  ],
  ['TOKEN_RATE_PER_MIN', 'tokenRatePerMin', 60, 'POST /token per client address per minute (burst of the same size); 0 turns it off'],
  ['REQUEST_RATE_PER_SEC', 'requestRatePerSec', 500, 'requests per token per second, with a burst of twice that; 0 turns it off'],
  [
    'MEMORY_BUDGET_BYTES',
    'memoryBudgetBytes',
    defaultMemoryBudget,
    "bytes callers can make the server hold: sessions' linear memories, their metadata stores (off the JS heap) and the JS heap of their ids, bodies and answers in flight (default a quarter of the machine's memory); 0 turns it off",
  ],
  ['DATA_DIR', 'dataDir', '', 'directory where sessions are persisted; empty keeps them in memory only'],
  [
    'FSYNC',
    'fsync',
    'never',
    'with DATA_DIR: `always` acknowledges a change only once fdatasync has it on disk (one per session per batch of changes in flight); `never` once the OS has it',
  ],
  [
    'CORS_ORIGINS',
    'corsOrigins',
    '*',
    'origins whose web pages may call the service: `*` (any: tokens are bearer headers, not cookies), or a comma-separated list such as `https://app.example,http://localhost:8080`',
  ],
  [
    'INSTANCE_ID',
    'instanceId',
    '',
    'name of this instance behind a proxy (`[a-z0-9]{1,16}`): tokens become `<id>.<secret>` and every response carries `x-tempvec-instance`; empty: plain tokens',
  ],
  [
    'TRUST_PROXY',
    'trustProxy',
    0,
    "1: take the client address from `X-Forwarded-For` (set it only behind a proxy that overwrites that header, as the cluster's nginx does); 0: the socket's address",
  ],
  [
    'MAX_IMPORT_BYTES',
    'maxImportBytes',
    512 * 1024 * 1024,
    'bytes of one POST /vectors/import body (NDJSON, read as it arrives; a full 50k x 1024 session exports to about 275 MiB as base64)',
  ],
  ['MAX_CONNECTIONS', 'maxConnections', 10_000, 'open TCP connections; past it new ones are closed at once (server.maxConnections)'],
  [
    'MAX_BODIES_IN_FLIGHT',
    'maxBodiesInFlight',
    256,
    'request bodies announcing more than 64 KiB (or chunked) being received at once; past it 503 `SERVER_AT_CAPACITY`',
  ],
  [
    'MAX_SMALL_BODIES_IN_FLIGHT',
    'maxSmallBodiesInFlight',
    1024,
    'request bodies announcing at most 64 KiB being received at once, a lane of their own (large bodies held open cannot lock them out); past it 503 `SERVER_AT_CAPACITY`',
  ],
  [
    'MAX_BODIES_IN_FLIGHT_PER_ADDRESS',
    'maxBodiesInFlightPerAddress',
    64,
    'request bodies announcing more than 64 KiB (or chunked) one client address (IPv6 by its /64) has in flight at once; past it 429 `RATE_LIMITED`; 0 turns it off',
  ],
  ['MAX_BODIES_IN_FLIGHT_PER_TOKEN', 'maxBodiesInFlightPerToken', 8, 'request bodies one token has in flight at once; past it 429 `RATE_LIMITED`'],
  [
    'MAX_BODY_BYTES_IN_FLIGHT',
    'maxBodyBytesInFlight',
    512 * 1024 * 1024,
    'bytes of the large request bodies being received, counted as they arrive (small ones are bounded by their count); past it 503 `SERVER_AT_CAPACITY`',
  ],
  [
    'MAX_IMPORTS_IN_FLIGHT',
    'maxImportsInFlight',
    4,
    'POST /vectors/import requests being read or written at once (one per token); past it 503 `SERVER_AT_CAPACITY` (429 `RATE_LIMITED` for a second one of a token)',
  ],
  [
    'MAX_SESSIONS_PER_ADDRESS',
    'maxSessionsPerAddress',
    100,
    'live sessions created from one client address (IPv6 by its /64; dormant ones on disk included); past it POST /token answers 429 `TOO_MANY_SESSIONS`; 0 turns it off',
  ],
  [
    'METRICS_TOKEN',
    'metricsToken',
    '',
    'when set, GET /metrics answers 401 unless sent `Authorization: Bearer <METRICS_TOKEN>`; empty leaves it open (keep it on an internal listener then)',
  ],
  [
    'METRICS_WINDOW_MS',
    'metricsWindowMs',
    60_000,
    "window of /metrics' event-loop delay gauges (max and p99 over the last this many ms, in 1 s slices; at least the scrape interval): a scrape resets nothing",
  ],
  ['HEADERS_TIMEOUT_MS', 'headersTimeoutMs', 10_000, "time to send a request's headers; past it 408 `REQUEST_TIMEOUT` and the connection is closed"],
  [
    'MIN_BODY_BYTES_PER_SEC',
    'minBodyBytesPerSec',
    16_384,
    'a body that has arrived slower than this after its first 10 s is cut with 408 `REQUEST_TIMEOUT`; idle keep-alive connections close after 5 s, silent ones after 60 s (all in /limits)',
  ],
  [
    'MAX_WASM_MEMORIES',
    'maxWasmMemories',
    12_000,
    'WebAssembly memories the process holds (V8 reserves about 10 GiB of address space for each and ran out at 13,090); a session needing one past it gets 503 `SERVER_AT_CAPACITY`',
  ],
  [
    'SHUTDOWN_DRAIN_MS',
    'shutdownDrainMs',
    10_000,
    'after SIGTERM: time answers in flight get to finish sending before the remaining connections are closed and the process exits 0',
  ],
  [
    'KERNEL_THREADS',
    'kernelThreads',
    defaultKernelThreads,
    'threads that run large searches beside the event loop (work queued per session, served in turn); 1 runs every search on the event loop',
  ],
  [
    'EMBEDDING_THREADS',
    'embeddingThreads',
    defaultKernelThreads,
    `threads that embed texts with the builtin model, off the event loop (work queued per token, served in turn); each holds the model, about ${EMBEDDING_THREAD_MIB} MiB counted in the memory budget`,
  ],
  ['EMBEDDING_PRELOAD', 'embeddingPreload', 0, '1: load the embedding model on its threads at start; 0: on first use'],
  ['MAX_EMBED_TEXTS', 'maxEmbedTexts', 256, 'texts per POST /embed'],
  [
    'MAX_EMBED_TEXT_BYTES',
    'maxEmbedTextBytes',
    32_768,
    "UTF-8 bytes of one text of POST /embed (the model reads its first 128 tokens; the rest is truncated); a record's text is bounded by MAX_TEXT_BYTES",
  ],
  ['MAX_EMBED_BYTES', 'maxEmbedBytes', 1024 * 1024, 'UTF-8 bytes of all the texts of one POST /embed'],
  [
    'EMBEDDING_TEXTS_IN_FLIGHT_PER_TOKEN',
    'embeddingTextsInFlightPerToken',
    2048,
    'texts of one token being embedded or waiting (raised to MAX_ADD_MANY_BATCH or MAX_EMBED_TEXTS when lower; all tokens together: 8 times this, /limits `embedding`); past either 503 `EMBEDDING_BUSY`',
  ],
  [
    'EMBEDDING_URL',
    'embeddingUrl',
    '',
    "an OpenAI-compatible embeddings endpoint (Ollama, vLLM, TEI, OpenAI: its `/v1/embeddings` URL); set, it embeds the server's texts instead of the builtin model, under the name EMBEDDING_MODEL (needs EMBEDDING_MODEL and EMBEDDING_DIMENSIONS)",
  ],
  ['EMBEDDING_MODEL', 'embeddingModel', '', 'with EMBEDDING_URL: the model sent to the endpoint, and its name in sessions, `/embed` and `/limits`'],
  ['EMBEDDING_API_KEY', 'embeddingApiKey', '', 'with EMBEDDING_URL: sent as `Authorization: Bearer` to the endpoint only (never in `/limits`, errors or logs)'],
  [
    'EMBEDDING_DIMENSIONS',
    'embeddingDimensions',
    0,
    "with EMBEDDING_URL: the endpoint model's dimension (an answer of another length is refused with 502 `EMBEDDING_UPSTREAM_ERROR`)",
  ],
  ['EMBEDDING_TIMEOUT_MS', 'embeddingTimeoutMs', 10_000, 'with EMBEDDING_URL: one request to the endpoint, its whole answer included, at most'],
  [
    'EMBEDDING_ATTEMPTS',
    'embeddingAttempts',
    3,
    "with EMBEDDING_URL: tries of one request in all (1 to 10); a timeout, a network error, a 429 or a 5xx is tried again after 250 ms, doubled each time (a 429's `Retry-After` up to 5 s); then 503 `EMBEDDING_UNAVAILABLE`",
  ],
  [
    'EMBEDDING_BATCH_TEXTS',
    'embeddingBatchTexts',
    64,
    "with EMBEDDING_URL: texts per request to the endpoint (a call's texts go in requests of this many, one at a time)",
  ],
  [
    'PERSISTENCE_JOBS',
    'persistenceJobs',
    2,
    `with DATA_DIR: session logs reopened, compacted or rewritten at once (each holds about ${PERSISTENCE_JOB_BUFFER_BYTES / MiB} MiB of buffers, counted in the memory budget; /limits \`persistence\`); the rest wait their turn`,
  ],
  [
    'DATA_DIR_MAX_BYTES',
    'dataDirMaxBytes',
    0,
    "with DATA_DIR: bytes of all session logs in it at most (/limits `persistence`); a change past it is refused with 507 DISK_QUOTA_EXCEEDED, compaction still runs to make room; 0 derives it at start: the bytes already in DATA_DIR plus 90% of its file system's free space",
  ],
  [
    'MAX_SESSION_LOG_BYTES',
    'maxSessionLogBytes',
    1024 * MiB,
    "with DATA_DIR: bytes of one session's log at most (a full session of 50,000 x 1024 float32 holds about 205 MB of vectors, and a log is compacted once it holds twice its live data); a change past it is refused with 507 SESSION_LOG_FULL",
  ],
  [
    'LOCK_STALE_MS',
    'lockStaleMs',
    10_000,
    "with DATA_DIR: the DATA_DIR lock's holder refreshes its heartbeat (the lock file's mtime) every third of this; a lock whose heartbeat is older is taken over by a new server (a new container on the same volume), one of a dead process on this host at once (/limits `persistence`); at least 2000",
  ],
  [
    'KERNEL_BUILD',
    'kernelBuild',
    'auto',
    'the kernel build that answers searches (/limits `backend`): `simd128` runs everywhere; `relaxed` fuses each multiply-add (relaxed SIMD: Node 22 or later, Node 20 only with `--experimental-wasm-relaxed-simd`; elsewhere the server refuses to start); `auto` is `simd128`, as the relaxed build measured slower on AMD Zen (docs/experiments/2026-11-26-relaxed-build-shipped.md)',
  ],
  [
    'MAX_ANSWER_BYTES',
    'maxAnswerBytes',
    32 * 1024 * 1024,
    'bytes of one answer of search, search-many, get-many or list (estimated before it is written; larger ones are streamed in pieces); past it 400 ANSWER_TOO_LARGE',
  ],
  [
    'MAX_MCP_ANSWER_BYTES',
    'maxMcpAnswerBytes',
    MiB,
    'bytes of one answer of the MCP tools recall and list_memories, structured and text together (estimated before it is made; it is written in one piece); past it the tool error ANSWER_TOO_LARGE',
  ],
] as const satisfies readonly (readonly [string, keyof Config, number | string | (() => number), string])[];

/** README wording of defaults that depend on the machine (the README table must not). */
export const MACHINE_DEPENDENT_DEFAULTS: Partial<Record<(typeof CONFIG_VARIABLES)[number][0], string>> = {
  MEMORY_BUDGET_BYTES: "a quarter of the machine's memory",
  KERNEL_THREADS: "the machine's available parallelism",
  EMBEDDING_THREADS: "the machine's available parallelism",
  DATA_DIR_MAX_BYTES: "0: the bytes in DATA_DIR plus 90% of its file system's free space, at start",
};
