// VectorIndex: one session's vectors. Maps ids to dense rows of a
// KernelInstance, keeps metadata beside them, and enforces the rules of the
// spec's state machine (dimension and metric fixed by the first add).
//
// Rows stay contiguous: deleting row r moves the last row into r, so a scan
// is always over rows [0, size). Every mutation validates its whole input
// before it writes anything, so a failed call leaves the index unchanged.
// Environment-free: the server and the browser SDK share it.

import { SPEC_LIMITS, type AnalyzerName, type Metric, type VectorType } from '../config.js';
import { apiError, pointer } from '../errors.js';
import type { PoolExecutor } from '../kernel/executor.js';
import { inverseNorm } from '../kernel/inverse-norm.js';
import { KernelInstance } from '../kernel/kernel-instance.js';
import type { Slices } from '../limits/slices.js';
import type { MemoryGuard, SearchHits, SearchRequest } from '../kernel/search-request.js';
import { float32ArrayToNumbers } from './float32.js';
import type { RowBitmap } from './bitmap.js';
import { parseFilter, type Filter, type FilterNode, type Metadata } from './filter.js';
import { ROW_HEAP_BYTES, stringHeapBytes } from './heap-size.js';
import { InsertionOrder, LOG_ENTRY_HEAP_BYTES } from './insertion-order.js';
import { jsonText, utf8Length, type JsonText } from './json-size.js';
import { decodeCursor, encodeCursor, newEpoch } from './list-cursor.js';
import { MetadataJson, type TextJson } from './metadata/metadata-json.js';
import type { EntryCount } from './metadata/metadata-index.js';
import { MetadataStore } from './metadata/metadata-store.js';
import { distinctTerms, termBytes } from './text/analyzer.js';
import type { JoinedTerms } from './text/text-index.js';
import { fuse, type ArmHit, type Fusion } from './text/fusion.js';
import { TextStore, type PreparedText } from './text/text-store.js';

export type { AnalyzerName, Filter, Fusion, MemoryGuard, Metadata, TextJson };
export { MetadataJson };

export interface IndexConfig {
  dimensions: number | null;
  metric: Metric | null;
  vectorType: VectorType;
  /** The analyzer of the texts, fixed by the first add that carries one (null until then). */
  analyzer: AnalyzerName | null;
}

export interface VectorInput {
  id: string;
  vector: ArrayLike<number>;
  metadata?: Metadata;
  /** Text searched by keywords (BM25); at most maxTextBytes of UTF-8. */
  text?: string;
}

export interface StoredVector {
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
  /** The records' texts analysed ahead (prepareText), used when the analyzer is still the one they were made with. */
  preparedTexts?: PreparedTexts;
  /** The records' metadata measured ahead (measureMetadata), one entry a record. */
  preparedMetadata?: PreparedMetadata;
  /** JSON Pointer of record i in the request, for error details. */
  pathOf?: (i: number) => string;
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
  /** The most bytes the text store (texts, dictionary, postings) can grow by. */
  readonly textBytesAdded: number;
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
  includeVectors?: boolean;
  includeMetadata?: boolean;
  includeText?: boolean;
}

export interface ListedVector {
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
export interface ExportedVector {
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

/** The part of the log an open export has yet to emit, and copies of its vectors changed since it opened. */
interface OpenExport {
  position: number;
  readonly upTo: number;
  readonly saved: Map<number, { vector: ExportedVector; bytes: number }>;
  /** Told the estimated bytes of each copy kept, and (negative) of each one let go. */
  readonly onCopies?: (bytes: number) => void;
}

/** A Float32Array's own object, beside its values. */
const TYPED_ARRAY_BYTES = 96;

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

/** Work done a query at a time: a pause may come after each (SearchPlan.runSliced). */
type QuerySteps = Generator<void, SearchOutput, void>;

/** All of `steps` at once. */
function runSteps(steps: QuerySteps): SearchOutput {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `steps`, with the event loop given back between queries whenever `slices` is due. */
async function runStepsSliced(steps: QuerySteps, slices: Slices): Promise<SearchOutput> {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await slices.pause();
  }
}

/** A plan whose kernel scan (`scan` here, `scanOn` a pool) is followed by per-query `finish` steps. */
function stepsPlan<T>(work: number, scan: () => T, scanOn: (executor: PoolExecutor) => Promise<T>, finish: (scanned: T) => QuerySteps): SearchPlan {
  return {
    work,
    run: () => runSteps(finish(scan())),
    runOn: async (executor) => runSteps(finish(await scanOn(executor))),
    runSliced: async (executor, slices) => runStepsSliced(finish(executor ? await scanOn(executor) : scan()), slices),
  };
}

export interface SearchOutput {
  results: SearchHit[][];
  stats: SearchStats;
  /** UTF-8 bytes of the hits' metadata as JSON, when included (to size the answer before writing it). */
  metadataJsonBytes: number;
  /** UTF-8 bytes of the hits' texts as JSON string literals, when included. */
  textJsonBytes: number;
}

/** Rows an upsert in slices writes between two reads of the clock (a row costs well under a millisecond). */
const ROWS_PER_CLOCK_READ = 4;

export class VectorIndex {
  private kernel: KernelInstance | null = null;
  private config: IndexConfig = NEW_CONFIG;
  private readonly rowOf = new Map<string, number>();
  private idOf: string[] = [];
  /** Estimated JS heap of the rows: ids and their bookkeeping (rowHeapBytes). */
  private rowsHeap = 0;
  /** Each row's metadata as bytes, and the filter index over them, outside the JS heap. */
  private readonly metadata = new MetadataStore(SPEC_LIMITS.maxIndexedValueBytes);
  /** Each row's text as bytes, and the inverted index over them, outside the JS heap. */
  private readonly texts = new TextStore();
  /** Insertion order (the seq of every write) for listing and export. */
  private readonly order = new InsertionOrder();
  private readonly openExports = new Set<OpenExport>();
  /** Tags this index's list cursors. */
  private readonly epoch = newEpoch();
  /** Never reset, so seqs ascend for the index's whole life (list cursors and open exports rely on it). */
  private nextSeq = 0;
  /** Bumped by every change, so a stale UpsertPlan is refused. */
  private version = 0;
  /** An upsert written in slices, until its last row is in (reads of the session wait for it: `applying`). */
  private inSlices: Promise<UpsertResult> | null = null;
  /**
   * Asked before a search grows the linear memory for its scratch (the
   * server's memory budget; upserts are checked by their caller with
   * memoryBytesAfter). Searches that fit in memory already held never call it.
   */
  memoryGuard: MemoryGuard | null = null;
  /** Told the id of a kernel instance the index lets go of (reset), so a kernel pool can drop it too. */
  kernelDropped: ((kernelId: number) => void) | null = null;

