// The index's data types: what goes in (records, options), what comes out
// (stored and listed vectors, hits, stats, exports) and the plans between.
// Types only: every module of src/index and its callers take them from here.
import type { AnalyzerName, EmbeddingModel, Metric, VectorType } from '../config.js';
import type { PoolExecutor } from '../kernel/executor.js';
import type { Slices } from '../limits/slices.js';
import type { Filter, Metadata } from './filter.js';
import type { JsonText } from './json-size.js';
import type { MetadataJson, TextJson } from './metadata/metadata-json.js';
import type { EntryCount } from './metadata/metadata-index.js';
import type { OrderBy } from './order-cursor.js';
import type { Fusion } from './text/fusion.js';
import type { PreparedText } from './text/text-store.js';
import type { RowTtl } from './row-expiry.js';

export interface IndexConfig {
  dimensions: number | null;
  metric: Metric | null;
  vectorType: VectorType;
  /** The analyzer of the texts, fixed by the first add that carries one (null until then). */
  analyzer: AnalyzerName | null;
  /** The model that embeds the session's texts, fixed by its first add that embeds or names one (null: vectors given by the caller). */
  embedding: EmbeddingModel | null;
}

export interface VectorInput {
  id: string;
  /** Absent only in a request whose texts are still to be embedded (the server embeds them before planning; planUpsert refuses one). */
  vector?: ArrayLike<number>;
  metadata?: Metadata;
  /** Text searched by keywords (BM25); at most maxTextBytes of UTF-8. */
  text?: string;
  /** Per-record TTL: the record expires ttlMs after this write (none: it never does, and a replace clears an earlier ttl). */
  ttlMs?: number;
  /** With ttlMs, the instant it expires instead (ms since the epoch; an import's, a log's replay): at most ttlMs after the write. */
  expiresAt?: number;
}

/** A record's ttl and expiry, on the vectors get, list and export give (absent for a record without one). */
export interface RecordTtl {
  ttlMs?: number;
  /** ms since the epoch. */
  expiresAt?: number;
}

export interface StoredVector extends RecordTtl {
  id: string;
  vector: number[];
  metadata: MetadataJson;
  /** Present when the vector has a text. */
  text?: TextJson;
}

export interface UpsertOptions {
  dimensions?: number;
  metric?: Metric;
  vectorType?: VectorType;
  /** The analyzer of the session's texts; fixed by the first add that names one or carries a text (default standard). */
  analyzer?: AnalyzerName;
  /** The embedding model the add names; it fixes the session's, with its dimension and metric. */
  embedding?: EmbeddingModel;
  /** The model that embedded the texts of the add's records without a vector (they must be the session's). */
  embeddedWith?: EmbeddingModel;
  /** The records' texts analysed ahead (prepareText), used when the analyzer is still the one they were made with. */
  preparedTexts?: PreparedTexts;
  /** The records' metadata measured ahead (measureMetadata), one entry a record. */
  preparedMetadata?: PreparedMetadata;
  /** JSON Pointer of record i in the request, for error details. */
  pathOf?: (i: number) => string;
  /** The time of the write, from which each record's ttlMs runs (default: the index's clock when planned). */
  writtenAt?: number;
}

/** Metadata of an upsert's records as JSON text (null for none or {}) and the filter-index entries each lists, made before its write turn (pure: the same for any index). */
export interface PreparedMetadata {
  json: (JsonText | null)[];
  counts: (EntryCount | null)[];
}

/** Texts of an upsert's records analysed before its write turn (the server does it in slices); null where a record has none. */
export interface PreparedTexts {
  readonly analyzer: AnalyzerName;
  readonly texts: readonly (PreparedText | null)[];
}

/**
 * A validated batch, ready to write. `vectors` may be the caller's own
 * Float32Arrays: apply the plan before they can change (same tick).
 */
