// The read side of an index, as methods: what a caller asks of a session's
// vectors without changing them (size and stats, a vector by id, planning an
// add, search, count, list). Each forwards to its room (upsert-plan.ts,
// search/, listing.ts) over the state as IndexRead; VectorIndex extends it
// with the writes, and is the only class that changes the state.
import type { AnalyzerName } from '../config.js';
import { KernelInstance } from '../kernel/kernel-instance.js';
import { analyzerFor } from './config-lock.js';
import { parseFilter, type Filter, type Metadata } from './filter.js';
import { float32ArrayToNumbers } from './float32.js';
import type { IndexState } from './index-read.js';
import { newEpoch } from './list-cursor.js';
import { liveCount, liveRowOf } from './live-rows.js';
import type { RowTtl } from './row-expiry.js';
import { countMatching, idsMatching, listPage, listPageSteps } from './listing.js';
import { facetSteps, type FacetOptions, type FacetResult } from './facet.js';
import type { RunCache } from './ordered-listing.js';
import type { MetadataJson } from './metadata/metadata-json.js';
import { planSearchByIds } from './search/by-ids.js';
import { planSearch } from './search/plan-search.js';
import type {
  IndexConfig,
  IndexStats,
  ListOptions,
  ListPage,
  SearchOptions,
  SearchOutput,
  SearchPlan,
  StoredVector,
  UpsertOptions,
  UpsertPlan,
  VectorInput,
} from './types.js';
import { measureMetadata, metadataBytesUpper, planUpsert, planUpsertSteps } from './upsert-plan.js';

export class IndexReader {
  /** Tags this index's list cursors. */
  private readonly epoch = newEpoch();
  /** The values in order an orderBy listing walked last, for its next pages while nothing is written (ordered-listing.ts). */
  private readonly runs: RunCache = { run: null };

  /** `state`: what the index holds, changed only by the subclass (VectorIndex). */
  protected constructor(protected readonly state: IndexState) {}

  get size(): number {
    return this.state.rows.size;
  }

  /** The time by the index's clock. */
  now(): number {
    return this.state.clock();
  }

  /** Vectors live now: size less the rows expired and not yet swept. */
  get liveSize(): number {
    return liveCount(this.state);
  }

  /** Whether any row has expired and waits for a sweep to free it. */
  get expiredWaiting(): boolean {
    return this.state.expiry.rowsWithTtl > 0 && this.state.expiry.anyExpired(this.state.clock(), this.size);
  }

  /** Whether an expired row waiting for the sweep has a text: BM25's N, df and avgdl still count it until then. */
  get expiredTextWaiting(): boolean {
    if (!this.expiredWaiting) return false;
    const { texts, expiry } = this.state;
    return expiry.expiredRows(this.state.clock(), this.size, Number.POSITIVE_INFINITY).some((row) => texts.has(row));
  }

  get initialized(): boolean {
    return this.state.config.dimensions !== null;
  }

  /** The configuration (replaced, never mutated, on each change, so no copy is needed). */
  getConfig(): Readonly<IndexConfig> {
    return this.state.config;
  }

  /** The memory, heap and stores the index holds, as one object. */
  stats(): IndexStats {
    const { kernel, rows, metadata, texts } = this.state;
    return {
      memoryBytes: kernel?.memoryBytes ?? 0,
      usedBytes: kernel?.usedBytes ?? 0,
      rowCapacity: kernel?.capacity ?? 0,
      heapBytes: rows.heapBytes + metadata.heapBytes + texts.heapBytes,
      metadataBytes: metadata.byteLength + this.state.expiry.byteLength,
      textBytes: texts.byteLength,
      metadata: { jsonBytes: metadata.jsonBytes, indexEntries: metadata.entryCount },
      text: { jsonBytes: texts.jsonBytes, indexBytes: texts.indexByteLength, terms: texts.termCount, documents: texts.documentCount },
    };
  }

  /** UTF-8 bytes of the text of `id` as a JSON string literal (0 when it has none). */
  textJsonBytes(id: string): number {
    const row = liveRowOf(this.state, id);
    return row === undefined ? 0 : this.state.texts.jsonLength(row);
  }

  /** UTF-8 bytes of the metadata of `id` as JSON (0 when there is no such vector). */
  metadataJsonBytes(id: string): number {
    const row = liveRowOf(this.state, id);
    return row === undefined ? 0 : this.state.metadata.jsonLength(row);
  }

  /** Bytes of linear memory held once `plan` is applied (for the server's memory budget). */
  memoryBytesAfter(plan: UpsertPlan): number {
    const { kernel, maxVectors } = this.state;
    return kernel ? kernel.memoryBytesFor(plan.rowsNeeded) : KernelInstance.memoryBytesForNew(plan.dimensions, plan.rowsNeeded, maxVectors, plan.vectorType);
  }

  has(id: string): boolean {
    return liveRowOf(this.state, id) !== undefined;
  }

