// The metadata of a VectorIndex's rows: the bytes (MetadataArena) and the
// filter index over them (MetadataIndex), kept in step. Rows are the index's
// dense rows; deleting row r moves the last row into r. Nothing here is a JS
// object per row or per value: the heap holds a few dozen objects per session.

import type { RowBitmap } from '../bitmap.js';
import type { FilterNode, Metadata } from '../filter.js';
import type { JsonText } from '../json-size.js';
import { MetadataArena } from './metadata-arena.js';
import { type EntryCount, measureEntries } from './entry-measure.js';
import { type MetadataBatch, MetadataIndex, type PathValues, type ValueRows } from './metadata-index.js';
import { MetadataJson } from './metadata-json.js';
import type { RowChecks } from './row-checks.js';

/** JS heap of a filter index's objects, beside its arrays' bytes (measured: about 4 to 6 KiB). */
const INDEX_HEAP_BYTES = 6 * 1024;
/** JS heap of a path in the index's path cache, besides its characters: a map entry and a string's header. */
const PATH_CACHE_ENTRY_UPPER = 88;

export class MetadataStore {
  private readonly arena = new MetadataArena();
  /** Made by the first row with metadata, so a session without any holds nothing here. */
  private indexOrNull: MetadataIndex | null = null;

  /** Bumped by every change, so rows read ahead for a filter (prepare) are used only while they are still the rows. */
  private version = 0;
  /** The reads done ahead for one filter: its node's JSON, the version they were made at, what they found. */
  private prepared: { key: string; version: number; checks: RowChecks } | null = null;

  constructor(private readonly maxIndexedValueBytes: number) {}

  /** Changes so far (every set, remove and clear counts): what a cache of values read from the index is keyed by. */
  get changes(): number {
    return this.version;
  }

  private get index(): MetadataIndex {
    if (this.indexOrNull === null) this.indexOrNull = new MetadataIndex(this.maxIndexedValueBytes);
    return this.indexOrNull;
  }

  /** Bytes held: the arena, its row table, the dictionary and the postings (typed arrays' own lengths). */
  get byteLength(): number {
    return this.arena.byteLength + (this.indexOrNull?.byteLength ?? 0);
  }

  /** Estimated JS heap of the filter index, once made: its objects and typed arrays' own objects, and its path cache. */
  get heapBytes(): number {
    return this.indexOrNull === null ? 0 : INDEX_HEAP_BYTES + this.indexOrNull.heapBytes;
  }

  /** The filter index's paths and values, read only; null while no row has metadata. */
  get values(): PathValues | null {
    return this.indexOrNull;
  }

  /** Bytes of metadata JSON stored. */
  get jsonBytes(): number {
    return this.arena.jsonBytes;
  }

  /** Entries of the filter index (paths, values, long-string sets). */
  get entryCount(): number {
    return this.indexOrNull?.entryCount ?? 0;
  }

  /** An empty measure of a batch's metadata, for measure() and growthUpper(). */
  static batch(): MetadataBatch {
    return { rows: 0, replaces: 0, jsonBytes: 0, entries: 0, keyBytes: 0, maxRowEntries: 0, maxRowKeyBytes: 0 };
  }

  /** The entries `metadata` lists in the filter index (pure: made ahead of a write's turn, or in it). */
  entriesOf(metadata: Metadata): EntryCount {
    return measureEntries(metadata, this.maxIndexedValueBytes);
  }

  /** Add a row whose metadata has the text `json` and lists `count` entries to `batch`. */
  measure(batch: MetadataBatch, json: JsonText, { entries, keyBytes }: EntryCount): void {
    batch.rows++;
    batch.jsonBytes += json.bytes;
    batch.entries += entries;
    batch.keyBytes += keyBytes;
    batch.maxRowEntries = Math.max(batch.maxRowEntries, entries);
    batch.maxRowKeyBytes = Math.max(batch.maxRowKeyBytes, keyBytes);
  }

  /**
   * The most writing `batch` can add, as allocated, the index going from
   * `rowCount` rows to `rowsAfter`: each typed array's next length projected
   * (a doubling adds the whole array at once), and the JS heap of the index's
   * path cache. Removals are not subtracted.
   */
  growthUpper(batch: MetadataBatch, rowCount: number, rowsAfter: number): number {
    if (batch.rows === 0) return batch.replaces === 0 ? 0 : this.arena.growthUpper(0, 0, rowCount, true);
    const index = this.indexOrNull ?? new MetadataIndex(this.maxIndexedValueBytes);
    const made = this.indexOrNull === null ? index.byteLength + INDEX_HEAP_BYTES : 0;
    // A cached path: a map entry and a string of at most 2 bytes a character (keyBytes counts 3 a character).
    const pathCache = batch.entries * PATH_CACHE_ENTRY_UPPER + batch.keyBytes;
    return (
      made +
      this.arena.growthUpper(batch.rows, batch.jsonBytes + 4 * batch.entries, rowsAfter, batch.replaces > 0) +
      index.growthUpper(batch, rowCount, rowsAfter) +
      pathCache
    );
  }