export interface UpsertPlan {
  readonly records: VectorInput[];
  readonly vectors: Float32Array[];
  readonly dimensions: number;
  readonly metric: Metric;
  readonly vectorType: VectorType;
  readonly rowsNeeded: number;
  readonly version: number;
  /** Each record's metadata as JSON text; null for none ({}). */
  readonly metadataJson: (JsonText | null)[];
  /** The most JS heap the batch can add: new ids (heap-size.ts). */
  readonly heapBytesAdded: number;
  /** The most bytes the metadata store can grow by, as allocated: each of its typed arrays' next length projected (MetadataStore.growthUpper). */
  readonly metadataBytesAdded: number;
  /** Each record's text, checked and analysed; null for none. */
  readonly texts: (PreparedText | null)[];
  /** The analyzer the session has once the plan is applied. */
  readonly analyzer: AnalyzerName | null;
  /** The embedding model the session has once the plan is applied. */
  readonly embedding: EmbeddingModel | null;
  /** The most bytes the text store (texts, dictionary, postings) can grow by. */
  readonly textBytesAdded: number;
  /** Each record's ttl and expiry (null: none); null when no record has one. */
  readonly ttls: (RowTtl | null)[] | null;
}

export interface UpsertResult {
  added: number;
  replaced: number;
}

export interface SearchOptions {
  topK?: number;
  candidatePool?: number;
  filter?: Filter;
  includeMetadata?: boolean;
  /**
   * Leave out results worse than this: cosine keeps score >= it, l2 keeps
   * distance <= it; a keyword search keeps BM25 >= it, a hybrid one the fused score >= it.
   */
  scoreThreshold?: number;
  /** JSON Pointer of query j in the request, for error details. */
  pathOf?: (j: number) => string;
  /**
   * Keyword queries (BM25 over the texts): alone (no query vectors), one
   * search per text; beside query vectors, one per vector, fused with it (hybrid).
   */
  queryTexts?: string[];
  /** How a hybrid search fuses its arms (both required): rrf (default, k 60) or linear (alpha 0.5). */
  fusion?: Fusion;
  includeText?: boolean;
  /** JSON Pointer of query text j in the request, for error details. */
  textPathOf?: (j: number) => string;
  /** queryTexts analysed ahead (the server does it in slices), used when the analyzer is still the one they were made with. */
  queryTerms?: QueryTerms;
  /** Diversify the hits by maximal marginal relevance over the exact top `candidates` (search/mmr.ts). */
  mmr?: MmrOptions;
  /** Answer the topK groups of hits by a metadata value instead of hits (search/group-by.ts). */
  groupBy?: GroupByOptions;
  /** Blend each filtered row's similarity with a decay of a metadata value's distance from an origin (search/decay.ts). */
  decay?: DecayOptions;
}

export interface MmrOptions {
  /** 0 (a plain search) to 1 (diversity alone): lambda = 1 - diversity. */
  diversity: number;
  /** The exact top rows MMR picks from (at least topK). */
  candidates?: number;
}

export interface GroupByOptions {
  path: string;
  /** Hits per group. */
  size?: number;
}

export type DecayCurve = 'exp' | 'gauss' | 'linear';

export interface DecayOptions {
  path: string;
  /** A number, an ISO-8601 date, or "now" (then the values are dates). */
  origin: number | string;
  /** The distance from the origin where the decay is `midpoint` (milliseconds for dates). */
  scale: number;
  midpoint?: number;
  curve?: DecayCurve;
  /** final = (1 - weight) x similarity + weight x decay. */
  weight?: number;
}

/** One group of a groupBy search: the value at the path and its best hits. */
export interface SearchGroup {
  value: string | number | boolean | null;
  hits: SearchHit[];
}

/** Each query text's distinct terms (distinctTerms) under `analyzer`. */
export interface QueryTerms {
  readonly analyzer: AnalyzerName;
  readonly terms: readonly string[][];
}

export interface ListOptions {
  filter?: Filter;
  /** Vectors per page. */
  limit: number;
  /** nextCursor of the previous page; none starts from the first vector. */
  cursor?: string;
  /** Order by a metadata value (ordered-listing.ts) instead of insertion order. */
  orderBy?: OrderBy;
  includeVectors?: boolean;
  includeMetadata?: boolean;
  includeText?: boolean;
}

export interface ListedVector extends RecordTtl {
  id: string;
  vector?: Float32Array;
  metadata?: MetadataJson;
  /** With includeText: the text, or null for none. */
  text?: TextJson | null;
}

export interface ListPage {
  vectors: ListedVector[];
  /** null on the last page. */
  nextCursor: string | null;
}

