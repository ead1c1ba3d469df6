// The filter index: for every path (as filter-match.ts defines paths) the rows
// where it exists, and for every scalar value at a path the rows holding it,
// kept in step with every write. Each path and each (path, value) is an entry
// of a ByteDictionary, keyed by its bytes; the rows of an entry are a
// RowPostings posting. A filter becomes a RowBitmap by set algebra over them.
//
// The cost of a value is bounded: a string longer than maxValueBytes (UTF-8)
// is no key; its rows join the path's "long strings" entry instead, and a
// filter on such a string reads the metadata of those rows alone, among the
// rows the filter's other clauses leave. Equality with an object or an array
// reads the rows where the path exists, the same way.

import { RowBitmap } from '../bitmap.js';
import type { FilterNode, Metadata } from '../filter.js';
import { compareRange, matchNode } from '../filter-match.js';
import { isScalar } from '../json-value.js';
import { hasLoneSurrogate, writeUtf8 } from '../json-size.js';
import { stringHeapBytes } from '../heap-size.js';
import { ByteDictionary, hashBytes } from './byte-dictionary.js';
import { RowPostings } from './row-postings.js';
import { grown } from './typed-arrays.js';

/** Entry kinds, the first byte of an entry's key; a value's key goes on with its path's id (4 bytes) and the value. */
const PATH = 0x50,
  LONG_STRINGS = 0x4c,
  NUMBER = 0x6e,
  STRING = 0x73,
  TRUE = 0x74,
  FALSE = 0x66,
  NULL = 0x7a;
const VALUE_AT = 5;
/** Paths whose ids are remembered by name; past it, the cache starts again (a caller can make any number of paths). */
const PATH_CACHE_SIZE = 4096;

const utf8Out = new TextDecoder();

/** A Map entry (3 words, in a table at most half full after a doubling, with its bucket) and its key. */
const pathCacheHeapBytes = (path: string) => 64 + stringHeapBytes(path);

/** Reads a row's metadata (parsed from its stored bytes) for the filters the entries cannot answer. */
export type MetadataReader = (row: number) => Metadata;

export class MetadataIndex {
  private readonly dictionary = new ByteDictionary();
  private readonly postings = new RowPostings();
  /**
   * Per entry: its kind, its path's id (value entries), and its place in its
   * path's list of values; a path entry's nextInPath is its first value.
   */
  private kindOf = new Uint8Array(16);
  private pathOf = new Int32Array(16);
  private nextInPath = new Int32Array(16);
  private prevInPath = new Int32Array(16);
  /** Per number entry: its value (a range compares it without reading the key). */
  private numberValue = new Float64Array(16);
  /** Per entry: the last row add that listed it, so a row lists an entry once. */
  private listedBy = new Uint32Array(16);
  private rowStamp = 0;
  private readonly pathIds = new Map<string, number>();
  /** Estimated JS heap of pathIds: its keys and entries (the only part of the index in the heap that grows with writes). */
  private pathIdsHeap = 0;
  private key = new Uint8Array(256);
  private readonly number = new Float64Array(1);
  private readonly numberBytes = new Uint8Array(this.number.buffer);
  /** The entries of the row being added. */
  private rowEntries = new Uint32Array(64);
  private rowEntryCount = 0;

  constructor(readonly maxValueBytes: number) {}

