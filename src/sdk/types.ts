// The shapes the client returns, written out in plain TypeScript so that
// /sdk.d.ts stands alone (no valibot types). src/sdk/types-check.ts makes the
// build fail if they drift from the response schemas the server is tested
// against (src/schemas/responses.ts); the answers themselves are in
// response-types.ts.

export type Metric = 'cosine' | 'l2';
/** How texts become terms for keyword search (fixed by the first add that names one or carries text). */
export type Analyzer = 'standard' | 'english';
/** The kernel the server and LocalIndex run. */
export type Backend = 'wasm-simd128' | 'wasm-relaxed-simd';

/** Every code the server answers with (src/errors.ts; types-check.ts keeps them equal). */
export type ServerErrorCode =
  | 'UNAUTHORIZED'
  | 'INVALID_TOKEN'
  | 'SESSION_EXPIRED'
  | 'INVALID_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'VALIDATION_ERROR'
  | 'DIMENSION_MISMATCH'
  | 'ZERO_VECTOR'
  | 'BATCH_TOO_LARGE'
  | 'INVALID_CURSOR'
  | 'INVALID_IMPORT'
  | 'METRIC_LOCKED'
  | 'VECTOR_TYPE_LOCKED'
  | 'ANALYZER_LOCKED'
  | 'ANALYZER_CHANGED'
  | 'QUERY_TEXT_EMPTY'
  | 'CAPACITY_EXCEEDED'
  | 'VECTOR_NOT_FOUND'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'PAYLOAD_TOO_LARGE'
  | 'IMPORT_LINE_TOO_LARGE'
  | 'ANSWER_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'HEADERS_TOO_LARGE'
  | 'BAD_REQUEST'
  | 'RATE_LIMITED'
  | 'TOO_MANY_SESSIONS'
  | 'SERVER_AT_CAPACITY'
  | 'INSTANCE_UNAVAILABLE'
  | 'KERNEL_THREAD_FAILED'
  | 'EMBEDDING_BUSY'
  | 'EMBEDDING_LOCKED'
  | 'NO_EMBEDDING_MODEL'
  | 'EMBEDDING_UNAVAILABLE'
  | 'EMBEDDING_UPSTREAM_ERROR'
  | 'DISK_QUOTA_EXCEEDED'
  | 'SESSION_LOG_FULL'
  | 'INTERNAL_ERROR';
/**
 * The SDK's own: NETWORK_ERROR (no answer; `cause` says why), BASE_URL_REQUIRED
 * (no baseUrl where the SDK cannot tell its server), KERNEL_UNAVAILABLE
 * (LocalIndex.load() could not get the kernel), MODEL_UNAVAILABLE
 * (LocalIndex.embed could not get the embedding model's files), HTTP_ERROR (an
 * answer that is not a tempvec error body, e.g. a proxy's).
 */
export type SdkErrorCode = 'NETWORK_ERROR' | 'BASE_URL_REQUIRED' | 'KERNEL_UNAVAILABLE' | 'MODEL_UNAVAILABLE' | 'HTTP_ERROR';
export type TempvecErrorCode = ServerErrorCode | SdkErrorCode;
/** float32: exact scan; int8: per-vector-scaled int8 codes scanned, the best candidatePool re-ranked in float32. */
export type VectorType = 'float32' | 'int8';
export type Metadata = Record<string, unknown>;
/** Plain arrays, Float32Arrays (or any array-like of numbers) are all accepted as vectors. */
export type Vector = ArrayLike<number>;

export interface SessionConfig {
  dimensions: number | null;
  metric: Metric | null;
  vectorType: VectorType;
  backend: Backend;
  /** null until an add names one or carries text. */
  analyzer: Analyzer | null;
  /** The model that embeds the session's texts; null for a session whose vectors were given. */
  embedding: string | null;
}

export interface Session {
  sessionId: string;
  createdAt: string;
  updatedAt: string;
  lastAccessedAt: string;
  expiresAt: string;
  ttlMsRemaining: number;
  initialized: boolean;
  vectorCount: number;
  maxVectors: number;
  config: SessionConfig;
}