  constructor(
    private readonly module: WebAssembly.Module,
    /** MAX_VECTORS_PER_SESSION (raised only while a reopen replays rows acknowledged under a higher one: allowRows()). */
    public maxVectors: number,
    /** UTF-8 bytes of the longest text a vector may have (MAX_TEXT_BYTES). */
    public maxTextBytes: number = DEFAULT_MAX_TEXT_BYTES,
  ) {}

  get size(): number {
    return this.idOf.length;
  }

  get initialized(): boolean {
    return this.config.dimensions !== null;
  }

  /** The configuration (replaced, never mutated, on each change, so no copy is needed). */
  getConfig(): Readonly<IndexConfig> {
    return this.config;
  }

  /** Bytes of linear memory held (0 until the first add and after a reset). */
  get memoryBytes(): number {
    return this.kernel?.memoryBytes ?? 0;
  }

  /** Estimated bytes of JS heap held: the ids and their bookkeeping (heap-size.ts), the insertion log's dead entries, the filter and keyword indexes' objects. */
  get heapBytes(): number {
    return this.rowsHeap + this.order.heapBytes + this.metadata.heapBytes + this.texts.heapBytes;
  }

  /** Bytes the metadata store holds (arena, row table, dictionary, postings), as allocated. */
  get metadataBytes(): number {
    return this.metadata.byteLength;
  }

  /** Bytes of metadata JSON stored, and entries of the filter index. */
  get metadataStats(): { jsonBytes: number; indexEntries: number } {
    return { jsonBytes: this.metadata.jsonBytes, indexEntries: this.metadata.entryCount };
  }

  /** Bytes the text store holds (texts, row table, dictionary, postings, per-document arrays), as allocated. */
  get textBytes(): number {
    return this.texts.byteLength;
  }

  /** Bytes of texts stored (as JSON string literals), and distinct terms of the keyword index. */
  get textStats(): { jsonBytes: number; indexBytes: number; terms: number; documents: number } {
    return { jsonBytes: this.texts.jsonBytes, indexBytes: this.texts.indexByteLength, terms: this.texts.termCount, documents: this.texts.documentCount };
  }

  /** UTF-8 bytes of the text of `id` as a JSON string literal (0 when it has none). */
  textJsonBytes(id: string): number {
    const row = this.rowOf.get(id);
    return row === undefined ? 0 : this.texts.jsonLength(row);
  }

  /** UTF-8 bytes of the metadata of `id` as JSON (0 when there is no such vector). */
  metadataJsonBytes(id: string): number {
    const row = this.rowOf.get(id);
    return row === undefined ? 0 : this.metadata.jsonLength(row);
  }

  /** Bytes of that memory that rows and their bookkeeping occupy at the current capacity. */
  get usedBytes(): number {
    return this.kernel?.usedBytes ?? 0;
  }

  /** Bytes of linear memory held once `plan` is applied (for the server's memory budget). */
  memoryBytesAfter(plan: UpsertPlan): number {
    return this.kernel
      ? this.kernel.memoryBytesFor(plan.rowsNeeded)
      : KernelInstance.memoryBytesForNew(plan.dimensions, plan.rowsNeeded, this.maxVectors, plan.vectorType);
  }

  get rowCapacity(): number {
    return this.kernel?.capacity ?? 0;
  }

  /** A reopen's replay: let the index hold `rows` rows, acknowledged when MAX_VECTORS_PER_SESSION was higher than it is now. */
  allowRows(rows: number): void {
    if (rows <= this.maxVectors) return;
    this.maxVectors = rows;
    if (this.kernel) this.kernel.maxCapacity = Math.max(this.kernel.maxCapacity, rows);
  }

  /** Make room for `rows` rows at once (up to maxVectors), so rows added later move no stored data; a no-op before the first add. */
  reserve(rows: number): void {
    this.kernel?.ensureCapacity(Math.min(rows, this.maxVectors));
  }

  has(id: string): boolean {
    return this.rowOf.has(id);
  }

  get(id: string): StoredVector | undefined {
    const row = this.rowOf.get(id);
    if (row === undefined || !this.kernel) return undefined;
    const stored: StoredVector = { id, vector: float32ArrayToNumbers(this.kernel.readRow(row)), metadata: this.metadata.json(row) };
    const text = this.texts.json(row);
    if (text) stored.text = text;
    return stored;
  }

  /** The metadata of `id` as stored (its JSON bytes; .value() parses them). */
  getMetadata(id: string): MetadataJson | undefined {
    const row = this.rowOf.get(id);
    return row === undefined ? undefined : this.metadata.json(row);
  }

  /** Replace the metadata of `id`; false when there is no such vector. */
  setMetadata(id: string, metadata: Metadata): boolean {
    const row = this.rowOf.get(id);
    if (row === undefined) return false;
    this.version++;
    this.beforeChange(id, row);
    this.metadata.set(row, metadata, isEmpty(metadata) ? null : jsonText(metadata), this.size);
    return true;
  }

  /** The most bytes setMetadata(id, metadata) can add to the metadata store (for the server's memory budget). */
  metadataBytesUpper(metadata: Metadata): number {
    const batch = MetadataStore.batch();
    batch.replaces = 1;
    if (!isEmpty(metadata)) this.metadata.measure(batch, jsonText(metadata), this.metadata.entriesOf(metadata));
    return this.metadata.growthUpper(batch, this.size, this.size);
  }

  /** Add or replace vectors, all or nothing. */
  upsert(records: VectorInput[], options: UpsertOptions = {}): UpsertResult {
    return this.applyUpsert(this.prepareUpsert(records, options));
  }

