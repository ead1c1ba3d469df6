// VectorIndex: one session's vectors, and their only writer. It holds the
// kernel instance (the rows' values), the row table, the metadata and text
// stores and the config, and changes them together; reading is done by
// functions over its read side (IndexRead): upsert-plan.ts, search/,
// listing.ts, export-snapshots.ts.
//
// Every mutation validates its whole input before it writes anything (an
// upsert is planned, then applied), so a failed call leaves the index
// unchanged. Environment-free: the server and the browser SDK share it.
import { SPEC_LIMITS, type AnalyzerName } from '../config.js';
import { KernelInstance } from '../kernel/kernel-instance.js';
import type { MemoryGuard } from '../kernel/search-request.js';
import type { Slices } from '../limits/slices.js';
import { analyzerFor } from './config-lock.js';
import { ExportSnapshots } from './export-snapshots.js';
import { parseFilter, type Filter, type Metadata } from './filter.js';
import { float32ArrayToNumbers } from './float32.js';
import type { IndexState } from './index-read.js';
import { jsonText } from './json-size.js';
import { newEpoch } from './list-cursor.js';
import { countMatching, idsMatching, listPage } from './listing.js';
import type { MetadataJson } from './metadata/metadata-json.js';
import { MetadataStore } from './metadata/metadata-store.js';
import { RowTable } from './row-table.js';
import { planSearchByIds } from './search/by-ids.js';
import { planSearch } from './search/plan-search.js';
import { TextStore } from './text/text-store.js';
import { UpsertApplier } from './upsert-apply.js';
import type {
  IndexConfig,
  IndexExport,
  IndexStats,
  ListOptions,
  ListPage,
  SearchOptions,
  SearchOutput,
  SearchPlan,
  StoredVector,
  UpsertOptions,
  UpsertPlan,
  UpsertResult,
  VectorInput,
} from './types.js';
import { isEmpty, measureMetadata, metadataBytesUpper, planUpsert } from './upsert-plan.js';

export class VectorIndex {
  /** What the index holds; read by the planning, search, listing and export modules, changed only here. */
  private readonly state: IndexState;
  private readonly exports: ExportSnapshots;
  /** Tags this index's list cursors. */
  private readonly epoch = newEpoch();
  private readonly applier: UpsertApplier;
  /** Told the id of a kernel instance the index lets go of (reset), so a kernel pool can drop it too. */
  kernelDropped: ((kernelId: number) => void) | null = null;

  constructor(
    module: WebAssembly.Module,
    /** MAX_VECTORS_PER_SESSION (raised only while a reopen replays rows acknowledged under a higher one: allowRows()). */
    maxVectors: number,
    /** UTF-8 bytes of the longest text a vector may have (MAX_TEXT_BYTES). */
    maxTextBytes: number = DEFAULT_MAX_TEXT_BYTES,
  ) {
    const metadata = new MetadataStore(SPEC_LIMITS.maxIndexedValueBytes);
    const rows = new RowTable();
    this.state = { config: NEW_CONFIG, kernel: null, rows, metadata, texts: new TextStore(), memoryGuard: null, maxVectors, maxTextBytes, version: 0 };
    this.exports = new ExportSnapshots(this.state);
    this.applier = new UpsertApplier(module, this.state, this.exports);
  }

  get maxVectors(): number {
    return this.state.maxVectors;
  }

  set maxVectors(rows: number) {
    this.state.maxVectors = rows;
  }

  get maxTextBytes(): number {
    return this.state.maxTextBytes;
  }

  set maxTextBytes(bytes: number) {
    this.state.maxTextBytes = bytes;
  }

  /**
   * Asked before a search grows the linear memory for its scratch (the
   * server's memory budget; upserts are checked by their caller with
   * memoryBytesAfter). Searches that fit in memory already held never call it.
   */
  set memoryGuard(guard: MemoryGuard | null) {
    this.state.memoryGuard = guard;
  }