  get(id: string): StoredVector | undefined {
    const { kernel, metadata, texts, expiry } = this.state;
    const row = liveRowOf(this.state, id);
    if (row === undefined || !kernel) return undefined;
    const stored: StoredVector = { id, vector: float32ArrayToNumbers(kernel.readRow(row)), metadata: metadata.json(row) };
    const text = texts.json(row);
    if (text) stored.text = text;
    const ttl = expiry.ttlOf(row);
    if (ttl) Object.assign(stored, ttl);
    return stored;
  }

  /** The ttl and expiry of the live vector `id` (null: it has none; undefined: no such live vector). */
  ttlOf(id: string): RowTtl | null | undefined {
    const row = liveRowOf(this.state, id);
    return row === undefined ? undefined : this.state.expiry.ttlOf(row);
  }

  /** The metadata of `id` as stored (its JSON bytes; .value() parses them). */
  getMetadata(id: string): MetadataJson | undefined {
    const row = liveRowOf(this.state, id);
    return row === undefined ? undefined : this.state.metadata.json(row);
  }

  /** The most bytes setMetadata(id, metadata) can add to the metadata store (for the server's memory budget). */
  metadataBytesUpper(metadata: Metadata): number {
    return metadataBytesUpper(this.state, metadata);
  }

  /** Check a batch against the session without changing anything (upsert-plan.ts); throws the first problem found. */
  prepareUpsert(records: VectorInput[], options: UpsertOptions = {}): UpsertPlan {
    return planUpsert(this.state, records, options);
  }

  /** prepareUpsert() in steps, to run in slices while the session's writes wait (upsert-plan.ts: planUpsertSteps). */
  prepareUpsertSteps(records: VectorInput[], options: UpsertOptions = {}): Generator<void, UpsertPlan, void> {
    return planUpsertSteps(this.state, records, options);
  }

  /** A record's metadata as the store takes it (upsert-plan.ts; pure: made ahead of the turn too). */
  measureMetadata(metadata: Metadata | undefined): ReturnType<typeof measureMetadata> {
    return measureMetadata(this.state, metadata);
  }

  /** The analyzer a search analyses its query texts with now. */
  get queryAnalyzer(): AnalyzerName {
    return analyzerFor(this.state.config);
  }

  /** The analyzer an upsert with `options` would analyse its texts with now. */
  textAnalyzerFor(options: UpsertOptions): AnalyzerName {
    return analyzerFor(this.state.config, options);
  }

  /** Whether nothing changed the index since `plan` was prepared (applyUpsert takes only such a plan). */
  isCurrent(plan: UpsertPlan): boolean {
    return plan.version === this.state.version;
  }

  /**
   * Exact k-nearest search for each query; with queryTexts, a keyword
   * (queries null or empty) or hybrid search (planSearch). An index with no
   * vectors returns empty lists.
   */
  search(queries: ArrayLike<number>[] | null, options: SearchOptions = {}): SearchOutput {
    return this.planSearch(queries, options).run();
  }

  /**
   * search(), checked and laid out but not yet run (search/plan-search.ts):
   * a plan to run here or on a kernel pool (its answer at once when there is
   * nothing to scan). Run it before the index changes (the caller keeps
   * writes away meanwhile).
   */
  planSearch(queries: ArrayLike<number>[] | null, options: SearchOptions = {}): SearchPlan {
    return planSearch(this.state, queries, options);
  }

  /** Stored vectors as the queries, each left out of its own results (search/by-ids.ts). */
  searchByIds(ids: string[], options: SearchOptions = {}): SearchOutput {
    return this.planSearchByIds(ids, options).run();
  }

  /** searchByIds() as planSearch() gives search(). */
  planSearchByIds(ids: string[], options: SearchOptions = {}): SearchPlan {
    return planSearchByIds(this.state, ids, options);
  }

  /**
   * Read ahead, in slices that give the event loop back, the rows `filter`
   * must read (long values, string ranges), for the next call with it; null
   * when there is nothing to read. Keep writes away until that call.
   */
  prepareFilter(filter: Filter | undefined): Promise<void> | null {
    if (!filter || this.size === 0) return null;
    return this.state.metadata.prepare(parseFilter(filter), this.size);
  }

  /** How many vectors match `filter` (all of them without one). */
  count(filter?: Filter): number {
    return countMatching(this.state, filter);
  }

  /** Ids of the vectors matching `filter`, in row order (what a delete by filter removes). */
  idsMatching(filter: Filter): string[] {
    return idsMatching(this.state, filter);
  }

  /** Counts of the values at a path among the rows a filter matches (facet.ts), as steps to run at once (runSteps) or in slices; keep writes away until done. */
  facetSteps(options: FacetOptions): Generator<void, FacetResult> {
    return facetSteps(this.state, options);
  }

  /** One page of the vectors in insertion order, or in orderBy's (listing.ts). */
  list(options: ListOptions): ListPage {
    return listPage(this.state, this.epoch, options, this.runs);
  }

  /** list() as steps, to run in slices (Slices.run) with writes kept away until done. */
  listSteps(options: ListOptions): Generator<void, ListPage> {
    return listPageSteps(this.state, this.epoch, options, this.runs);
  }
}
