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
import { isObject, isScalar } from '../json-value.js';
import { ByteDictionary, hashBytes } from './byte-dictionary.js';
import { RowPostings } from './row-postings.js';
import { grown } from './typed-arrays.js';

/** Entry kinds, the first byte of an entry's key; a value's key goes on with its path's id (4 bytes) and the value. */
const PATH = 0x50, LONG_STRINGS = 0x4c, NUMBER = 0x6e, STRING = 0x73, TRUE = 0x74, FALSE = 0x66, NULL = 0x7a;
const VALUE_AT = 5;
/** Paths whose ids are remembered by name; past it, the cache starts again (a caller can make any number of paths). */
const PATH_CACHE_SIZE = 4096;

const utf8In = new TextEncoder();
const utf8Out = new TextDecoder();

/** Reads a row's metadata (parsed from its stored bytes) for the filters the entries cannot answer. */
export type MetadataReader = (row: number) => Metadata;

export class MetadataIndex {
  private readonly dictionary = new ByteDictionary();
  private readonly postings = new RowPostings();
  /** Per entry: its kind, its path's id (value entries), and its place in its path's list of values. */
  private kindOf = new Uint8Array(16);
  private pathOf = new Int32Array(16);
  private nextInPath = new Int32Array(16);
  private prevInPath = new Int32Array(16);
  /** Per path entry: its first value entry, or -1. */
  private firstInPath = new Int32Array(16);
  /** Per entry: the last row add that listed it, so a row lists an entry once. */
  private listedBy = new Uint32Array(16);
  private rowStamp = 0;
  private readonly pathIds = new Map<string, number>();
  private key = new Uint8Array(256);
  private readonly number = new Float64Array(1);
  private readonly numberBytes = new Uint8Array(this.number.buffer);
  /** The entries of the row being added. */
  private rowEntries = new Uint32Array(64);
  private rowEntryCount = 0;

  constructor(readonly maxValueBytes: number) {}

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return this.dictionary.byteLength + this.postings.byteLength + this.key.byteLength + this.rowEntries.byteLength
      + this.kindOf.byteLength + this.pathOf.byteLength + this.nextInPath.byteLength + this.prevInPath.byteLength
      + this.firstInPath.byteLength + this.listedBy.byteLength;
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
    this.walk(metadata, null);
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

  clear(): void {
    this.dictionary.clear();
    this.postings.clear();
    this.pathIds.clear();
    this.kindOf = new Uint8Array(16);
    this.pathOf = new Int32Array(16);
    this.nextInPath = new Int32Array(16);
    this.prevInPath = new Int32Array(16);
    this.firstInPath = new Int32Array(16);
    this.listedBy = new Uint32Array(16);
    this.rowStamp = 0;
  }