  /**
   * Check a batch against the session (dimension, metric, zero vectors,
   * capacity) without changing anything; throws the first problem found.
   */
  prepareUpsert(records: VectorInput[], options: UpsertOptions = {}): UpsertPlan {
    const pathOf = options.pathOf ?? ((i: number) => pointer('vectors', i));
    const { dimensions, metric, vectorType, vectors } = this.validateUpsert(records, options, pathOf);
    const { texts, analyzer, textBytesAdded } = this.prepareTexts(records, options, pathOf);
    const newIds = new Set<string>();
    const ahead = options.preparedMetadata?.json.length === records.length ? options.preparedMetadata : undefined;
    const metadataJson = new Array<JsonText | null>(records.length);
    let heapBytesAdded = 0;
    const metadataBatch = MetadataStore.batch();
    for (let i = 0; i < records.length; i++) {
      const { id, metadata } = records[i];
      if (!this.rowOf.has(id) && !newIds.has(id)) {
        newIds.add(id);
        heapBytesAdded += rowHeapBytes(id);
      } else {
        heapBytesAdded += LOG_ENTRY_HEAP_BYTES; // a replace leaves a dead entry in the insertion log
        metadataBatch.replaces++;
      }
      // Made once (ahead, or here), checked against the budget, then written as they are.
      const { json, count } = ahead ? { json: ahead.json[i], count: ahead.counts[i] } : this.measureMetadata(metadata);
      metadataJson[i] = json;
      if (json && count) this.metadata.measure(metadataBatch, json, count);
    }
    // A replace adds nothing: taken even by an index over a MAX_VECTORS_PER_SESSION lowered since it was filled.
    if (newIds.size > 0 && this.size + newIds.size > this.maxVectors) {
      throw apiError('CAPACITY_EXCEEDED', `the index holds ${this.size} of ${this.maxVectors} vectors; this request adds ${newIds.size} more`, {
        maxVectors: this.maxVectors,
        vectorCount: this.size,
        adding: newIds.size,
      });
    }
    const rowsNeeded = this.size + newIds.size;
    return {
      records,
      vectors,
      dimensions,
      metric,
      vectorType,
      rowsNeeded,
      version: this.version,
      metadataJson,
      heapBytesAdded,
      metadataBytesAdded: this.metadata.growthUpper(metadataBatch, this.size, rowsNeeded),
      texts,
      analyzer,
      textBytesAdded,
    };
  }

  /** A record's metadata as the store takes it: its JSON text (null for none or {}) and the filter-index entries it lists (pure: prepareUpsert, or ahead of the turn). */
  measureMetadata(metadata: Metadata | undefined): { json: JsonText | null; count: EntryCount | null } {
    if (metadata === undefined || isEmpty(metadata)) return { json: null, count: null };
    return { json: jsonText(metadata), count: this.metadata.entriesOf(metadata) };
  }

  /** Check and analyse the records' texts (the analyzer locked, the size limit); the store's growth bound. */
  private prepareTexts(records: VectorInput[], options: UpsertOptions, pathOf: (i: number) => string) {
    const locked = this.config.analyzer;
    if (options.analyzer !== undefined && locked !== null && options.analyzer !== locked) {
      throw apiError('ANALYZER_LOCKED', `the session analyzer is ${locked}; reset the index to change it`, {
        path: '/analyzer',
        expected: locked,
        actual: options.analyzer,
      });
    }
    const texts = new Array<PreparedText | null>(records.length);
    // Named, it is fixed even by an add without text (so a log's replay restores it); else the first text fixes the default.
    let analyzer = locked ?? options.analyzer ?? null,
      textBytesAdded = 0;
    for (let i = 0; i < records.length; i++) {
      const { text } = records[i];
      if (text === undefined) {
        texts[i] = null;
        continue;
      }
      if (typeof text !== 'string') throw apiError('VALIDATION_ERROR', 'text must be a string', { path: pathOf(i) + '/text' });
      // Measured ahead with the text's analysis when it was (a batch's texts: 32 MiB to scan in the turn otherwise).
      const early = options.preparedTexts?.texts[i];
      const bytes = early ? early.textBytes : utf8Length(text);
      if (bytes > this.maxTextBytes) {
        throw apiError('VALIDATION_ERROR', `text is ${bytes} bytes of UTF-8; the limit is MAX_TEXT_BYTES=${this.maxTextBytes}`, {
          path: pathOf(i) + '/text',
          limit: this.maxTextBytes,
          actual: bytes,
        });
      }
      analyzer ??= options.analyzer ?? SPEC_LIMITS.defaultAnalyzer;
      const ahead = options.preparedTexts?.analyzer === analyzer ? options.preparedTexts.texts[i] : null;
      const prepared = ahead ?? prepareText(text, analyzer, bytes);
      texts[i] = prepared;
      textBytesAdded += TextStore.upperBytes(prepared);
    }
    if (textBytesAdded > 0) textBytesAdded += TextStore.changeBytesUpper;
    return { texts, analyzer, textBytesAdded };
  }

  /** The analyzer a search analyses its query texts with now. */
  get queryAnalyzer(): AnalyzerName {
    return this.config.analyzer ?? SPEC_LIMITS.defaultAnalyzer;
  }

  /** The analyzer an upsert with `options` would analyse its texts with now. */
  textAnalyzerFor(options: UpsertOptions): AnalyzerName {
    return this.config.analyzer ?? options.analyzer ?? SPEC_LIMITS.defaultAnalyzer;
  }

  /** Whether nothing changed the index since `plan` was prepared (applyUpsert takes only such a plan). */
  isCurrent(plan: UpsertPlan): boolean {
    return plan.version === this.version;
  }

  /**
   * Write a batch that prepareUpsert accepted (with no change to the index in
   * between). `grown` runs once the memory has room for it, before any change
   * (the journal: a change is logged only once nothing can fail for want of
   * memory); if it throws, nothing changes but a memory grown bigger. If it
   * returns a promise (a change logged in pieces), the batch is written once
   * that settles, and not if it rejects; nothing else may change the index
   * meanwhile.
   */
  applyUpsert(plan: UpsertPlan, grown?: () => void): UpsertResult;
  applyUpsert(plan: UpsertPlan, grown: () => Promise<void> | undefined, slices?: Slices): UpsertResult | Promise<UpsertResult>;
  applyUpsert(plan: UpsertPlan, grown?: () => Promise<void> | undefined | void, slices?: Slices): UpsertResult | Promise<UpsertResult> {
    if (plan.version !== this.version) throw new Error('the index changed since this upsert was prepared');
    // Growing is the only step that can still fail (out of memory); it comes before any write.
    const kernel = this.kernel ?? new KernelInstance(this.module, plan.dimensions, plan.metric, this.maxVectors, plan.vectorType);
    kernel.ensureCapacity(plan.rowsNeeded);
    const logged = grown?.();
    if (!logged) return this.writeUpsert(plan, kernel, slices);
    return logged.then(() => {
      if (plan.version !== this.version) throw new Error('the index changed while an upsert was logged');
      return this.writeUpsert(plan, kernel, slices);
    });
  }

  /**
   * An upsert being written in slices, until it is all in: a read outside the
   * session's gate (get, has, export, ...) waits for it, so it sees all of the
   * change or none of it. Null when none is.
   */
  get applying(): Promise<unknown> | null {
    return this.inSlices;
  }

