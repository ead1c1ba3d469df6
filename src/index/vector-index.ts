// VectorIndex: one session's vectors, and their only writer. Its state (the
// kernel instance with the rows' values, the row table, the metadata and text
// stores, the config) is changed here and nowhere else, the stores together;
// the reads are IndexReader's (index-reader.ts), over the state as IndexRead.
//
// Every mutation validates its whole input before it writes anything (an
// upsert is planned, then applied), so a failed call leaves the index
// unchanged. Environment-free: the server and the browser SDK share it.
import { SPEC_LIMITS } from '../config.js';
import type { MemoryGuard } from '../kernel/search-request.js';
import type { Slices } from '../limits/slices.js';
import { runSteps } from '../limits/steps.js';
import { ExportSnapshots } from './export-snapshots.js';
import type { Metadata } from './filter.js';
import { IndexReader } from './index-reader.js';
import { jsonText } from './json-size.js';
import { MetadataStore } from './metadata/metadata-store.js';
import { RowExpiry } from './row-expiry.js';
import { RowTable } from './row-table.js';
import { TextStore } from './text/text-store.js';
import { UpsertApplier } from './upsert-apply.js';
import type { IndexConfig, IndexExport, UpsertOptions, UpsertPlan, UpsertResult, VectorInput } from './types.js';
import { isEmpty } from './upsert-plan.js';

export class VectorIndex extends IndexReader {
  private readonly exports: ExportSnapshots;
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
    super({
      config: NEW_CONFIG,
      kernel: null,
      rows: new RowTable(),
      metadata: new MetadataStore(SPEC_LIMITS.maxIndexedValueBytes),
      texts: new TextStore(),
      expiry: new RowExpiry(),
      clock: Date.now,
      memoryGuard: null,
      maxVectors,
      maxTextBytes,
      version: 0,
    });
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