  /** Estimated JS heap held beside the typed arrays: the path cache (heap-size.ts). */
  get heapBytes(): number {
    return this.pathIdsHeap;
  }

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return (
      this.dictionary.byteLength +
      this.postings.byteLength +
      this.key.byteLength +
      this.rowEntries.byteLength +
      this.kindOf.byteLength +
      this.pathOf.byteLength +
      this.nextInPath.byteLength +
      this.prevInPath.byteLength +
      this.numberValue.byteLength +
      this.listedBy.byteLength
    );
  }

  /** Entries held (paths, values, long-string sets). */
  get entryCount(): number {
    return this.dictionary.size;
  }

  /** Index `metadata` as the metadata of `row` (which has none); its entries are entries()[0, the count returned). */
  addRow(row: number, metadata: Metadata, rowCount: number): number {
    if (++this.rowStamp === 0xffffffff) {
      this.listedBy.fill(0);
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

  /** Rows of [0, size) that match `node`. */
  evaluate(node: FilterNode, size: number, read: MetadataReader): RowBitmap {
    return this.rowsOf(node, size, null, read);
  }

  /** The rows matching `node`, exact on the rows of `within` (all rows when null); others may be either. */
  private rowsOf(node: FilterNode, size: number, within: RowBitmap | null, read: MetadataReader): RowBitmap {
    switch (node.kind) {
      case 'and': {
        const out = within ? within.copy() : RowBitmap.all(size); // the empty filter {} matches everything
        for (const child of readsLast(node.nodes)) out.and(this.rowsOf(child, size, out, read));
        return out;
      }
      case 'or': {
        const out = new RowBitmap(size);
        for (const child of node.nodes) {
          if (!this.addMatches(child, out, within, read)) out.or(this.rowsOf(child, size, within, read));
        }
        return out;
      }
      case 'not':
        return this.rowsOf(node.node, size, within, read).not();
      case 'exists': {
        const out = new RowBitmap(size);
        const path = this.findPath(node.path);
        if (path >= 0) this.postings.orInto(path, out.words);
        return node.value ? out : out.not();
      }
      case 'eq':
      case 'range': {
        const out = new RowBitmap(size);
        if (!this.addMatches(node, out, within, read)) {
          // Equality with an object or an array: read the rows that have the path.
          const path = this.findPath(node.path);
          if (path >= 0) this.readRows(path, node, out, within, read);
        }
        return out;
      }
    }
  }

  /**
   * Set the rows matching an equality with a scalar or a range in `out` (exact
   * on `within`), reading only rows with long strings at the path; false for
   * any other node. An $in of many values thus fills one bitmap.
   */
  private addMatches(node: FilterNode, out: RowBitmap, within: RowBitmap | null, read: MetadataReader): boolean {
    if (node.kind === 'eq' && isScalar(node.value)) {
      const path = this.findPath(node.path);
      if (path < 0) return true;
      const id = this.findValue(path, node.value);
      if (id >= 0) this.postings.orInto(id, out.words);
      else if (id === LONG) this.readRows(this.findLongStrings(path), node, out, within, read);
      return true;
    }
    if (node.kind === 'range') {
      const path = this.findPath(node.path);
      if (path < 0) return true;
      const numeric = typeof node.value === 'number';
      for (let id = this.nextInPath[path]; id >= 0; id = this.nextInPath[id]) {
        const kind = this.kindOf[id];
        if (kind !== (numeric ? NUMBER : STRING)) continue;
        if (compareRange(node.op, numeric ? this.numberOf(id) : this.stringOf(id), node.value)) this.postings.orInto(id, out.words);
      }
      if (!numeric) this.readRows(this.findLongStrings(path), node, out, within, read);
      return true;
    }
    return false;
  }

  /** Set in `out` the rows of entry `id` (none when -1) within `within` whose metadata matches `node`. */
  private readRows(id: number, node: FilterNode, out: RowBitmap, within: RowBitmap | null, read: MetadataReader): void {
    if (id < 0) return;
    const candidates = new RowBitmap(out.size);
    this.postings.orInto(id, candidates.words);
    if (within) candidates.and(within);
    for (const row of candidates.rows()) if (matchNode(node, read(row))) out.add(row);
  }

  private findPath(path: string): number {
    const known = this.pathIds.get(path);
    if (known !== undefined) return known;
    const length = this.writeKeyText(PATH, 1, path);
    return this.dictionary.find(this.key, length, hashBytes(this.key, length));
  }

  private findLongStrings(path: number): number {
    this.writeKeyHead(LONG_STRINGS, path);
    return this.dictionary.find(this.key, VALUE_AT, hashBytes(this.key, VALUE_AT));
  }

  /** The entry of `value` at `path`, -1 when no row holds it, LONG when it is a string too long to be a key. */
  private findValue(path: number, value: string | number | boolean | null): number {
    const length = this.writeValueKey(path, value);
    if (length < 0) return LONG;
    return this.dictionary.find(this.key, length, hashBytes(this.key, length));
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
      if (value === null || typeof value !== 'object') this.listValue(pathId, value);
      else if (!Array.isArray(value)) this.walkObject(value as Record<string, unknown>, path);
      else {
        for (const item of value) {
          if (item === null || typeof item !== 'object') this.listValue(pathId, item);
          else if (!Array.isArray(item)) this.walkObject(item as Record<string, unknown>, path);
        }
      }
    }
  }

  private listValue(path: number, value: unknown): void {
    const length = this.writeValueKey(path, value);
    if (length >= 0) {
      this.list(this.entry(length, this.key[0], path));
      return;
    }
    this.writeKeyHead(LONG_STRINGS, path);
    this.list(this.entry(VALUE_AT, LONG_STRINGS, path));
  }

  private pathEntry(path: string): number {
    const known = this.pathIds.get(path);
    if (known !== undefined) return known;
    const id = this.entry(this.writeKeyText(PATH, 1, path), PATH, -1);
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
    const hash = hashBytes(this.key, length);
    const found = this.dictionary.find(this.key, length, hash);
    if (found >= 0) return found;
    const id = this.dictionary.add(this.key, length, hash);
    this.ensureIds(this.dictionary.idLimit);
    this.kindOf[id] = kind;
    this.pathOf[id] = path;
    if (kind === NUMBER) this.numberValue[id] = this.number[0];
    this.prevInPath[id] = -1;
    this.nextInPath[id] = -1;
    if (kind !== PATH && kind !== LONG_STRINGS) {
      const first = this.nextInPath[path];
      this.nextInPath[id] = first;
      if (first >= 0) this.prevInPath[first] = id;
      this.nextInPath[path] = id;
    }
    return id;
  }

  /** An entry no row holds any more leaves the dictionary (and its path's list, or the path cache). */
  private drop(id: number): void {
    const kind = this.kindOf[id];
    if (kind === PATH) {
      const path = utf8Out.decode(this.dictionary.keyOf(id).subarray(1));
      if (this.pathIds.delete(path)) this.pathIdsHeap -= pathCacheHeapBytes(path);
    } else if (kind !== LONG_STRINGS) {
      const prev = this.prevInPath[id],
        next = this.nextInPath[id];
      if (prev >= 0) this.nextInPath[prev] = next;
      else this.nextInPath[this.pathOf[id]] = next;
      if (next >= 0) this.prevInPath[next] = prev;
    }
    this.dictionary.remove(id);
  }

  /** List `id` among the row's entries, once. */
  private list(id: number): void {
    if (this.listedBy[id] === this.rowStamp) return;
    this.listedBy[id] = this.rowStamp;
    if (this.rowEntryCount === this.rowEntries.length) this.rowEntries = grown(this.rowEntries, this.rowEntryCount + 1);
    this.rowEntries[this.rowEntryCount++] = id;
  }

  private ensureIds(limit: number): void {
    if (limit <= this.kindOf.length) {
      this.postings.ensureIds(limit);
      return;
    }
    this.kindOf = grown(this.kindOf, limit);
    this.pathOf = grown(this.pathOf, limit);
    this.nextInPath = grown(this.nextInPath, limit);
    this.prevInPath = grown(this.prevInPath, limit);
    this.numberValue = grown(this.numberValue, limit);
    this.listedBy = grown(this.listedBy, limit);
    this.postings.ensureIds(this.kindOf.length);
  }

  /** Key of a value at `path` into `key`: its length, or -1 for a string longer than maxValueBytes. */
  private writeValueKey(path: number, value: unknown): number {
    if (typeof value === 'string') {
      if (value.length > this.maxValueBytes) return -1; // UTF-8 takes at least a byte per UTF-16 unit
      // A lone surrogate has no UTF-8 form to compare as text: such a string is read from the rows, like a long one.
      if (hasLoneSurrogate(value)) return -1;
      const length = this.writeKeyText(STRING, VALUE_AT, value);
      this.writeKeyHead(STRING, path);
      return length - VALUE_AT > this.maxValueBytes ? -1 : length;
    }
    if (typeof value === 'number' && Number.isFinite(value)) {
      this.writeKeyHead(NUMBER, path);
      this.number[0] = value === 0 ? 0 : value; // -0 is 0, as JSON and the filters read it
      this.key.set(this.numberBytes, VALUE_AT);
      return VALUE_AT + 8;
    }
    this.writeKeyHead(value === true ? TRUE : value === false ? FALSE : NULL, path);
    return VALUE_AT;
  }

  private writeKeyHead(kind: number, path: number): void {
    const key = this.key;
    key[0] = kind;
    key[1] = path & 0xff;
    key[2] = (path >>> 8) & 0xff;
    key[3] = (path >>> 16) & 0xff;
    key[4] = path >>> 24;
  }

  /** `text` as UTF-8 at `at` of the key, after the kind byte; the key's length. */
  private writeKeyText(kind: number, at: number, text: string): number {
    this.key = grown(this.key, at + 3 * text.length);
    this.key[0] = kind;
    return writeUtf8(text, this.key, at);
  }

  private numberOf(id: number): number {
    return this.numberValue[id];
  }

  private stringOf(id: number): string {
    return utf8Out.decode(this.dictionary.keyOf(id).subarray(VALUE_AT));
  }
}