  /**
   * Entries a row with `metadata` adds at most, and the bytes of their keys at
   * most (for the memory budget, before anything is written).
   */
  measure(metadata: Metadata): { entries: number; keyBytes: number } {
    let entries = 0, keyBytes = 0;
    walkJson(metadata, null,
      (path) => { entries++; keyBytes += 1 + 3 * path.length; },
      (_path, value) => {
        entries++;
        keyBytes += VALUE_AT + (typeof value === 'number' ? 8 : typeof value === 'string' ? Math.min(3 * value.length, this.maxValueBytes) : 0);
      });
    return { entries, keyBytes };
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
      for (let id = this.firstInPath[path]; id >= 0; id = this.nextInPath[id]) {
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

  /** Visit metadata as filter-match.ts reads it, listing each path's and each value's entry. */
  private walk(object: Record<string, unknown>, prefix: string | null): void {
    walkJson(object, prefix,
      (path) => this.list(this.pathEntry(path)),
      (path, value) => {
        const pathId = this.pathEntry(path);
        const length = this.writeValueKey(pathId, value);
        this.list(length < 0
          ? this.entry(VALUE_AT, LONG_STRINGS, pathId)
          : this.entry(length, this.key[0], pathId));
      });
  }

  private pathEntry(path: string): number {
    const known = this.pathIds.get(path);
    if (known !== undefined) return known;
    const id = this.entry(this.writeKeyText(PATH, 1, path), PATH, -1);
    if (this.pathIds.size >= PATH_CACHE_SIZE) this.pathIds.clear();
    this.pathIds.set(path, id);
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
    this.firstInPath[id] = -1;
    this.prevInPath[id] = -1;
    this.nextInPath[id] = -1;
    if (kind !== PATH && kind !== LONG_STRINGS) {
      const first = this.firstInPath[path];
      this.nextInPath[id] = first;
      if (first >= 0) this.prevInPath[first] = id;
      this.firstInPath[path] = id;
    }
    return id;
  }

  /** An entry no row holds any more leaves the dictionary (and its path's list, or the path cache). */
  private drop(id: number): void {
    const kind = this.kindOf[id];
    if (kind === PATH) {
      const key = this.dictionary.keyOf(id);
      this.pathIds.delete(utf8Out.decode(key.subarray(1)));
    } else if (kind !== LONG_STRINGS) {
      const prev = this.prevInPath[id], next = this.nextInPath[id];
      if (prev >= 0) this.nextInPath[prev] = next;
      else this.firstInPath[this.pathOf[id]] = next;
      if (next >= 0) this.prevInPath[next] = prev;
    }
    this.dictionary.remove(id);
  }

  /** List `id` among the row's entries, once. */
  private list(id: number): void {
    if (this.listedBy[id] === this.rowStamp) return;
    this.listedBy[id] = this.rowStamp;
    this.rowEntries = grown(this.rowEntries, this.rowEntryCount + 1);
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
    this.firstInPath = grown(this.firstInPath, limit);
    this.listedBy = grown(this.listedBy, limit);
    this.postings.ensureIds(this.kindOf.length);
  }

  /** Key of a value at `path` into `key`: its length, or -1 for a string longer than maxValueBytes. */
  private writeValueKey(path: number, value: unknown): number {
    if (typeof value === 'string') {
      if (value.length > this.maxValueBytes) return -1; // UTF-8 takes at least a byte per UTF-16 unit
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
    return at + utf8In.encodeInto(text, this.key.subarray(at)).written;
  }

  private numberOf(id: number): number {
    this.numberBytes.set(this.dictionary.keyOf(id).subarray(VALUE_AT, VALUE_AT + 8));
    return this.number[0];
  }

  private stringOf(id: number): string {
    return utf8Out.decode(this.dictionary.keyOf(id).subarray(VALUE_AT));
  }
}

/** findValue's answer for a string too long to be a key. */
const LONG = -2;

/** Visit every path that exists and every (path, scalar) of metadata, as filter-match.ts reads them (and JSON keeps them). */
function walkJson(object: Record<string, unknown>, prefix: string | null, onPath: (path: string) => void, onScalar: (path: string, value: unknown) => void): void {
  for (const key of Object.keys(object)) {
    const value = object[key];
    if (value === undefined || typeof value === 'function') continue; // JSON leaves these out
    const path = prefix === null ? key : prefix + '.' + key;
    onPath(path);
    if (isScalar(value)) onScalar(path, value);
    else if (isObject(value)) walkJson(value, path, onPath, onScalar);
    else if (Array.isArray(value)) {
      for (const item of value) {
        if (isScalar(item)) onScalar(path, item);
        else if (isObject(item)) walkJson(item, path, onPath, onScalar);
      }
    }
  }
}

/** Whether answering `node` reads rows' metadata (equality with an object or array, a long string, a string range). */
function reads(node: FilterNode): boolean {
  switch (node.kind) {
    case 'and': case 'or': return node.nodes.some(reads);
    case 'not': return reads(node.node);
    case 'eq': return !isScalar(node.value) || typeof node.value === 'string';
    case 'range': return typeof node.value === 'string';
    case 'exists': return false;
  }
}

/** The clauses of an and, those that may read rows last: they then read only the rows the others leave. */
function readsLast(nodes: FilterNode[]): FilterNode[] {
  const first = nodes.filter((n) => !reads(n));
  return first.length === nodes.length ? nodes : [...first, ...nodes.filter(reads)];
}
