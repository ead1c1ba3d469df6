// The kinds the service names (metrics, vector types, analyzers, kernel
// builds, fsync modes) and the limits fixed by the spec, not configurable.

export type Metric = 'cosine' | 'l2';
export const METRICS = ['cosine', 'l2'] as const;
export const VECTOR_TYPES = ['float32', 'int8'] as const;
export type VectorType = (typeof VECTOR_TYPES)[number];
/** How a session's texts become terms (src/index/text/analyzer.ts); fixed by the first add that names one or carries text. */
export const ANALYZERS = ['standard', 'english'] as const;
export type AnalyzerName = (typeof ANALYZERS)[number];
/** KERNEL_BUILD: which kernel build answers searches. */
export const KERNEL_BUILDS = ['auto', 'simd128', 'relaxed'] as const;
export type KernelBuild = (typeof KERNEL_BUILDS)[number];
/** The builds as sessions, /limits and LocalIndex name them. */
export const BACKENDS = ['wasm-simd128', 'wasm-relaxed-simd'] as const;
export type Backend = (typeof BACKENDS)[number];
/** What a session fixed by an embedding model takes: its dimension and metric; the builtin's window of tokens. */
export interface EmbeddingModelSpec {
  readonly name: string;
  readonly dimensions: number;
  readonly metric: Metric;
  /** Tokens the model reads of a text; the rest is truncated (the builtin's; an endpoint's is its own). */
  readonly maxTokens?: number;
}

/** The builtin embedding model (src/embedding/): its name in the API, and what a session it fixes takes. */
export const BUILTIN_EMBEDDING_MODEL = 'use-lite-512';
/**
 * The models sessions may name, by name: the builtin one, and an endpoint's
 * (EMBEDDING_URL) once a server configured with it registers it. Schemas and
 * session logs read these by reference, so a registered model is known to all.
 */
export const EMBEDDING_MODELS: Record<string, EmbeddingModelSpec> = {
  [BUILTIN_EMBEDDING_MODEL]: { name: BUILTIN_EMBEDDING_MODEL, dimensions: 512, metric: 'cosine', maxTokens: 128 },
};

export type EmbeddingModel = string;
export const EMBEDDING_MODEL_NAMES: string[] = [BUILTIN_EMBEDDING_MODEL];

/** Make an endpoint's model known (a server with EMBEDDING_URL); the same name again must have the same dimension. */
export function registerEmbeddingModel(spec: EmbeddingModelSpec): void {
  const known = EMBEDDING_MODELS[spec.name];
  if (known && (known.dimensions !== spec.dimensions || known.metric !== spec.metric)) {
    throw new Error(`the embedding model ${spec.name} is known with ${known.dimensions} dimensions, not ${spec.dimensions}`);
  }
  if (known) return;
  EMBEDDING_MODELS[spec.name] = spec;
  EMBEDDING_MODEL_NAMES.push(spec.name);
}

export const FSYNC_MODES = ['never', 'always'] as const;
export type FsyncMode = (typeof FSYNC_MODES)[number];

/** With DATA_DIR: bytes of a session log read or copied at once by a reopen or a compaction. */
export const PERSISTENCE_CHUNK_BYTES = 4 * 1024 * 1024;
/**
 * Buffers one reopen, compaction or rewrite holds (PERSISTENCE_JOBS run at
 * once), counted in the memory budget: a chunk read and a chunk copied or read
 * back. A record larger than a chunk gets a buffer of its own, and a
 * compaction keeps copies of rows changed under it (16 MiB at most).
 */
export const PERSISTENCE_JOB_BUFFER_BYTES = 2 * PERSISTENCE_CHUNK_BYTES;