  /** Once no upsert is being written in slices (undefined when none is: the caller goes on in its tick). */
  settled(): Promise<void> | undefined {
    return this.inSlices ? this.whenApplied() : undefined;
  }

  private async whenApplied(): Promise<void> {
    // Another may start as this one ends (the next write waiting): wait for it too. A failed one is its writer's to report.
    while (this.inSlices) await this.inSlices.then(noop, noop);
  }

  /** applyUpsert's writes, once `kernel` has room for them: in one step, or with `slices` in slices that give the event loop back. */
  private writeUpsert(plan: UpsertPlan, kernel: KernelInstance, slices?: Slices): UpsertResult | Promise<UpsertResult> {
    this.kernel = kernel;
    this.config = { ...this.config, dimensions: plan.dimensions, metric: plan.metric, vectorType: plan.vectorType, analyzer: plan.analyzer };
    this.version++;
    const result: UpsertResult = { added: 0, replaced: 0 };
    const count = plan.records.length;
    if (!slices) {
      this.writeRows(plan, kernel, 0, count, result);
      return this.settleUpsert(plan, result);
    }
    // The first slice runs in the caller's tick; a small batch is done in it.
    let from = 0;
    while (from < count && !slices.due()) from = this.writeRows(plan, kernel, from, Math.min(count, from + ROWS_PER_CLOCK_READ), result);
    if (from === count && !this.texts.compactionDue) return this.settleUpsert(plan, result);
    const rest = this.writeRest(plan, kernel, from, result, slices);
    this.inSlices = rest;
    return rest;
  }

  /** Rows [from, count) of an upsert in slices; nothing else changes the index meanwhile (the session's turn is held). */
  private async writeRest(plan: UpsertPlan, kernel: KernelInstance, from: number, result: UpsertResult, slices: Slices): Promise<UpsertResult> {
    try {
      const count = plan.records.length;
      while (from < count) {
        await slices.pause();
        from = this.writeRows(plan, kernel, from, Math.min(count, from + ROWS_PER_CLOCK_READ), result, true);
        // Their texts' terms indexed in steps: a long text's are milliseconds.
        const adds = this.texts.addsSteps();
        while (!adds.next().done) await slices.pause();
      }
      // The keyword index's compaction in steps too (settleUpsert's then finds nothing to do).
      const compaction = this.texts.settleSteps(this.size);
      while (!compaction.next().done) await slices.pause();
      return this.settleUpsert(plan, result);
    } finally {
      this.inSlices = null;
    }
  }

  /** Rows [from, to) of an upsert: ids, insertion order, metadata, text, then their vectors in one pass; `to`. `textsLater`: their terms left to TextStore.addsSteps(). */
  private writeRows(plan: UpsertPlan, kernel: KernelInstance, from: number, to: number, result: UpsertResult, textsLater = false): number {
    const { records, vectors } = plan;
    const rows = new Array<number>(to - from);
    for (let i = from; i < to; i++) {
      const { id } = records[i];
      let row = this.rowOf.get(id);
      if (row === undefined) {
        row = this.idOf.length;
        this.rowOf.set(id, row);
        this.idOf.push(id);
        this.rowsHeap += rowHeapBytes(id);
        result.added++;
      } else {
        result.replaced++;
        this.beforeChange(id, row);
      }
      this.order.write(this.idOf[row], this.nextSeq + i); // the stored string, not this request's copy
      rows[i - from] = row;
      this.metadata.set(row, records[i].metadata ?? NO_METADATA, plan.metadataJson[i], this.size);
      this.texts.set(row, plan.texts[i], this.nextSeq + i, this.size, textsLater);
    }
    // One pass over linear memory for the rows (views made once, not per row).
    kernel.writeRows(rows, from === 0 && to === records.length ? vectors : vectors.slice(from, to), this.nextSeq + from);
    return to;
  }

  /** After an upsert's last row: the keyword index compacts once for the batch, and the next write's seqs follow. */
  private settleUpsert(plan: UpsertPlan, result: UpsertResult): UpsertResult {
    this.texts.settle(this.size);
    this.nextSeq += plan.records.length;
    return result;
  }

  /** Delete the given ids; ids that are not stored are reported, not an error. */
  delete(ids: string[]): { deleted: number; notFound: string[] } {
    let deleted = 0;
    const notFound: string[] = [];
    // A repeated id counts once: it is deleted (or not found) once, never both.
    for (const id of new Set(ids)) {
      const row = this.rowOf.get(id);
      if (row === undefined) {
        notFound.push(id);
        continue;
      }
      this.removeRow(row);
      deleted++;
    }
    this.texts.settle(this.size);
    return { deleted, notFound };
  }

  /** Remove every vector; dimensions and metric stay. Returns how many were removed. */
  clear(): number {
    const removed = this.size;
    this.version++;
    if (this.openExports.size > 0) for (const [id, row] of this.rowOf) this.beforeChange(id, row);
    this.order.clear();
    this.rowOf.clear();
    this.idOf = [];
    this.rowsHeap = 0;
    this.metadata.clear();
    this.texts.clear();
    return removed;
  }

  /** Drop everything, the memory and the configuration included. */
  reset(): number {
    const removed = this.clear();
    if (this.kernel) this.kernelDropped?.(this.kernel.id);
    this.kernel = null;
    this.config = NEW_CONFIG;
    return removed;
  }

  /**
   * Exact k-nearest search for each query; with queryTexts, a keyword
   * (queries null or empty) or hybrid search (planSearch). An index with no
   * vectors returns empty lists.
   */
  search(queries: ArrayLike<number>[] | null, options: SearchOptions = {}): SearchOutput {
    const plan = this.planSearch(queries, options);
    return 'results' in plan ? plan : plan.run();
  }

  /**
   * search(), checked and laid out but not yet run: its answer when there is
   * nothing to scan, else a SearchPlan to run here or on a kernel pool. Run
   * it before the index changes (the caller keeps writes away meanwhile).
   * With queryTexts and no query vectors, a keyword search, answered at once;
   * with both, one text per vector, a hybrid search whose vector arm is the plan's.
   */
  planSearch(queries: ArrayLike<number>[] | null, options: SearchOptions = {}): SearchOutput | SearchPlan {
    const texts = options.queryTexts;
    const vectorCount = queries?.length ?? 0;
    if (options.fusion !== undefined && (texts === undefined || vectorCount === 0)) throw fusionWithoutBothArms();
    if (texts === undefined) return this.planVectorSearch(queries ?? [], options);
    if (vectorCount === 0) return this.keywordSearch(texts, options);
    return this.planHybridSearch(queries!, texts, options, null);
  }