export interface Bounds {
  min: number;
  max: number;
  default: number;
}

export interface Limits {
  maxDimensions: number;
  maxVectorsPerSession: number;
  maxSessions: number;
  sessionTtlMs: number;
  topK: Bounds;
  candidatePool: Bounds;
  /** The search stages: mmr.candidates, groupBy.size, decay's defaults, a stage path's UTF-8 bytes. */
  stages: { mmrCandidates: Bounds; groupSize: Bounds; decay: { defaultMidpoint: number; defaultWeight: number }; maxPathBytes: number };
  batch: { addMany: number; getMany: number; deleteMany: number; searchMany: number };
  maxIdLength: number;
  maxMetadataBytes: number;
  maxTextBytes: number;
  /** Per-record TTL: the longest ttlMs, and how often expired records' memory is freed; absent from servers before it. */
  recordTtl?: { maxTtlMs: number; sweepIntervalMs: number };
  /** Keyword and hybrid search: analyzers, query text limit, BM25 parameters, fusion defaults. */
  text: {
    analyzers: Analyzer[];
    defaultAnalyzer: Analyzer;
    maxQueryTextBytes: number;
    /** UTF-8 bytes of all of one request's query texts. */
    maxQueryTextBytesPerRequest: number;
    bm25: { k1: number; b: number };
    fusion: { defaultMethod: 'rrf'; rrfK: Bounds; defaultAlpha: number };
  };
  maxBodyBytes: number;
  maxImportBytes: number;
  maxAnswerBytes: number;
  /** POST /mcp's body and tool-answer caps; absent from servers before it. */
  mcp?: { maxBodyBytes: number; maxAnswerBytes: number };
  list: Bounds;
  /** POST /vectors/facet: values per answer, numeric ranges per request; absent from servers before it. */
  facet?: { limit: Bounds; maxRanges: number };
  /** Characters of the metadata path of a facet or an orderBy; absent from servers before it. */
  maxFieldPathLength?: number;
  maxJsonDepth: number;
  maxMetadataKeys: number;
  maxFilterKeys: number;
  /** Nodes of one filter (each field condition, each $in/$nin element, each $and/$or/$not and clause); absent from servers before it. */
  maxFilterNodes?: number;
  maxIndexedValueBytes: number;
  rateLimits: { tokensPerMinutePerAddress: number; requestsPerSecondPerToken: number; requestBurstPerToken: number };
  memoryBudgetBytes: number;
  /** The most of memoryBudgetBytes stored data may take (writes past it get 503); absent from servers before it. */
  memoryStoredMaxBytes?: number;
  persistent: boolean;
  /** With DATA_DIR: session logs reopened, compacted or rewritten at once, and the bytes of buffers each holds. */
  persistence: { jobs: number; bufferBytesPerJob: number; dataDirMaxBytes: number; maxSessionLogBytes: number; lockStaleMs: number; lockHeartbeatMs: number };
  maxAbsComponent: number;
  metrics: Metric[];
  vectorTypes: VectorType[];
  defaultMetric: Metric;
  backend: Backend;
  /** Origins whose pages may call the service; ['*']: any. */
  corsOrigins: string[];
  /** Connections, bodies in flight, timeouts, WebAssembly memories, shutdown drain time. */
  admission: {
    maxConnections: number;
    maxBodiesInFlight: number;
    maxBodiesInFlightPerToken: number;
    maxBodyBytesInFlight: number;
    /** Bodies announcing at most smallBodyBytes, in a lane of their own. */
    maxSmallBodiesInFlight?: number;
    smallBodyBytes?: number;
    /** Large bodies one client address (IPv6 by /64) has in flight; 0: off. */
    maxBodiesInFlightPerAddress?: number;
    /** Imports being read or written at once, in all and per token. */
    maxImportsInFlight?: number;
    maxImportsInFlightPerToken?: number;
    /** Live sessions one client address may hold (IPv6 by /64); 0: off. */
    maxSessionsPerAddress?: number;
    headersTimeoutMs: number;
    bodyGraceMs: number;
    minBodyBytesPerSec: number;
    idleTimeoutMs: number;
    socketTimeoutMs: number;
    maxWasmMemories: number;
    shutdownDrainMs: number;
  };
  /** Threads that run large searches beside the event loop; 1: all on the event loop. */
  kernelThreads: number;
  /** The embedding models the server runs (POST /embed, text records and queries) and their limits. */
  embedding: {
    models: { name: string; dimensions: number; metric: Metric; maxTokens?: number }[];
    maxTexts: number;
    maxTextBytes: number;
    maxBytes: number;
    textsInFlight: number;
    textsInFlightPerToken: number;
    threads: number;
    /** With EMBEDDING_URL: the OpenAI-compatible endpoint's request bounds. */
    endpoint?: { timeoutMs: number; attempts: number; batchTexts: number };
  };
}