/** findValue's answer for a string too long to be a key. */
const LONG = -2;

/** Whether answering `node` reads rows' metadata (equality with an object or array, a long string, a string range). */
function reads(node: FilterNode): boolean {
  switch (node.kind) {
    case 'and':
    case 'or':
      return node.nodes.some(reads);
    case 'not':
      return reads(node.node);
    case 'eq':
      return !isScalar(node.value) || typeof node.value === 'string';
    case 'range':
      return typeof node.value === 'string';
    case 'exists':
      return false;
  }
}

/** The clauses of an and, those that may read rows last: they then read only the rows the others leave. */
function readsLast(nodes: FilterNode[]): FilterNode[] {
  const first = nodes.filter((n) => !reads(n));
  return first.length === nodes.length ? nodes : [...first, ...nodes.filter(reads)];
}

interface EntryCount {
  entries: number;
  keyBytes: number;
}

/**
 * Entries a row with `metadata` adds to an index at most, and the bytes of
 * their keys at most (for the memory budget, before anything is written; no
 * index is needed to tell).
 */
export function measureEntries(metadata: Metadata, maxValueBytes: number): EntryCount {
  const total = { entries: 0, keyBytes: 0 };
  measureObject(metadata, 0, maxValueBytes, total);
  return total;
}

function measureObject(object: Record<string, unknown>, prefixLength: number, maxValueBytes: number, total: EntryCount): void {
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value === undefined || typeof value === 'function') continue;
    const pathLength = prefixLength + 1 + key.length;
    total.entries++;
    total.keyBytes += 1 + 3 * pathLength;
    if (value === null || typeof value !== 'object') measureValue(value, maxValueBytes, total);
    else if (!Array.isArray(value)) measureObject(value as Record<string, unknown>, pathLength, maxValueBytes, total);
    else {
      for (const item of value) {
        if (item === null || typeof item !== 'object') measureValue(item, maxValueBytes, total);
        else if (!Array.isArray(item)) measureObject(item as Record<string, unknown>, pathLength, maxValueBytes, total);
      }
    }
  }
}

function measureValue(value: unknown, maxValueBytes: number, total: EntryCount): void {
  total.entries++;
  total.keyBytes += VALUE_AT + (typeof value === 'number' ? 8 : typeof value === 'string' ? Math.min(3 * value.length, maxValueBytes) : 0);
}