  private planVectorSearch(queries: ArrayLike<number>[], options: SearchOptions): SearchOutput | SearchPlan {
    const topK = options.topK ?? SPEC_LIMITS.defaultTopK;
    const candidatePool = Math.max(options.candidatePool ?? SPEC_LIMITS.defaultCandidatePool, topK);
    const pathOf = options.pathOf ?? ((j: number) => pointer('queryVectors', j));
    // A bad filter is refused even when there is nothing to search.
    const filter = options.filter ? parseFilter(options.filter) : null;
    const stats: SearchStats = {
      exact: this.config.vectorType === 'float32',
      metric: this.config.metric,
      topK,
      candidatePool,
      matched: 0,
      scanned: 0,
    };
    const kernel = this.kernel;
    if (!kernel || this.size === 0) {
      // Nothing to find, but the queries must still agree with the session
      // (or, before the first add, with each other).
      this.toFloat32Queries(queries, kernel?.dim ?? queries[0]?.length ?? 0, pathOf);
      return { results: queries.map(() => []), stats, metadataJsonBytes: 0, textJsonBytes: 0 };
    }
    const packed = this.toFloat32Queries(queries, kernel.dim, pathOf);
    const rowList = filter ? this.rowsMatching(filter) : null;
    stats.matched = rowList ? rowList.length : this.size;
    stats.scanned = stats.matched;
    const queryCount = queries.length;
    const finish = (hits: SearchHits) => this.searchOutput(hits, queryCount, options, stats);
    // int8: the candidatePool best by the codes, re-ranked exactly; float32: one exact scan.
    const int8 = this.config.vectorType === 'int8';
    const request: SearchRequest = {
      queries: packed,
      queryCount,
      k: topK,
      count: this.size,
      rowList,
      guard: this.memoryGuard,
      candidatePool: int8 ? candidatePool : undefined,
    };
    return stepsPlan(
      queryCount * stats.scanned * kernel.dim * (int8 ? 0.25 : 1),
      () => kernel.search(request),
      (executor) => kernel.search(request, executor),
      finish,
    );
  }

  /** The hits as results: ids, scores, metadata, cut at the threshold. */
  private *searchOutput(hits: SearchHits, queryCount: number, options: SearchOptions, stats: SearchStats): QuerySteps {
    const sizes: AnswerSizes = { metadataJsonBytes: 0, textJsonBytes: 0 };
    const threshold = options.scoreThreshold;
    const cosine = this.config.metric === 'cosine';
    const results: SearchHit[][] = [];
    for (let j = 0; j < queryCount; j++) {
      const list: SearchHit[] = [];
      for (let i = 0; i < hits.perQuery; i++) {
        const score = hits.scores[j * hits.perQuery + i];
        // Results come best first: the first one past the threshold ends the list.
        if (threshold !== undefined && (cosine ? !(score >= threshold) : !(score <= threshold))) break;
        list.push(this.hit(hits.rows[j * hits.perQuery + i], score, options, sizes));
      }
      results.push(list);
      yield;
    }
    return { results, stats, ...sizes };
  }

  /** The hit of `row`, with its metadata and text as asked (their bytes added to `sizes`). */
  private hit(row: number, score: number, options: SearchOptions, sizes: AnswerSizes): SearchHit {
    const hit: SearchHit = { id: this.idOf[row], score };
    if (options.includeMetadata) {
      hit.metadata = this.metadata.json(row);
      sizes.metadataJsonBytes += this.metadata.jsonLength(row);
    }
    if (options.includeText) {
      hit.text = this.texts.json(row);
      sizes.textJsonBytes += this.texts.jsonLength(row);
    }
    return hit;
  }

  /** Each query text's distinct terms under the session's analyzer (standard before any text); QUERY_TEXT_EMPTY for one without. */
  private queryTerms(texts: string[], options: SearchOptions): string[][] {
    const pathOf = options.textPathOf ?? ((j: number) => pointer('queryTexts', j));
    const analyzer = this.queryAnalyzer;
    const ahead = options.queryTerms?.analyzer === analyzer ? options.queryTerms.terms : null;
    return texts.map((text, j) => {
      const terms = ahead?.[j] ?? distinctTerms(analyzer, text);
      if (terms.length === 0) {
        throw apiError('QUERY_TEXT_EMPTY', `the query text has no terms under the ${analyzer} analyzer (it is empty, punctuation, or only stop words)`, {
          path: pathOf(j),
          analyzer,
        });
      }
      return terms;
    });
  }

  /** The filter's rows as a bitmap, or null for every row. */
  private filterBitmap(filter: FilterNode | null): RowBitmap | null {
    return filter && this.size > 0 ? this.metadata.evaluate(filter, this.size) : null;
  }

  /** The BM25 best `k` of one query's terms (BM25 >= threshold), the row `exclude` left out; a pause may come after each term. */
  private *textArm(
    terms: string[],
    k: number,
    bitmap: RowBitmap | null,
    threshold: number | undefined,
    exclude: number,
  ): Generator<void, { hits: ArmHit[]; matched: number }, void> {
    if (this.size === 0) return { hits: [], matched: 0 };
    const found = yield* this.texts.searchSteps(terms, this.size, k, BM25, bitmap, threshold, exclude);
    const hits = new Array<ArmHit>(found.rows.length);
    for (let i = 0; i < hits.length; i++) hits[i] = { row: found.rows[i], score: found.scores[i] };
    return { hits, matched: found.matched };
  }

  /** Keyword search: the BM25 topK of each text, filtered first (checked now, run a query at a time). */
  private keywordSearch(texts: string[], options: SearchOptions): SearchPlan {
    const topK = options.topK ?? SPEC_LIMITS.defaultTopK;
    const candidatePool = Math.max(options.candidatePool ?? SPEC_LIMITS.defaultCandidatePool, topK);
    const filter = options.filter ? parseFilter(options.filter) : null;
    const terms = this.queryTerms(texts, options);
    const bitmap = this.filterBitmap(filter);
    const stats: SearchStats = {
      exact: true,
      metric: this.config.metric,
      topK,
      candidatePool,
      matched: bitmap ? bitmap.count() : this.size,
      scanned: 0,
      textMatched: 0,
    };
    const index = this;
    function* steps(): QuerySteps {
      const sizes: AnswerSizes = { metadataJsonBytes: 0, textJsonBytes: 0 };
      const results: SearchHit[][] = [];
      for (const queryTerms of terms) {
        const { hits, matched } = yield* index.textArm(queryTerms, topK, bitmap, options.scoreThreshold, -1);
        stats.textMatched! += matched;
        results.push(hits.map(({ row, score }) => index.hit(row, score, options, sizes)));
        yield;
      }
      return { results, stats, ...sizes };
    }
    return stepsPlan(
      0,
      () => null,
      async () => null,
      steps,
    );
  }

