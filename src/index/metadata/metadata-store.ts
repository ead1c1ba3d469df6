// The metadata of a VectorIndex's rows: the bytes (MetadataArena) and the
// filter index over them (MetadataIndex), kept in step. Rows are the index's
// dense rows; deleting row r moves the last row into r. Nothing here is a JS
// object per row or per value: the heap holds a few dozen objects per session.

import type { RowBitmap } from '../bitmap.js';
import type { FilterNode, Metadata } from '../filter.js';
import type { JsonText } from '../json-size.js';
import { MetadataArena } from './metadata-arena.js';
import { MetadataIndex, measureEntries } from './metadata-index.js';
import { MetadataJson } from './metadata-json.js';

/** Bytes the index may take per entry and per row listed in one, at most, with every array at its emptiest after a doubling. */
const ENTRY_BYTES_UPPER = 128;
const ROW_ENTRY_BYTES_UPPER = 20;
/** JS heap of a filter index's objects, beside its arrays' bytes (measured: about 4 to 6 KiB). */
const INDEX_HEAP_BYTES = 6 * 1024;
/** JS heap of a path in the index's path cache, besides its characters: a map entry and a string's header. */
const PATH_CACHE_ENTRY_UPPER = 88;
/** The largest chunk the arena opens for small records. */
const CHUNK_BYTES_UPPER = 1024 * 1024;

export class MetadataStore {
  private readonly arena = new MetadataArena();
  /** Made by the first row with metadata, so a session without any holds nothing here. */
  private indexOrNull: MetadataIndex | null = null;

  constructor(private readonly maxIndexedValueBytes: number) {}

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

  /** Bytes of metadata JSON stored. */
  get jsonBytes(): number {
    return this.arena.jsonBytes;
  }

  /** Entries of the filter index (paths, values, long-string sets). */
  get entryCount(): number {
    return this.indexOrNull?.entryCount ?? 0;
  }

  /** Bytes a row with this metadata (`json` its text) can add at most, the JS heap of the index's path cache included. */
  upperBytes(metadata: Metadata, json: JsonText): number {
    const { entries, keyBytes } = measureEntries(metadata, this.maxIndexedValueBytes);
    // A cached path: a map entry and a string of at most 2 bytes a character (keyBytes counts 3 a character).
    const pathCache = entries * PATH_CACHE_ENTRY_UPPER + keyBytes;
    return json.bytes + 4 + entries * (ENTRY_BYTES_UPPER + ROW_ENTRY_BYTES_UPPER) + 2 * keyBytes + pathCache;
  }

  /** Bytes a change can add however small, besides upperBytes: a new chunk of the arena. */
  static readonly changeBytesUpper = CHUNK_BYTES_UPPER;

  /** Replace the metadata of `row` with `metadata` (`json` its text; null for {}). `rowCount`: rows of the index. */
  set(row: number, metadata: Metadata, json: JsonText | null, rowCount: number): void {
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

  /** Rows of [0, size) that match `node`. */
  evaluate(node: FilterNode, size: number): RowBitmap {
    return this.index.evaluate(node, size, (row) => this.object(row));
  }

  clear(): void {
    this.arena.clear();
    this.indexOrNull = null;
  }
}

const EMPTY = new MetadataJson(new TextEncoder().encode('{}'));