/** Server-side timings of one request, in milliseconds (counts for resultCount and queryCount). */
export type Metrics = { requestLatencyMs: number } & Record<string, number>;

/** A record's ttl and expiry, on a record written with ttlMs. */
export interface RecordExpiry {
  /** The ttl of its last write. */
  ttlMs?: number;
  /** ISO 8601: ttlMs after its last write or touch; from then on it is gone from every read. */
  expiresAt?: string;
}

export interface StoredVector extends RecordExpiry {
  id: string;
  vector: number[];
  metadata: Metadata;
  /** With includeText: the vector's text, null when it has none. */
  text?: string | null;
}

export interface SearchHit {
  id: string;
  /**
   * Vector search: cosine similarity (higher is nearer), or Euclidean distance for l2 (lower is nearer).
   * Keyword search: BM25. Hybrid search: the fused score (higher is better).
   */
  score: number;
  metadata?: Metadata;
  /** With includeText: the vector's text, null when it has none. */
  text?: string | null;
  /** Hybrid search: each arm's score and 1-based rank; null where that arm did not rank the vector. */
  vectorScore?: number | null;
  vectorRank?: number | null;
  textScore?: number | null;
  textRank?: number | null;
  /** With mmr: the 1-based order in which MMR picked the hit (the order of the list). */
  mmrRank?: number;
}

/** With groupBy: the vectors sharing one value at the path, best first. */
export interface SearchGroup {
  value: string | number | boolean | null;
  hits: SearchHit[];
}

/** Maximal marginal relevance over the exact top `candidates` (default 100, at most 2048): diversity 0 is a plain search. */
export interface Mmr {
  diversity: number;
  candidates?: number;
}

/** The topK groups by the scalar at `path`, each with its best `size` hits (default 3). */
export interface GroupBy {
  path: string;
  size?: number;
}

/** score = (1 - weight) x similarity + weight x decay of |value at path - origin| (numbers, or ISO-8601 dates with scale in ms). */
export interface Decay {
  path: string;
  origin: number | string;
  scale: number;
  midpoint?: number;
  curve?: 'exp' | 'gauss' | 'linear';
  weight?: number;
}

export interface SearchStats {
  exact: boolean;
  metric: Metric | null;
  topK: number;
  candidatePool: number;
  matched: number;
  scanned: number;
  /** Keyword and hybrid search: vectors whose text holds a query term, among those the filter passed. */
  textMatched?: number;
}

/** How a hybrid search fuses its vector and keyword rankings; rrf (k 60) by default. */
export type Fusion = { method: 'rrf'; k?: number } | { method: 'linear'; alpha?: number };

export interface SearchOptions {
  topK?: number;
  candidatePool?: number;
  includeMetadata?: boolean;
  includeText?: boolean;
  filter?: Metadata;
  /** Leave out results worse than this (cosine: score below it; l2: distance above it; BM25 or fused score below it). */
  scoreThreshold?: number;
  /** Hybrid search: fuse the vector ranking with the BM25 ranking of this query text. */
  text?: string;
  fusion?: Fusion;
  /** Diversify the hits (not with groupBy). */
  mmr?: Mmr;
  /** Blend each vector's similarity with a decay of a metadata value (before mmr or groupBy). */
  decay?: Decay;
}