  /**
   * Hybrid search: per query, the vector arm's and the text arm's best
   * candidatePool (at least topK), fused; scoreThreshold applies to the
   * fused score. `own`: per query, a row left out of both arms (a query by id).
   */
  private planHybridSearch(queries: ArrayLike<number>[], texts: string[], options: SearchOptions, own: number[] | null): SearchOutput | SearchPlan {
    if (texts.length !== queries.length) {
      throw apiError('VALIDATION_ERROR', `a hybrid search takes one query text per query vector: ${queries.length} vectors, ${texts.length} texts`, {
        path: '/queryTexts',
        expected: queries.length,
        actual: texts.length,
      });
    }
    const topK = options.topK ?? SPEC_LIMITS.defaultTopK;
    const candidatePool = Math.max(options.candidatePool ?? SPEC_LIMITS.defaultCandidatePool, topK);
    const fusion = options.fusion ?? DEFAULT_FUSION;
    const filter = options.filter ? parseFilter(options.filter) : null;
    const terms = this.queryTerms(texts, options);
    // The vector arm: the candidatePool best (one more to drop a query's own vector), unthresholded.
    const extra = own ? 1 : 0;
    const vectorPlan = this.planVectorSearch(queries, {
      topK: candidatePool + extra,
      candidatePool: candidatePool + extra,
      filter: options.filter,
      pathOf: options.pathOf,
    });
    const index = this;
    function* finish(vectorOut: SearchOutput): QuerySteps {
      const bitmap = index.filterBitmap(filter);
      const stats: SearchStats = { ...vectorOut.stats, topK, candidatePool, textMatched: 0 };
      const sizes: AnswerSizes = { metadataJsonBytes: 0, textJsonBytes: 0 };
      const lowerIsBetter = index.config.metric === 'l2';
      const seqOf = (row: number) => index.order.seqOf(index.idOf[row])!;
      const threshold = options.scoreThreshold;
      const results: SearchHit[][] = [];
      for (let j = 0; j < terms.length; j++) {
        const exclude = own ? own[j] : -1;
        const vectorHits: ArmHit[] = [];
        for (const { id, score } of vectorOut.results[j]) {
          const row = index.rowOf.get(id)!;
          if (row !== exclude && vectorHits.length < candidatePool) vectorHits.push({ row, score });
        }
        const text = yield* index.textArm(terms[j], candidatePool, bitmap, undefined, exclude);
        stats.textMatched! += text.matched;
        const list: SearchHit[] = [];
        for (const fused of fuse(vectorHits, text.hits, fusion, lowerIsBetter, seqOf)) {
          if (list.length === topK || (threshold !== undefined && !(fused.score >= threshold))) break;
          const hit = index.hit(fused.row, fused.score, options, sizes);
          hit.vectorScore = fused.vectorScore;
          hit.vectorRank = fused.vectorRank;
          hit.textScore = fused.textScore;
          hit.textRank = fused.textRank;
          list.push(hit);
        }
        results.push(list);
        yield;
      }
      return { results, stats, ...sizes };
    }
    if ('results' in vectorPlan)
      return stepsPlan(
        0,
        () => vectorPlan,
        async () => vectorPlan,
        finish,
      );
    return stepsPlan(
      vectorPlan.work,
      () => vectorPlan.run(),
      (executor) => vectorPlan.runOn(executor),
      finish,
    );
  }

  /**
   * Search with stored vectors as the queries, each left out of its own
   * results: the top topK + 1 are found and the query's own id dropped (or
   * the last, when a tie or the filter kept the id out). VECTOR_NOT_FOUND
   * names the first id not stored.
   */
  searchByIds(ids: string[], options: SearchOptions = {}): SearchOutput {
    const plan = this.planSearchByIds(ids, options);
    return 'results' in plan ? plan : plan.run();
  }

  /** searchByIds() as planSearch() gives search(). */
  planSearchByIds(ids: string[], options: SearchOptions = {}): SearchOutput | SearchPlan {
    const pathOf = options.pathOf ?? ((j: number) => pointer('queryIds', j));
    const queries = ids.map((id, j) => {
      const row = this.rowOf.get(id);
      if (row === undefined) throw apiError('VECTOR_NOT_FOUND', `no vector with id "${id}"`, { path: pathOf(j), id });
      return this.kernel!.readRow(row);
    });
    const topK = options.topK ?? SPEC_LIMITS.defaultTopK;
    const candidatePool = Math.max(options.candidatePool ?? SPEC_LIMITS.defaultCandidatePool, topK + 1);
    const withoutOwn = (out: SearchOutput): SearchOutput => {
      const results = out.results.map((list, j) => {
        const own = list.findIndex((hit) => hit.id === ids[j]);
        if (own >= 0) list.splice(own, 1);
        return list.slice(0, topK);
      });
      return { results, stats: { ...out.stats, topK }, metadataJsonBytes: out.metadataJsonBytes, textJsonBytes: out.textJsonBytes };
    };
    if (options.queryTexts !== undefined) {
      const own = ids.map((id) => this.rowOf.get(id)!);
      return this.planHybridSearch(queries, options.queryTexts, { ...options, pathOf }, own);
    }
    if (options.fusion !== undefined) throw fusionWithoutBothArms();
    const plan = this.planSearch(queries, { ...options, topK: topK + 1, candidatePool, pathOf });
    if ('results' in plan) return withoutOwn(plan);
    return {
      work: plan.work,
      run: () => withoutOwn(plan.run()),
      runOn: async (executor) => withoutOwn(await plan.runOn(executor)),
      runSliced: async (executor, slices) => withoutOwn(await plan.runSliced(executor, slices)),
    };
  }

  /**
   * Read ahead, in slices that give the event loop back, the rows `filter`
   * must read (long values, string ranges), for the next call with it; null
   * when there is nothing to read. Keep writes away until that call.
   */
  prepareFilter(filter: Filter | undefined): Promise<void> | null {
    if (!filter || this.size === 0) return null;
    return this.metadata.prepare(parseFilter(filter), this.size);
  }

  /** How many vectors match `filter` (all of them without one). */
  count(filter?: Filter): number {
    const node = filter ? parseFilter(filter) : null;
    if (!node || this.size === 0) return this.size;
    return this.metadata.evaluate(node, this.size).count();
  }