/** Fixed by the spec; not configurable. */
export const SPEC_LIMITS = {
  maxDimensions: 1024,
  minTopK: 1,
  maxTopK: 100,
  defaultTopK: 10,
  minCandidatePool: 1,
  maxCandidatePool: 2048,
  defaultCandidatePool: 100,
  /** mmr.candidates: the exact top rows MMR picks from (defaults and caps as candidatePool). */
  defaultMmrCandidates: 100,
  maxMmrCandidates: 2048,
  /** groupBy.size: hits per group. */
  minGroupSize: 1,
  maxGroupSize: 100,
  defaultGroupSize: 3,
  /** decay: the curve's value at |x - origin| = scale, and the decay's share of the final score. */
  defaultDecayMidpoint: 0.5,
  defaultDecayWeight: 0.5,
  /** UTF-8 bytes of a metadata path a stage reads (groupBy.path, decay.path). */
  maxMetadataPathBytes: 1024,
  defaultMetric: 'cosine' as Metric,
  defaultVectorType: 'float32' as VectorType,
  /**
   * Largest magnitude of one vector component. Bounding it keeps every sum of
   * squares of a 1024-dimension vector finite in float32, so no score is ever
   * Infinity or NaN.
   */
  maxAbsComponent: 1e16,
  /** Nesting of $and/$or/$not in one filter (bounds the recursion a request can cause). */
  maxFilterDepth: 32,
  /**
   * UTF-8 bytes of the longest metadata string (or object's or array's
   * canonical JSON) the filter index keeps as a key; longer ones are keyed by
   * a hash, and filters on them read the few rows under it.
   */
  maxIndexedValueBytes: 256,
  /** A body announcing at most this many bytes is admitted in the small bodies' lane (MAX_SMALL_BODIES_IN_FLIGHT): parsed in well under a ms. */
  smallBodyBytes: 64 * 1024,
  /**
   * Bytes of one POST /mcp body (MAX_BODY_BYTES when lower): it is JSON.parse'd in one piece. Texts parse
   * fast (4 MiB in 2 to 7 ms), metadata objects of 256 keys slowly: 3.3 MiB of them 32 ms, 0.75 MiB 3 ms
   * (bench:mcp's remember with deep+wide metadata held a neighbour 84 ms at 3.5 MiB).
   */
  maxMcpBodyBytes: 1024 * 1024,
  /** Vectors per page of POST /vectors/list. */
  minListLimit: 1,
  maxListLimit: 1000,
  defaultListLimit: 100,
  /** Characters of an opaque list cursor (an orderBy cursor carries the last value listed, a key of at most maxIndexedValueBytes). */
  maxListCursorLength: 1024,
  /** Characters of a metadata field path named by a facet or an orderBy. */
  maxFieldPathLength: 1024,
  /** Values per answer of POST /vectors/facet. */
  minFacetLimit: 1,
  maxFacetLimit: 1000,
  defaultFacetLimit: 10,
  /** Numeric ranges per POST /vectors/facet: each is one more walk of the path's values. */
  maxFacetRanges: 32,
  /** Analyzer of a session's texts until its first text fixes one. */
  defaultAnalyzer: 'standard' as AnalyzerName,
  /** BM25 as Lucene (>= 8) scores it: term-frequency saturation and length normalisation. */
  bm25K1: 1.2,
  bm25B: 0.75,
  /** UTF-8 bytes of one query text (a question, not a document). */
  maxQueryTextBytes: 4096,
  /** UTF-8 bytes of all of a request's query texts: 64 KiB of Cyrillic analyse in ~23 ms (the slowest script), the most a rare re-analysis in the turn can hold the loop. */
  maxQueryTextBytesPerRequest: 64 * 1024,
  /** Hybrid search's fusions: RRF's k, and linear's weight of the vector arm. */
  defaultRrfK: 60,
  maxRrfK: 10_000,
  defaultLinearAlpha: 0.5,
  /** Largest MAX_TEXT_BYTES (it bounds one text's analysis, and a term's count in it). */
  maxTextBytesCap: 1024 * 1024,
  /** Imports of one token at once (a session's writes take turns anyway). */
  maxImportsInFlightPerToken: 1,
  /** The share of MEMORY_BUDGET_BYTES stored data may take; the rest stays for requests in flight, so reads answer when writers have filled theirs. */
  storedShareOfBudget: 0.9,
  /** How often a session's expired records are swept from memory (reads leave them out from the instant they expire). */
  recordSweepIntervalMs: 1000,
} as const;

/** Bytes of MEMORY_BUDGET_BYTES stored data may take (0: no budget). */
export function memoryStoredMaxBytes(memoryBudgetBytes: number): number {
  return Math.floor(memoryBudgetBytes * SPEC_LIMITS.storedShareOfBudget);
}