/** A search answered in groups (`groups` instead of `results`). */
export interface GroupedSearchOptions extends SearchOptions {
  groupBy: GroupBy;
}

/** Options of a batch of searches: `texts` (one per query) make them hybrid. */
export interface SearchManyOptions extends Omit<SearchOptions, 'text'> {
  texts?: string[];
}

export interface GroupedSearchManyOptions extends SearchManyOptions {
  groupBy: GroupBy;
}

/** Options of a keyword search (no query vector). */
export type TextSearchOptions = Omit<SearchOptions, 'text' | 'fusion'>;

export type VectorEncoding = 'numbers' | 'base64';

export interface ListOptions {
  filter?: Metadata;
  /** 1 to 1000, default 100. */
  limit?: number;
  /** nextCursor of the previous page (of a listing with the same orderBy). */
  cursor?: string;
  /**
   * Order by a metadata value instead of insertion order: numbers, then strings
   * (by code point), ties in insertion order, rows without such a value last;
   * direction defaults to asc.
   */
  orderBy?: { path: string; direction?: 'asc' | 'desc' };
  includeVectors?: boolean;
  includeMetadata?: boolean;
  includeText?: boolean;
  vectorEncoding?: VectorEncoding;
}

/** A numeric bucket of a facet: values x with gte <= x < lt (a bound left out is open). */
export interface FacetRange {
  gte?: number;
  lt?: number;
}

export interface FacetOptions {
  filter?: Metadata;
  /** Values answered, 1 to 1000, default 10. */
  limit?: number;
  ranges?: FacetRange[];
}

export interface ListedVector extends RecordExpiry {
  id: string;
  /** number[] or, with vectorEncoding base64, a base64 string. */
  vector?: number[] | string;
  metadata?: Metadata;
  text?: string | null;
}

export interface VectorRecord {
  id: string;
  vector: Vector;
  metadata?: Metadata;
  /** The chunk's text: indexed for keyword search, returned with includeText. */
  text?: string;
  /** Per-record TTL: expires this many ms after this write (or a touch); none: never (a replace without it clears an earlier one). */
  ttlMs?: number;
}

/** Options of get and getMany. */
export interface ReadOptions {
  includeText?: boolean;
}

/** Fix the session's configuration on its first add (checked against it afterwards). */
export interface SessionOptions {
  dimensions?: number;
  metric?: Metric;
  vectorType?: VectorType;
  /** Fixed by the first add that names one or carries text. */
  analyzer?: Analyzer;
  /** The embedding model (use-lite-512, or the server's EMBEDDING_MODEL): fixed by the first add that embeds or names it; sets 512 dimensions and cosine. */
  embedding?: EmbeddingModel;
}

/** The builtin embedding model, or the model of a server's OpenAI-compatible endpoint (its EMBEDDING_MODEL; the server only). */
export type EmbeddingModel = 'use-lite-512' | (string & {});

/** A record stored with the embedding of its text (the text is kept for keyword search too). */
export interface TextRecord {
  id: string;
  text: string;
  vector?: undefined;
  metadata?: Metadata;
  ttlMs?: number;
}

/** A query by meaning: the embedding of `text` is the query vector. */
export interface TextQuery {
  text: string;
}

/** Vectors of texts (client.embed, LocalIndex.embed): unit length, `dimensions` floats each, in the texts' order. */
export interface EmbedResult {
  /** The model's name: use-lite-512. */
  model: string;
  dimensions: number;
  vectors: Float32Array[];
}

/** How LocalIndex loaded the embedding model on its first embed. */
export interface EmbedderLoad {
  /** The manifest's URL, or the files read in Node. */
  from: string;
  /** Bytes fetched or read (the encoder kernel, the weights, the vocabulary). */
  bytes: number;
  /** Milliseconds from the first embed to the files fetched (or read) and the kernel compiled. */
  filesMs: number;
  /** Milliseconds from the first embed to a ready encoder: filesMs, then parsing and copying the weights in. */
  ms: number;
}