  /** Ids of the vectors matching `filter`, in row order (what a delete by filter removes). */
  idsMatching(filter: Filter): string[] {
    const node = parseFilter(filter);
    if (this.size === 0) return [];
    const rows = this.metadata.evaluate(node, this.size).rows();
    const ids = new Array<string>(rows.length);
    for (let i = 0; i < rows.length; i++) ids[i] = this.idOf[rows[i]];
    return ids;
  }

  /**
   * One page of the vectors in insertion order (a replaced vector moves to
   * the end). The cursor is a position in that order, so a vector stored and
   * unchanged during a whole listing is listed exactly once.
   */
  list(options: ListOptions): ListPage {
    const node = options.filter ? parseFilter(options.filter) : null;
    const after = options.cursor === undefined ? -1 : decodeCursor(options.cursor, this.epoch, this.nextSeq - 1);
    const matching = node && this.size > 0 ? this.metadata.evaluate(node, this.size) : null;
    const vectors: ListedVector[] = [];
    let last = after;
    let more = false;
    this.order.walk(after, Infinity, (id, seq) => {
      if (this.order.seqOf(id) !== seq) return true; // replaced or deleted since
      const row = this.rowOf.get(id)!;
      if (matching && !matching.has(row)) return true;
      if (vectors.length === options.limit) {
        more = true;
        return false;
      }
      const listed: ListedVector = { id };
      if (options.includeVectors) listed.vector = this.kernel!.readRow(row);
      if (options.includeMetadata) listed.metadata = this.metadata.json(row);
      if (options.includeText) listed.text = this.texts.json(row);
      vectors.push(listed);
      last = seq;
      return true;
    });
    return { vectors, nextCursor: more ? encodeCursor(this.epoch, last) : null };
  }

  /**
   * Open a consistent snapshot of every vector, to read a batch at a time
   * (see IndexExport). `onCopies` is told the estimated heap of each copy it
   * keeps of a vector changed before it reached it, and (negative) of each
   * one it lets go (emitted, or closed): the server counts them in its budget.
   */
  openExport(onCopies?: (bytes: number) => void): IndexExport {
    // Its upTo would leave out the rows already written: every caller waits for settled() first.
    if (this.inSlices) throw new Error('an export was opened while an upsert is written in slices');
    const open: OpenExport = { position: -1, upTo: this.nextSeq - 1, saved: new Map(), onCopies };
    this.openExports.add(open);
    // Compactions keep the entries of the copies it saved, so it emits them in order.
    const unpin = this.order.pin((seq) => open.saved.has(seq));
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.openExports.delete(open);
      unpin();
      let kept = 0;
      for (const copy of open.saved.values()) kept += copy.bytes;
      open.saved.clear();
      if (kept > 0) onCopies?.(-kept);
    };
    const next = (max: number): ExportedVector[] => {
      const out: ExportedVector[] = [];
      if (closed) return out;
      this.order.walk(open.position, open.upTo, (id, seq) => {
        const saved = open.saved.get(seq);
        if (saved) {
          open.saved.delete(seq);
          onCopies?.(-saved.bytes);
          out.push(saved.vector);
        } else if (this.order.seqOf(id) === seq) {
          out.push(this.exportedRow(this.rowOf.get(id)!));
        }
        open.position = seq;
        return out.length < max;
      });
      if (out.length === 0) close();
      return out;
    };
    return { config: this.config, count: this.size, next, close };
  }

  private exportedRow(row: number): ExportedVector {
    const exported: ExportedVector = { id: this.idOf[row], vector: this.kernel!.readRow(row), metadata: this.metadata.json(row) };
    const text = this.texts.json(row);
    if (text) exported.text = text;
    return exported;
  }

  /** Before the vector `id` (at `row`) changes: open exports yet to reach its current version keep a copy. */
  private beforeChange(id: string, row: number): void {
    if (this.openExports.size === 0) return;
    const seq = this.order.seqOf(id);
    if (seq === undefined) return;
    for (const open of this.openExports) {
      if (seq > open.position && seq <= open.upTo && !open.saved.has(seq)) {
        // The copy's values, its id, and its metadata (a view of its record, which keeps the record's bytes alive).
        const textBytes = this.texts.has(row) ? METADATA_VIEW_BYTES + this.texts.jsonLength(row) : 0;
        const bytes = this.kernel!.dim * 4 + TYPED_ARRAY_BYTES + rowHeapBytes(id) + METADATA_VIEW_BYTES + this.metadata.jsonLength(row) + textBytes;
        open.saved.set(seq, { vector: this.exportedRow(row), bytes });
        open.onCopies?.(bytes);
      }
    }
  }

  /** Matching rows in ascending order, or null when every row matches (the kernel then scans without a list). */
  private rowsMatching(filter: FilterNode): Int32Array | null {
    const bitmap = this.metadata.evaluate(filter, this.size);
    const count = bitmap.count();
    return count === this.size ? null : bitmap.rows(count);
  }

  private removeRow(row: number): void {
    this.version++;
    this.beforeChange(this.idOf[row], row);
    this.order.remove(this.idOf[row]);
    const last = this.idOf.length - 1;
    this.rowOf.delete(this.idOf[row]);
    this.rowsHeap -= rowHeapBytes(this.idOf[row]);
    this.metadata.remove(row, last);
    this.texts.remove(row, last);
    if (row !== last) {
      this.kernel!.moveRow(last, row);
      const movedId = this.idOf[last];
      this.idOf[row] = movedId;
      this.rowOf.set(movedId, row);
    }
    this.idOf.pop();
  }

