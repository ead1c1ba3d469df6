// The filter index: for every path (as filter-match.ts defines paths) the rows
// where it exists, and for every scalar value at a path the rows holding it,
// kept in step with every write. Each path and each (path, value) is an entry
// of a ByteDictionary, keyed by its bytes; the rows of an entry are a
// RowPostings posting. A filter becomes a RowBitmap by set algebra over them
// (filter-evaluation.ts).
//
// An array or object at a path is an entry too, keyed by its canonical JSON
// text (canonical-json.ts), so equality with one is a lookup.
//
// The cost of a value is bounded: a string longer than maxValueBytes (UTF-8),
// or an array or object whose canonical text is, is keyed by a 64-bit hash
// of its canonical text instead; a filter on such a value reads the metadata
// of the few rows under its hash (to rule out another value with the same
// hash). Such strings also join the path's "long strings" entry, the rows a
// string range reads. Reads are gathered over the whole filter first
// (row-checks.ts), so each row is read at most once per filter.

import type { RowBitmap } from '../bitmap.js';
import type { FilterNode, Metadata } from '../filter.js';
import { compareRange } from '../filter-match.js';
import { isScalar, type Scalar } from '../json-value.js';
import { stringHeapBytes } from '../heap-size.js';
import { ByteDictionary, hashBytes } from './byte-dictionary.js';
import { canonicalJson } from './canonical-json.js';
import { COMPOSITE, EntryKey, FALSE, HASH_BYTES, HASHED, LONG_STRINGS, NUMBER, PATH, STRING, TRUE, VALUE_AT } from './entry-key.js';
import { checksOf, evaluate, LONG } from './filter-evaluation.js';
import { type MetadataReader, type RowChecks, START, type WalkStep } from './row-checks.js';
import { RowPostings } from './row-postings.js';
import { PagedArray, pagedLength } from './paged-array.js';
import { grown, grownLength } from './typed-arrays.js';

/** Paths whose ids are remembered by name; past it, the cache starts again (a caller can make any number of paths). */
const PATH_CACHE_SIZE = 4096;

const utf8Out = new TextDecoder();

export type { MetadataReader } from './row-checks.js';
export type { EntryCount } from './entry-measure.js';

/** Each scalar value held at a path and the rows holding it (MetadataIndex.valuesAt: what groupBy and decay read). */
export interface ValueRows {
  /** The values (numbers, strings, booleans, null), in no particular order. */
  values: Scalar[];
  /** Value i's rows are rows[starts[i], starts[i + 1]). */
  starts: Int32Array;
  rows: Int32Array;
  /** Rows holding a string too long to be a key at the path: their values are only in their metadata. */
  longRows: Int32Array;
}

/** A Map entry (3 words, in a table at most half full after a doubling, with its bucket) and its key. */
const pathCacheHeapBytes = (path: string) => 64 + stringHeapBytes(path);

/** Bytes per entry of the index's per-entry arrays (kindOf 1, pathOf, nextInPath, prevInPath, listedBy 4 each, numberValue 8). */
const PER_ENTRY_BYTES = 1 + 4 + 4 + 4 + 8 + 4;

/** What a batch of rows' metadata adds at most (measureEntries summed), for growthUpper(). */
export interface MetadataBatch {
  /** Rows with metadata, and the UTF-8 bytes of their JSON. */
  rows: number;
  /** Rows whose metadata is replaced (or emptied): holes in the arena that a compaction step may move. */
  replaces: number;
  jsonBytes: number;
  /** Entries listed, and their keys' bytes, in all and in the largest row. */
  entries: number;
  keyBytes: number;
  maxRowEntries: number;
  maxRowKeyBytes: number;
}