/** One vector as an export carries it: its stored float32 values (a copy). */
export interface ExportedVector extends RecordTtl {
  id: string;
  vector: Float32Array;
  metadata: MetadataJson;
  /** Present when the vector has a text. */
  text?: TextJson;
}

/**
 * A consistent snapshot of an index, read a batch at a time: the vectors
 * stored when it was opened, as they were then, in insertion order, however
 * the index changes while it is read. Only a vector changed before the
 * export reached it is copied aside, so memory stays small. close() it.
 */
export interface IndexExport {
  readonly config: Readonly<IndexConfig>;
  /** Vectors the export yields in all. */
  readonly count: number;
  /** Up to `max` more vectors; an empty array at the end. */
  next(max: number): ExportedVector[];
  close(): void;
}

export interface SearchHit {
  id: string;
  /** Vector search: similarity or distance; keyword: BM25; hybrid: the fused score. */
  score: number;
  metadata?: MetadataJson;
  /** With includeText: the text, or null for none. */
  text?: TextJson | null;
  /** Hybrid only: each arm's score and 1-based rank, null where that arm did not rank the vector. */
  vectorScore?: number | null;
  vectorRank?: number | null;
  textScore?: number | null;
  textRank?: number | null;
  /** With mmr: the 1-based order in which MMR picked the hit (the order of the list). */
  mmrRank?: number;
}

export interface SearchStats {
  /**
   * The results are the exact top K (float32 scan). false for int8: the
   * scores are still exact (re-ranked in float32), but a true neighbour
   * outside the candidate pool can be missed.
   */
  exact: boolean;
  metric: Metric | null;
  topK: number;
  candidatePool: number;
  /** Vectors that passed the filter (all vectors without one). */
  matched: number;
  /** Vectors the kernel scored per query (0 for a keyword search). */
  scanned: number;
  /** When texts were searched: documents holding a query term that passed the filter (summed over the queries). */
  textMatched?: number;
}

/** A search ready to run (VectorIndex.planSearch). */
export interface SearchPlan {
  /** What the kernel scans: queries x rows x dims (an int8 first stage counts a quarter). */
  readonly work: number;
  /** Run it on this thread. */
  run(): SearchOutput;
  /** Run it on a kernel pool's threads (a shared build's index only); the same results. */
  runOn(executor: PoolExecutor): Promise<SearchOutput>;
  /**
   * The same results, the work after the kernel's (keyword arms, fusion,
   * hits with their metadata and texts) a query at a time, with the event
   * loop given back whenever `slices` is due; the scan on `executor`'s
   * threads when given.
   */
  runSliced(executor: PoolExecutor | null, slices: Slices): Promise<SearchOutput>;
}

export interface SearchOutput {
  results: SearchHit[][];
  /** With groupBy: each query's groups (its `results` then empty). */
  groups?: SearchGroup[][];
  stats: SearchStats;
  /** UTF-8 bytes of the hits' metadata as JSON, when included (to size the answer before writing it). */
  metadataJsonBytes: number;
  /** UTF-8 bytes of the hits' texts as JSON string literals, when included. */
  textJsonBytes: number;
}

/** What an index holds, for the session's stats and the server's memory budget (VectorIndex.stats). */
export interface IndexStats {
  /** Bytes of linear memory held (0 until the first add and after a reset). */
  memoryBytes: number;
  /** Bytes of that memory that rows and their bookkeeping occupy at the current capacity. */
  usedBytes: number;
  rowCapacity: number;
  /** Estimated bytes of JS heap held: the ids and their bookkeeping (heap-size.ts), the insertion log's dead entries, the filter and keyword indexes' objects. */
  heapBytes: number;
  /** Bytes the metadata store holds (arena, row table, dictionary, postings), as allocated. */
  metadataBytes: number;
  /** Bytes the text store holds (texts, row table, dictionary, postings, per-document arrays), as allocated. */
  textBytes: number;
  /** Bytes of metadata JSON stored, and entries of the filter index. */
  metadata: { jsonBytes: number; indexEntries: number };
  /** Bytes of texts stored (as JSON string literals), and the keyword index's bytes, distinct terms and documents. */
  text: { jsonBytes: number; indexBytes: number; terms: number; documents: number };
}