  /** Check dimensions, metric and zero vectors for a whole batch; returns the float32 rows. */
  private validateUpsert(records: VectorInput[], options: UpsertOptions, pathOf: (i: number) => string) {
    const locked = this.config;
    if (options.metric !== undefined && locked.metric !== null && options.metric !== locked.metric) {
      throw apiError('METRIC_LOCKED', `the session metric is ${locked.metric}; reset the index to change it`, {
        path: '/metric',
        expected: locked.metric,
        actual: options.metric,
      });
    }
    if (options.vectorType !== undefined && locked.dimensions !== null && options.vectorType !== locked.vectorType) {
      throw apiError('VECTOR_TYPE_LOCKED', `the session vectorType is ${locked.vectorType}; reset the index to change it`, {
        path: '/vectorType',
        expected: locked.vectorType,
        actual: options.vectorType,
      });
    }
    if (options.dimensions !== undefined && locked.dimensions !== null && options.dimensions !== locked.dimensions) {
      throw apiError('DIMENSION_MISMATCH', `the session dimension is ${locked.dimensions}; reset the index to change it`, {
        path: '/dimensions',
        expected: locked.dimensions,
        actual: options.dimensions,
      });
    }
    const dimensions = locked.dimensions ?? options.dimensions ?? records[0]?.vector.length;
    const metric = locked.metric ?? options.metric ?? SPEC_LIMITS.defaultMetric;
    const vectorType = locked.dimensions !== null ? locked.vectorType : (options.vectorType ?? SPEC_LIMITS.defaultVectorType);
    if (dimensions === undefined) {
      throw apiError('VALIDATION_ERROR', 'at least one vector is required', { path: '/vectors' });
    }
    const source = locked.dimensions !== null ? 'the session dimension' : options.dimensions !== undefined ? 'dimensions' : "the first vector's length";
    // Float32Arrays (the server's body reader makes them) are used as they
    // are, not copied: the plan only reads them, and every caller applies it
    // in the same synchronous step. The rest share one packed allocation.
    let packed: Float32Array | null = null;
    // A plain loop, no closure per record: batches hold up to thousands of
    // records, and the error path is built only for an error.
    const vectors = new Array<Float32Array>(records.length);
    for (let i = 0; i < records.length; i++) {
      const { vector } = records[i];
      if (vector.length !== dimensions) {
        throw apiError('DIMENSION_MISMATCH', `vector has ${vector.length} values; ${source} is ${dimensions}`, {
          path: pathOf(i) + '/vector',
          expected: dimensions,
          actual: vector.length,
        });
      }
      let values: Float32Array;
      if (vector instanceof Float32Array) {
        values = vector;
      } else {
        packed ??= new Float32Array(records.length * dimensions);
        values = packed.subarray(i * dimensions, (i + 1) * dimensions);
        values.set(vector);
      }
      if (metric === 'cosine' && isZero(values)) throw zeroVector(pathOf(i) + '/vector');
      vectors[i] = values;
    }
    return { dimensions, metric, vectorType, vectors };
  }

  /** Queries packed back to back as float32, checked against the session dimension. */
  private toFloat32Queries(queries: ArrayLike<number>[], dim: number, pathOf: (j: number) => string): Float32Array {
    // One float32 query (POST /search from the server's body reader) is used as it is: the kernel only reads it.
    const single = queries.length === 1 && queries[0] instanceof Float32Array ? queries[0] : null;
    const packed = single ?? new Float32Array(queries.length * dim);
    const source = this.initialized ? 'the session dimension' : "the first query vector's length";
    for (let j = 0; j < queries.length; j++) {
      const query = queries[j];
      if (query.length !== dim) {
        throw apiError('DIMENSION_MISMATCH', `query vector has ${query.length} values; ${source} is ${dim}`, {
          path: pathOf(j),
          expected: dim,
          actual: query.length,
        });
      }
      let values = single;
      if (!values) {
        values = packed.subarray(j * dim, (j + 1) * dim);
        // TypedArray#set from a JS array takes V8's generic path (~30 ns a value); a loop is ~1.
        if (ArrayBuffer.isView(query)) values.set(query);
        else for (let i = 0; i < dim; i++) values[i] = query[i];
      }
      if (this.config.metric === 'cosine') assertNonZero(values, () => pathOf(j));
    }
    return packed;
  }
}

/** The configuration of a new (or reset) index. */
const NEW_CONFIG: IndexConfig = Object.freeze({ dimensions: null, metric: null, vectorType: SPEC_LIMITS.defaultVectorType, analyzer: null });

/** In ASCII text, what JSON.stringify escapes: anything but space to DEL, less the quote and the backslash. */
const JSON_ESCAPED = /[^ !#-[\]-\u007f]/;

/** A text as the store writes it: its JSON literal and its terms under `analyzer`. `bytes`: its UTF-8 length. */
export function prepareText(text: string, analyzer: AnalyzerName, bytes = utf8Length(text), terms?: JoinedTerms): PreparedText {
  // UTF-8 is as long as UTF-16 only for ASCII: then the analyzer skips its checks, and the literal is
  // the text between quotes unless it holds a character JSON escapes (made only then).
  const ascii = bytes === text.length;
  const quoted = ascii && !JSON_ESCAPED.test(text);
  const literal = quoted ? text : JSON.stringify(text);
  const literalBytes = quoted ? text.length + 2 : ascii ? literal.length : utf8Length(literal);
  return { literal, quoted, literalBytes, textBytes: bytes, terms: terms ?? termBytes(analyzer, text, ascii) };
}

/** MAX_TEXT_BYTES's default (config.ts), for an index made without one. */
const DEFAULT_MAX_TEXT_BYTES = 32_768;

/** Bytes of the metadata and texts of an answer's hits. */
interface AnswerSizes {
  metadataJsonBytes: number;
  textJsonBytes: number;
}

const BM25 = { k1: SPEC_LIMITS.bm25K1, b: SPEC_LIMITS.bm25B };
const DEFAULT_FUSION: Fusion = { method: 'rrf', k: SPEC_LIMITS.defaultRrfK };

function fusionWithoutBothArms() {
  return apiError('VALIDATION_ERROR', 'fusion applies to a hybrid search: give both query vectors (or ids) and query texts', { path: '/fusion' });
}

/** The metadata of a record given without any. */
const NO_METADATA: Metadata = Object.freeze({});
const noop = () => {};

/** A MetadataJson and its Uint8Array view. */
const METADATA_VIEW_BYTES = 160;

/** A stored vector's id and bookkeeping in the JS heap (its metadata aside). */
const rowHeapBytes = (id: string) => ROW_HEAP_BYTES + stringHeapBytes(id);

function isEmpty(metadata: Metadata): boolean {
  for (const key in metadata) if (Object.hasOwn(metadata, key)) return false;
  return true;
}

/**
 * A component this large makes the sum of squares at least 1e-60, far from
 * both zero and the ~1e-77 below which the inverse norm overflows float32.
 */
const SURELY_NONZERO = 1e-30;

/** Cosine is undefined for a zero vector (and unstable for one too small for float32). */
function isZero(values: Float32Array): boolean {
  // Almost every vector has a large component among its first few; only the
  // rest need the norm (the kernel computes it again when the row is written).
  for (let i = 0; i < values.length; i++) {
    const magnitude = Math.abs(values[i]);
    if (magnitude >= SURELY_NONZERO && magnitude < Infinity) return false;
  }
  const inv = inverseNorm(values);
  return inv === 0 || !Number.isFinite(Math.fround(inv));
}

function zeroVector(path: string) {
  return apiError('ZERO_VECTOR', 'cosine similarity is undefined for a zero vector', { path });
}

function assertNonZero(values: Float32Array, path: () => string): void {
  if (isZero(values)) throw zeroVector(path());
}