/** A path's values and their rows, as facets and ordered listings read them (facet.ts, ordered-listing.ts). */
export interface PathValues {
  /** The entry of a path, -1 when no row has it. */
  findPath(path: string): number;
  /** The first of the scalar values a path entry holds (numbers, strings, true, false, null), -1 for none; then each next one. */
  firstValue(path: number): number;
  nextValue(id: number): number;
  /** A value's kind (entry-key.ts: NUMBER, STRING, TRUE, FALSE, NULL). */
  valueKind(id: number): number;
  /** The path entry of a value entry (-1 for a path). */
  pathOfValue(id: number): number;
  numberOf(id: number): number;
  stringOf(id: number): string;
  /** A string value's UTF-8 bytes (a view: read it before the next write). */
  stringBytesOf(id: number): Uint8Array;
  /** Byte (code point) order of two string values, or of one against UTF-8 `bytes`: negative when the first comes first. */
  compareStrings(a: number, b: number): number;
  compareStringTo(id: number, bytes: Uint8Array): number;
  /** The entry of a path's strings too long to be keys, -1 when none. */
  findLongStrings(path: number): number;
  rowCount(id: number): number;
  /** Rows of entry `id` set in `words`. */
  countIn(id: number, words: Uint32Array): number;
  orInto(id: number, words: Uint32Array): void;
  forEachRow(id: number, visit: (row: number) => void): void;
}

export class MetadataIndex implements PathValues {
  private readonly dictionary = new ByteDictionary();
  private readonly postings = new RowPostings();
  /**
   * Per entry: its kind, its path's id (value entries), and its place in its
   * path's list of values; a path entry's nextInPath is its first value.
   */
  private readonly kindOf = new PagedArray(Uint8Array);
  // PER_ENTRY_BYTES counts these six arrays' bytes per entry: keep it in step.
  private readonly pathOf = new PagedArray(Int32Array);
  private readonly nextInPath = new PagedArray(Int32Array);
  private readonly prevInPath = new PagedArray(Int32Array);
  /** Per number entry: its value (a range compares it without reading the key). */
  private readonly numberValue = new PagedArray(Float64Array);
  /** Per entry: the last row add that listed it, so a row lists an entry once. */
  private readonly listedBy = new PagedArray(Uint32Array);
  private rowStamp = 0;
  private readonly pathIds = new Map<string, number>();
  /** Estimated JS heap of pathIds: its keys and entries (the only part of the index in the heap that grows with writes). */
  private pathIdsHeap = 0;
  private readonly key: EntryKey;
  /** The entries of the row being added. */
  private rowEntries = new Uint32Array(64);
  private rowEntryCount = 0;

  constructor(readonly maxValueBytes: number) {
    this.key = new EntryKey(maxValueBytes);
  }