  /** Replace the metadata of `row` with `metadata` (`json` its text; null for {}). `rowCount`: rows of the index. */
  set(row: number, metadata: Metadata, json: JsonText | null, rowCount: number): void {
    this.version++;
    if (this.arena.has(row)) {
      this.index.removeRow(row, this.arena.entries(row), rowCount);
      this.arena.free(row);
    }
    if (json !== null) {
      const count = this.index.addRow(row, metadata, rowCount);
      this.arena.write(row, json.text, json.bytes, this.index.entries(), count);
    }
    this.afterChange(rowCount);
  }

  /** Delete the metadata of `row`, moving that of `last` (the index's last row) into it. */
  remove(row: number, last: number): void {
    this.version++;
    const rowCount = last + 1;
    if (this.arena.has(row)) {
      this.index.removeRow(row, this.arena.entries(row), rowCount);
      this.arena.free(row);
    }
    if (row !== last && this.arena.has(last)) {
      this.index.moveRow(last, row, this.arena.entries(last), rowCount);
      this.arena.move(last, row);
    }
    this.afterChange(rowCount - 1);
  }

  /** After a change: one compaction step, or, once no row has metadata, everything let go (arrays never shrink otherwise). */
  private afterChange(rowCount: number): void {
    if (this.indexOrNull?.entryCount === 0) this.clear();
    else this.arena.compactStep(rowCount);
  }

  /** The filter-index entries the row's metadata lists (a view: read it before the next write). */
  rowEntries(row: number): Uint32Array {
    return this.arena.entries(row);
  }

  /** UTF-8 bytes of the row's metadata as JSON (2 for {}). */
  jsonLength(row: number): number {
    return this.arena.jsonLength(row);
  }

  /** The row's metadata as its JSON bytes (a view that stays as it is now, whatever changes after). */
  json(row: number): MetadataJson {
    return this.arena.has(row) ? new MetadataJson(this.arena.jsonBytesOf(row)) : EMPTY;
  }

  /** The row's metadata as a new object. */
  object(row: number): Metadata {
    return this.arena.has(row) ? (JSON.parse(this.arena.json(row)) as Metadata) : {};
  }

  /** The last valuesAt() answer, while nothing has changed (searches ask the same path again and again). */
  private lastValues: { path: string; version: number; values: ValueRows } | null = null;

  /** Each scalar at `path` with its rows (MetadataIndex.valuesAt); read-only, as later calls may share it. */
  valuesAt(path: string): ValueRows {
    if (this.indexOrNull === null) return { values: [], starts: new Int32Array(1), rows: new Int32Array(0), longRows: new Int32Array(0) };
    const last = this.lastValues;
    if (last && last.path === path && last.version === this.version) return last.values;
    const values = this.index.valuesAt(path);
    this.lastValues = { path, version: this.version, values };
    return values;
  }

  /** Rows of [0, size) that match `node` (with the rows prepare read for it, when nothing changed since). */
  evaluate(node: FilterNode, size: number): RowBitmap {
    const prepared = this.prepared;
    this.prepared = null;
    const ahead = prepared && prepared.version === this.version && prepared.key === JSON.stringify(node) ? prepared.checks : null;
    return this.index.evaluate(node, size, (row) => this.object(row), ahead);
  }

  /**
   * Walk the values `node`'s ranges compare and read the rows it must read
   * (if any) in slices, giving the event loop back every few ms, for the next
   * evaluate of the same filter; null when there are none. The caller keeps writes away until that evaluate (a
   * change in between only makes evaluate read again, at once).
   */
  prepare(node: FilterNode, size: number): Promise<void> | null {
    if (this.indexOrNull === null) return null;
    const checks = this.index.checksOf(node, size);
    if (checks.size === 0) return null;
    const version = this.version;
    const stale = () => this.version !== version;
    return checks
      .verifySliced((row) => this.object(row), this.index.walkStep, stale)
      .then(() => {
        if (!stale() && checks.done) this.prepared = { key: JSON.stringify(node), version, checks };
      });
  }

  clear(): void {
    this.version++;
    this.prepared = null;
    this.lastValues = null;
    this.arena.clear();
    this.indexOrNull = null;
  }
}

const EMPTY = new MetadataJson(new TextEncoder().encode('{}'));