  get size(): number {
    return this.state.rows.size;
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
      metadataBytes: metadata.byteLength,
      textBytes: texts.byteLength,
      metadata: { jsonBytes: metadata.jsonBytes, indexEntries: metadata.entryCount },
      text: { jsonBytes: texts.jsonBytes, indexBytes: texts.indexByteLength, terms: texts.termCount, documents: texts.documentCount },
    };
  }

  /** UTF-8 bytes of the text of `id` as a JSON string literal (0 when it has none). */
  textJsonBytes(id: string): number {
    const row = this.state.rows.rowOf(id);
    return row === undefined ? 0 : this.state.texts.jsonLength(row);
  }

  /** UTF-8 bytes of the metadata of `id` as JSON (0 when there is no such vector). */
  metadataJsonBytes(id: string): number {
    const row = this.state.rows.rowOf(id);
    return row === undefined ? 0 : this.state.metadata.jsonLength(row);
  }

  /** Bytes of linear memory held once `plan` is applied (for the server's memory budget). */
  memoryBytesAfter(plan: UpsertPlan): number {
    const { kernel, maxVectors } = this.state;
    return kernel ? kernel.memoryBytesFor(plan.rowsNeeded) : KernelInstance.memoryBytesForNew(plan.dimensions, plan.rowsNeeded, maxVectors, plan.vectorType);
  }

  /** A reopen's replay: let the index hold `rows` rows, acknowledged when MAX_VECTORS_PER_SESSION was higher than it is now. */
  allowRows(rows: number): void {
    if (rows <= this.state.maxVectors) return;
    this.state.maxVectors = rows;
    const { kernel } = this.state;
    if (kernel) kernel.maxCapacity = Math.max(kernel.maxCapacity, rows);
  }

  /** Make room for `rows` rows at once (up to maxVectors), so rows added later move no stored data; a no-op before the first add. */
  reserve(rows: number): void {
    this.state.kernel?.ensureCapacity(Math.min(rows, this.state.maxVectors));
  }

  has(id: string): boolean {
    return this.state.rows.rowOf(id) !== undefined;
  }

  get(id: string): StoredVector | undefined {
    const { kernel, rows, metadata, texts } = this.state;
    const row = rows.rowOf(id);
    if (row === undefined || !kernel) return undefined;
    const stored: StoredVector = { id, vector: float32ArrayToNumbers(kernel.readRow(row)), metadata: metadata.json(row) };
    const text = texts.json(row);
    if (text) stored.text = text;
    return stored;
  }

  /** The metadata of `id` as stored (its JSON bytes; .value() parses them). */
  getMetadata(id: string): MetadataJson | undefined {
    const row = this.state.rows.rowOf(id);
    return row === undefined ? undefined : this.state.metadata.json(row);
  }

  /** Replace the metadata of `id`; false when there is no such vector. */
  setMetadata(id: string, metadata: Metadata): boolean {
    const row = this.state.rows.rowOf(id);
    if (row === undefined) return false;
    this.state.version++;
    this.exports.beforeChange(id, row);
    this.state.metadata.set(row, metadata, isEmpty(metadata) ? null : jsonText(metadata), this.size);
    return true;
  }

  /** The most bytes setMetadata(id, metadata) can add to the metadata store (for the server's memory budget). */
  metadataBytesUpper(metadata: Metadata): number {
    return metadataBytesUpper(this.state, metadata);
  }

  /** Add or replace vectors, all or nothing. */
  upsert(records: VectorInput[], options: UpsertOptions = {}): UpsertResult {
    return this.applyUpsert(this.prepareUpsert(records, options));
  }

  /** Check a batch against the session without changing anything (upsert-plan.ts); throws the first problem found. */
  prepareUpsert(records: VectorInput[], options: UpsertOptions = {}): UpsertPlan {
    return planUpsert(this.state, records, options);
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
   * Write a batch that prepareUpsert accepted (with no change to the index in
   * between); see UpsertApplier.applyUpsert for `grown` (the journal) and `slices`.
   */
  applyUpsert(plan: UpsertPlan, grown?: () => void): UpsertResult;
  applyUpsert(plan: UpsertPlan, grown: () => Promise<void> | undefined, slices?: Slices): UpsertResult | Promise<UpsertResult>;
  applyUpsert(plan: UpsertPlan, grown?: () => Promise<void> | undefined | void, slices?: Slices): UpsertResult | Promise<UpsertResult> {
    return this.applier.applyUpsert(plan, grown as () => Promise<void> | undefined, slices);
  }

  /** An upsert being written in slices, until it is all in (UpsertApplier.applying); null when none is. */
  get applying(): Promise<unknown> | null {
    return this.applier.applying;
  }

  /** Once no upsert is being written in slices (undefined when none is: the caller goes on in its tick). */
  settled(): Promise<void> | undefined {
    return this.applier.settled();
  }

  /** Delete the given ids; ids that are not stored are reported, not an error. */
  delete(ids: string[]): { deleted: number; notFound: string[] } {
    let deleted = 0;
    const notFound: string[] = [];
    // A repeated id counts once: it is deleted (or not found) once, never both.
    for (const id of new Set(ids)) {
      const row = this.state.rows.rowOf(id);
      if (row === undefined) {
        notFound.push(id);
        continue;
      }
      this.removeRow(id, row);
      deleted++;
    }
    this.state.texts.settle(this.size);
    return { deleted, notFound };
  }

  /** Row `row` (of `id`) out of every store: the last row moves into its place (the row table's move). */
  private removeRow(id: string, row: number): void {
    this.state.version++;
    this.exports.beforeChange(id, row);
    const { kernel, rows, metadata, texts } = this.state;
    const move = rows.remove(row);
    metadata.remove(move.row, move.last);
    texts.remove(move.row, move.last);
    if (move.row !== move.last) kernel!.moveRow(move.last, move.row);
  }

  /** Remove every vector; dimensions and metric stay. Returns how many were removed. */
  clear(): number {
    const removed = this.size;
    this.state.version++;
    if (this.exports.any)
      this.state.rows.forEach((id, row) => {
        this.exports.beforeChange(id, row);
      });
    this.state.rows.clear();
    this.state.metadata.clear();
    this.state.texts.clear();
    return removed;
  }

  /** Drop everything, the memory and the configuration included. */
  reset(): number {
    const removed = this.clear();
    if (this.state.kernel) this.kernelDropped?.(this.state.kernel.id);
    this.state.kernel = null;
    this.state.config = NEW_CONFIG;
    return removed;
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

  /** One page of the vectors in insertion order (listing.ts). */
  list(options: ListOptions): ListPage {
    return listPage(this.state, this.epoch, options);
  }

  /**
   * Open a consistent snapshot of every vector, to read a batch at a time
   * (see IndexExport). `onCopies` is told the estimated heap of each copy it
   * keeps of a vector changed before it reached it, and (negative) of each
   * one it lets go (emitted, or closed): the server counts them in its budget.
   */
  openExport(onCopies?: (bytes: number) => void): IndexExport {
    // Its upTo would leave out the rows already written: every caller waits for settled() first.
    if (this.applier.applying) throw new Error('an export was opened while an upsert is written in slices');
    return this.exports.openExport(onCopies);
  }
}

/** The configuration of a new (or reset) index. */
const NEW_CONFIG: IndexConfig = Object.freeze({ dimensions: null, metric: null, vectorType: SPEC_LIMITS.defaultVectorType, analyzer: null });

/** MAX_TEXT_BYTES's default (config.ts), for an index made without one. */
const DEFAULT_MAX_TEXT_BYTES = 32_768;