  /** Estimated JS heap held beside the typed arrays: the path cache (heap-size.ts). */
  get heapBytes(): number {
    return this.pathIdsHeap;
  }

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return (
      this.dictionary.byteLength +
      this.postings.byteLength +
      this.key.bytes.byteLength +
      this.rowEntries.byteLength +
      this.kindOf.byteLength +
      this.pathOf.byteLength +
      this.nextInPath.byteLength +
      this.prevInPath.byteLength +
      this.numberValue.byteLength +
      this.listedBy.byteLength
    );
  }

  /** The most its arrays can grow by (as allocated) when rows measured as `batch` are added, the index going from `rowCount` rows to `rowsAfter`. */
  growthUpper(batch: MetadataBatch, rowCount: number, rowsAfter: number): number {
    const idLimit = pagedLength(this.kindOf.length, this.dictionary.idLimit + batch.entries);
    return (
      this.dictionary.growthUpper(batch.entries, batch.keyBytes) +
      PER_ENTRY_BYTES * (idLimit - this.kindOf.length) +
      4 * (grownLength(this.rowEntries.length, batch.maxRowEntries) - this.rowEntries.length) +
      this.key.growthUpper(batch.maxRowKeyBytes) +
      this.postings.growthUpper(idLimit, batch.entries, rowCount, rowsAfter)
    );
  }

  /** Entries held (paths, values, long-string sets). */
  get entryCount(): number {
    return this.dictionary.size;
  }

  /** Index `metadata` as the metadata of `row` (which has none); its entries are entries()[0, the count returned). */
  addRow(row: number, metadata: Metadata, rowCount: number): number {
    if (++this.rowStamp === 0xffffffff) {
      this.listedBy.fillAll(0);
      this.rowStamp = 1;
    }
    this.rowEntryCount = 0;
    this.walkObject(metadata, null);
    const entries = this.rowEntries;
    for (let i = 0; i < this.rowEntryCount; i++) this.postings.add(entries[i], row, rowCount);
    return this.rowEntryCount;
  }

  /** The entries the last addRow listed (a view). */
  entries(): Uint32Array {
    return this.rowEntries;
  }

  /** Take `row` out of `entries` (its entries, as addRow listed them); entries left with no row are dropped. */
  removeRow(row: number, entries: Uint32Array, rowCount: number): void {
    for (let i = 0; i < entries.length; i++) {
      const id = entries[i];
      this.postings.remove(id, row, rowCount);
      if (this.postings.countOf(id) === 0) this.drop(id);
    }
  }

  /** Row `from` (with `entries`) is now row `to`. */
  moveRow(from: number, to: number, entries: Uint32Array, rowCount: number): void {
    for (let i = 0; i < entries.length; i++) this.postings.move(entries[i], from, to, rowCount);
  }

  /**
   * One stretch of the walk of a path's values for its ranges (RowChecks):
   * from entry `from` (START: the first), each number or string value in a
   * range sets its rows in that range's bitmap; the entry to go on from when
   * `deadline` passed, else -1. Each string is decoded once for all ranges.
   */
  readonly walkStep: WalkStep = (path, ranges, from, deadline) => {
    let n = 0;
    const numbers = ranges.some((r) => typeof r.node.value === 'number'),
      strings = ranges.some((r) => typeof r.node.value === 'string');
    for (let id = from === START ? this.nextInPath.get(path) : from; id >= 0; id = this.nextInPath.get(id)) {
      if ((++n & 63) === 0 && performance.now() > deadline) return id;
      const kind = this.kindOf.get(id);
      if (!(kind === NUMBER ? numbers : kind === STRING && strings)) continue;
      const value = kind === NUMBER ? this.numberOf(id) : this.stringOf(id);
      for (const { node, bits } of ranges) if (compareRange(node.op, value, node.value)) this.postings.orInto(id, bits.words);
    }
    return -1;
  };

  /** Each scalar at `path` with its rows, read from the postings (an array's elements each count; objects are left out). */
  valuesAt(path: string): ValueRows {
    const pathId = this.findPath(path);
    const values: Scalar[] = [];
    const ids: number[] = [];
    let total = 0;
    for (let id = pathId >= 0 ? this.nextInPath.get(pathId) : -1; id >= 0; id = this.nextInPath.get(id)) {
      const kind = this.kindOf.get(id);
      values.push(kind === NUMBER ? this.numberOf(id) : kind === STRING ? this.stringOf(id) : kind === TRUE ? true : kind === FALSE ? false : null);
      ids.push(id);
      total += this.postings.countOf(id);
    }
    const starts = new Int32Array(values.length + 1);
    const rows = new Int32Array(total);
    for (let i = 0; i < ids.length; i++) starts[i + 1] = starts[i] + this.postings.rowsInto(ids[i], rows, starts[i]);
    const long = pathId >= 0 ? this.findLongStrings(pathId) : -1;
    const longRows = new Int32Array(long >= 0 ? this.postings.countOf(long) : 0);
    if (long >= 0) this.postings.rowsInto(long, longRows, 0);
    return { values, starts, rows, longRows };
  }

  /** Rows of [0, size) that match `node` (filter-evaluation.ts). */
  evaluate(node: FilterNode, size: number, read: MetadataReader, prepared: RowChecks | null = null): RowBitmap {
    return evaluate(this, node, size, read, prepared);
  }

  /** The first pass of evaluate alone: the rows `node` must read, to be read before evaluate (verifySliced) and given to it. */
  checksOf(node: FilterNode, size: number): RowChecks {
    return checksOf(this, node, size);
  }

  /** Set the rows of entry `id` in `words`. */
  orInto(id: number, words: Uint32Array): void {
    this.postings.orInto(id, words);
  }

  firstValue(path: number): number {
    return this.nextInPath.get(path);
  }

  nextValue(id: number): number {
    return this.nextInPath.get(id);
  }

  valueKind(id: number): number {
    return this.kindOf.get(id);
  }

  pathOfValue(id: number): number {
    return this.pathOf.get(id);
  }

  stringBytesOf(id: number): Uint8Array {
    return this.dictionary.keyOf(id).subarray(VALUE_AT);
  }

  compareStrings(a: number, b: number): number {
    return this.dictionary.compareKeys(a, b, VALUE_AT);
  }

  compareStringTo(id: number, bytes: Uint8Array): number {
    return this.dictionary.compareKeyTo(id, VALUE_AT, bytes);
  }

  rowCount(id: number): number {
    return this.postings.countOf(id);
  }

  countIn(id: number, words: Uint32Array): number {
    return this.postings.countIn(id, words);
  }

  forEachRow(id: number, visit: (row: number) => void): void {
    this.postings.forEachRow(id, visit);
  }

  /** The entry of an equality's operand at `path`: -1 when no row holds it, LONG when it is keyed by its hash. */
  findOperand(path: number, value: unknown): number {
    return isScalar(value) ? this.findValue(path, value) : this.findComposite(path, value);
  }

  findPath(path: string): number {
    const known = this.pathIds.get(path);
    if (known !== undefined) return known;
    const length = this.key.text(PATH, 1, path);
    return this.lookup(length);
  }

  findLongStrings(path: number): number {
    this.key.head(LONG_STRINGS, path);
    return this.lookup(VALUE_AT);
  }

  /** The entry keyed by the hash of a long value's canonical `text` at `path`, -1 when no row holds one. */
  findHashed(path: number, text: string): number {
    this.key.hashed(path, text);
    return this.lookup(VALUE_AT + HASH_BYTES);
  }

  /** The entry of an array or object at `path`, -1 when no row holds it (or it holds what JSON cannot), LONG when it is keyed by its hash. */
  private findComposite(path: number, value: unknown): number {
    const text = canonicalJson(value, 'operand');
    if (text === null) return -1;
    const length = this.key.composite(path, text);
    if (length < 0) return LONG;
    return this.lookup(length);
  }

  /** The entry of `value` at `path`, -1 when no row holds it, LONG when it is a string too long to be a key. */
  private findValue(path: number, value: string | number | boolean | null): number {
    const length = this.key.value(path, value);
    if (length < 0) return LONG;
    return this.lookup(length);
  }

  /**
   * List the entries of an object's paths and scalars, as filter-match.ts
   * reads metadata: each key's path, each scalar at a path (array elements
   * included), objects within objects and arrays. Values JSON leaves out
   * (undefined, functions) are skipped, as its text has them.
   */
  private walkObject(object: Record<string, unknown>, prefix: string | null): void {
    for (const key of Object.keys(object)) {
      const value = object[key];
      if (value === undefined || typeof value === 'function') continue;
      const path = prefix === null ? key : prefix + '.' + key;
      const pathId = this.pathEntry(path);
      this.list(pathId);
      if (value === null || typeof value !== 'object') {
        this.listValue(pathId, value);
        continue;
      }
      // An array or object equals a filter's value as a whole, and an array also by any element.
      this.listComposite(pathId, value);
      if (!Array.isArray(value)) this.walkObject(value as Record<string, unknown>, path);
      else {
        for (const item of value) {
          if (item === null || typeof item !== 'object') this.listValue(pathId, item);
          else {
            this.listComposite(pathId, item);
            if (!Array.isArray(item)) this.walkObject(item as Record<string, unknown>, path);
          }
        }
      }
    }
  }

  private listValue(path: number, value: unknown): void {
    const length = this.key.value(path, value);
    if (length >= 0) {
      this.list(this.entry(length, this.key.bytes[0], path));
      return;
    }
    this.key.hashed(path, JSON.stringify(value));
    this.list(this.entry(VALUE_AT + HASH_BYTES, HASHED, path));
    this.key.head(LONG_STRINGS, path);
    this.list(this.entry(VALUE_AT, LONG_STRINGS, path));
  }

  /** List an array or object at `path`: by its canonical text, or that text's hash when it is too long. */
  private listComposite(path: number, value: object): void {
    const text = canonicalJson(value, 'stored')!;
    const length = this.key.composite(path, text);
    if (length >= 0) this.list(this.entry(length, COMPOSITE, path));
    else {
      this.key.hashed(path, text);
      this.list(this.entry(VALUE_AT + HASH_BYTES, HASHED, path));
    }
  }

  private pathEntry(path: string): number {
    const known = this.pathIds.get(path);
    if (known !== undefined) return known;
    const id = this.entry(this.key.text(PATH, 1, path), PATH, -1);
    if (this.pathIds.size >= PATH_CACHE_SIZE) {
      this.pathIds.clear();
      this.pathIdsHeap = 0;
    }
    this.pathIds.set(path, id);
    this.pathIdsHeap += pathCacheHeapBytes(path);
    return id;
  }

  /** The entry keyed by key[0, length), made when new (`kind`, and its path for a value). */
  private entry(length: number, kind: number, path: number): number {
    const hash = hashBytes(this.key.bytes, length);
    const found = this.dictionary.find(this.key.bytes, length, hash);
    if (found >= 0) return found;
    const id = this.dictionary.add(this.key.bytes, length, hash);
    this.ensureIds(this.dictionary.idLimit);
    this.kindOf.set(id, kind);
    this.pathOf.set(id, path);
    if (kind === NUMBER) this.numberValue.set(id, this.key.numberValue);
    this.prevInPath.set(id, -1);
    this.nextInPath.set(id, -1);
    if (kind !== PATH && kind !== LONG_STRINGS && kind !== COMPOSITE && kind !== HASHED) {
      const first = this.nextInPath.get(path);
      this.nextInPath.set(id, first);
      if (first >= 0) this.prevInPath.set(first, id);
      this.nextInPath.set(path, id);
    }
    return id;
  }

  /** An entry no row holds any more leaves the dictionary (and its path's list, or the path cache). */
  private drop(id: number): void {
    const kind = this.kindOf.get(id);
    if (kind === PATH) {
      const path = utf8Out.decode(this.dictionary.keyOf(id).subarray(1));
      if (this.pathIds.delete(path)) this.pathIdsHeap -= pathCacheHeapBytes(path);
    } else if (kind !== LONG_STRINGS && kind !== COMPOSITE && kind !== HASHED) {
      const prev = this.prevInPath.get(id),
        next = this.nextInPath.get(id);
      if (prev >= 0) this.nextInPath.set(prev, next);
      else this.nextInPath.set(this.pathOf.get(id), next);
      if (next >= 0) this.prevInPath.set(next, prev);
    }
    this.dictionary.remove(id);
  }

  /** List `id` among the row's entries, once. */
  private list(id: number): void {
    if (this.listedBy.get(id) === this.rowStamp) return;
    this.listedBy.set(id, this.rowStamp);
    if (this.rowEntryCount === this.rowEntries.length) this.rowEntries = grown(this.rowEntries, this.rowEntryCount + 1);
    this.rowEntries[this.rowEntryCount++] = id;
  }

  private ensureIds(limit: number): void {
    this.kindOf.ensure(limit);
    this.pathOf.ensure(limit);
    this.nextInPath.ensure(limit);
    this.prevInPath.ensure(limit);
    this.numberValue.ensure(limit);
    this.listedBy.ensure(limit);
    this.postings.ensureIds(this.kindOf.length);
  }

  /** The entry keyed by the key's first `length` bytes, or -1. */
  private lookup(length: number): number {
    return this.dictionary.find(this.key.bytes, length, hashBytes(this.key.bytes, length));
  }

  numberOf(id: number): number {
    return this.numberValue.get(id);
  }

  stringOf(id: number): string {
    return utf8Out.decode(this.dictionary.keyOf(id).subarray(VALUE_AT));
  }
}