  /** The time reads and writes take (ms since the epoch; Date.now unless a test or the server's store sets its own). */
  set clock(clock: () => number) {
    this.state.clock = clock;
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

  /** Replace the metadata of `id`; false when there is no such vector. */
  setMetadata(id: string, metadata: Metadata): boolean {
    // Its ttl and expiry stay as they are (a metadata change renews nothing). The caller checked it is live
    // (SessionWrites, LocalIndex): applied to the stored row, as a replay applies it whatever the clock reads then.
    const row = this.state.rows.rowOf(id);
    if (row === undefined) return false;
    this.state.version++;
    this.exports.beforeChange(id, row);
    this.state.metadata.set(row, metadata, isEmpty(metadata) ? null : jsonText(metadata), this.size);
    return true;
  }

  /** Before planning an add of `records` rows: free the expired rows at once if they would take the room it needs (a sweep may not have come yet). */
  makeRoomFor(records: number): void {
    if (this.size + records > this.state.maxVectors) this.removeAllExpired();
  }

  /** Free every row expired now, in one step (LocalIndex before each write; the server sweeps in slices instead). */
  removeAllExpired(): void {
    if (!this.expiredWaiting) return;
    this.removeExpired();
    this.state.texts.settle(this.size);
  }

  /** Add or replace vectors, all or nothing. */
  upsert(records: VectorInput[], options: UpsertOptions = {}): UpsertResult {
    return this.applyUpsert(this.prepareUpsert(records, options));
  }

  /** Write a batch that prepareUpsert accepted (with no change to the index in between), whole; see UpsertApplier.applyUpsert. */
  applyUpsert(plan: UpsertPlan, grown?: () => void): UpsertResult {
    return this.applier.applyUpsert(plan, grown);
  }

  /** The same in slices, after a log that may be written in pieces; see UpsertApplier.applyUpsertSliced. */
  applyUpsertSliced(plan: UpsertPlan, slices: Slices, logged?: () => Promise<void> | undefined): UpsertResult | Promise<UpsertResult> {
    return this.applier.applyUpsertSliced(plan, slices, logged);
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
    return runSteps(this.deleteSteps(ids));
  }

  /**
   * delete() with a pause after every DELETE_STEP_ROWS rows removed and
   * every bounded step of the keyword index's compaction it may start (a
   * delete-many of 1,000 rows of 50k texts rewrote every posting list in one
   * piece). Until it is done the caller holds the session's turn.
   */
  *deleteSteps(ids: string[]): Generator<void, { deleted: number; notFound: string[] }, void> {
    let deleted = 0;
    let removed = 0;
    const notFound: string[] = [];
    // A repeated id counts once: it is deleted (or not found) once, never both.
    const now = this.state.clock();
    for (const id of new Set(ids)) {
      const row = this.state.rows.rowOf(id);
      const live = row !== undefined && this.state.expiry.isLive(row, now);
      if (!live) notFound.push(id);
      if (row === undefined) continue;
      // An expired one is not found, but freed now all the same.
      this.removeRow(id, row);
      if (live) deleted++;
      if (++removed % DELETE_STEP_ROWS === 0) yield;
    }
    yield* this.state.texts.settleSteps(this.size);
    return { deleted, notFound };
  }

  /** Row `row` (of `id`) out of every store: the last row moves into its place (the row table's move). */
  private removeRow(id: string, row: number): void {
    this.state.version++;
    this.exports.beforeChange(id, row);
    const { kernel, rows, metadata, texts, expiry } = this.state;
    const move = rows.remove(row);
    metadata.remove(move.row, move.last);
    texts.remove(move.row, move.last);
    expiry.remove(move);
    if (move.row !== move.last) kernel!.moveRow(move.last, move.row);
  }

  /** Remove every vector; dimensions and metric stay. Returns how many were removed. */
  clear(): number {
    const removed = this.liveSize;
    this.state.version++;
    if (this.exports.any)
      this.state.rows.forEach((id, row) => {
        this.exports.beforeChange(id, row);
      });
    this.state.rows.clear();
    this.state.metadata.clear();
    this.state.texts.clear();
    this.state.expiry.clear();
    return removed;
  }

  /** Give the stored vectors of `ids` the expiry of the same index in `expiresAt` (a renew change: changes.ts renewChange). */
  renew(ids: readonly string[], expiresAt: readonly number[]): number {
    let renewed = 0;
    for (let i = 0; i < ids.length; i++) {
      const row = this.state.rows.rowOf(ids[i]);
      const ttl = row === undefined ? null : this.state.expiry.ttlOf(row);
      if (row === undefined || !ttl) continue;
      this.state.version++;
      this.exports.beforeChange(ids[i], row);
      this.state.expiry.set(row, { ttlMs: ttl.ttlMs, expiresAt: expiresAt[i] });
      renewed++;
    }
    return renewed;
  }

  /**
   * Remove rows expired now, highest first, until `enough()` says so (asked every few rows; the sweep's slice) or none is
   * left: the sweep frees their memory, reads left them out already. How many. Then settleSteps().
   */
  removeExpired(enough: () => boolean = () => false, max = Number.POSITIVE_INFINITY): number {
    const rows = this.state.expiry.expiredRows(this.state.clock(), this.size, max);
    let removed = 0;
    while (removed < rows.length) {
      const row = rows[removed++];
      this.removeRow(this.state.rows.idAt(row), row);
      if ((removed & 15) === 0 && enough()) break;
    }
    return removed;
  }

  /** After removeExpired: the keyword index's compaction, in steps (TextStore.settleSteps). */
  settleSteps(): Generator<void, void, void> {
    return this.state.texts.settleSteps(this.size);
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
/** Rows a sliced delete removes between two pauses (each moves the last row into its place in every store): well under a millisecond. */
const DELETE_STEP_ROWS = 64;

const NEW_CONFIG: IndexConfig = Object.freeze({ dimensions: null, metric: null, vectorType: SPEC_LIMITS.defaultVectorType, analyzer: null, embedding: null });

/** MAX_TEXT_BYTES's default (config.ts), for an index made without one. */
const DEFAULT_MAX_TEXT_BYTES = 32_768;
