// An index of metadata values, kept in step with every mutation of a
// VectorIndex: for each path (as filter-match.ts defines paths), the rows
// where the path exists and, per scalar value, the rows holding it. A filter
// then becomes a row bitmap through set algebra; only equality with an
// object or array value still reads each row's metadata.
//
// Rows are the dense rows of the VectorIndex; when a delete moves the last
// row into a hole, the caller removes and re-adds the moved row here.

import { RowBitmap } from './bitmap.js';
import type { FilterNode, Metadata } from './filter.js';
import { compareRange, matchNode } from './filter-match.js';
import { PATH_BYTES, POSTING_BYTES, SET_MEMBER_BYTES, stringHeapBytes } from './heap-size.js';
import { isObject, isScalar, type Scalar } from './json-value.js';

interface Posting {
  value: Scalar;
  rows: Set<number>;
  /** Estimated heap of the posting with its key and rows (heap-size.ts). */
  bytes: number;
}

interface PathEntry {
  exists: Set<number>;
  /** Keyed by type and value, so 1 and "1" stay apart. */
  values: Map<string, Posting>;
  /** Estimated heap of the entry, its postings included. */
  bytes: number;
}

const keyOf = (value: Scalar): string =>
  value === null ? 'z' : typeof value === 'number' ? 'n' + String(value) : typeof value === 'string' ? 's' + value : 'b' + value;

/** Visit every (path, scalar) of metadata and every path that exists, as filter-match.ts reads them. */
function walk(object: Record<string, unknown>, prefix: string | null, onPath: (path: string) => void, onScalar: (path: string, value: Scalar) => void): void {
  for (const key of Object.keys(object)) {
    const path = prefix === null ? key : prefix + '.' + key;
    const value = object[key];
    onPath(path);
    if (isScalar(value)) onScalar(path, value);
    else if (isObject(value)) walk(value, path, onPath, onScalar);
    else if (Array.isArray(value)) {
      for (const item of value) {
        if (isScalar(item)) onScalar(path, item);
        else if (isObject(item)) walk(item, path, onPath, onScalar);
      }
    }
  }
}

/** The rows of a path no vector has. */
const NO_ROWS: ReadonlySet<number> = new Set();

export class MetadataIndex {
  private paths = new Map<string, PathEntry>();
  /** Estimated heap of the whole index (the sum of its entries' bytes). */
  private bytes = 0;

  /**
   * The most heap that adding `metadata` to a new row can take (heap-size.ts):
   * a Set member per path and value, and the entries of those not yet indexed.
   */
  upperBytes(metadata: Metadata): number {
    let bytes = 0;
    walk(metadata, null,
      (path) => { bytes += SET_MEMBER_BYTES + (this.paths.has(path) ? 0 : PATH_BYTES + stringHeapBytes(path)); },
      (path, value) => {
        const key = keyOf(value);
        bytes += SET_MEMBER_BYTES + (this.paths.get(path)?.values.has(key) ? 0 : POSTING_BYTES + stringHeapBytes(key));
      });
    return bytes;
  }

  /** Estimated bytes of JS heap the index holds. */
  get heapBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.paths.clear();
    this.bytes = 0;
  }

  add(row: number, metadata: Metadata): void {
    walk(metadata, null,
      (path) => {
        const entry = this.entry(path);
        if (!entry.exists.has(row)) this.grow(entry, SET_MEMBER_BYTES);
        entry.exists.add(row);
      },
      (path, value) => {
        const entry = this.entry(path);
        const key = keyOf(value);
        let posting = entry.values.get(key);
        if (!posting) {
          entry.values.set(key, posting = { value, rows: new Set(), bytes: POSTING_BYTES + stringHeapBytes(key) });
          this.grow(entry, posting.bytes);
        }
        if (posting.rows.has(row)) return;
        posting.rows.add(row);
        posting.bytes += SET_MEMBER_BYTES;
        this.grow(entry, SET_MEMBER_BYTES);
      });
  }

  remove(row: number, metadata: Metadata): void {
    walk(metadata, null,
      (path) => {
        const entry = this.paths.get(path);
        if (!entry || !entry.exists.delete(row)) return;
        this.grow(entry, -SET_MEMBER_BYTES);
        if (entry.exists.size > 0) return;
        // No row has the path any more, so none has a value under it either.
        this.paths.delete(path);
        this.bytes -= entry.bytes;
      },
      (path, value) => {
        const entry = this.paths.get(path);
        const key = keyOf(value);
        const posting = entry?.values.get(key);
        if (!posting || !posting.rows.delete(row)) return;
        posting.bytes -= SET_MEMBER_BYTES;
        this.grow(entry!, -SET_MEMBER_BYTES);
        if (posting.rows.size > 0) return;
        entry!.values.delete(key);
        this.grow(entry!, -posting.bytes);
      });
  }

  /** Rows of [0, size) that match `node`; `metadataOf` is read only for object/array equality. */
  evaluate(node: FilterNode, size: number, metadataOf: readonly Metadata[]): RowBitmap {
    switch (node.kind) {
      case 'and': {
        const out = RowBitmap.all(size); // the empty filter {} matches everything
        for (const n of node.nodes) out.and(this.evaluate(n, size, metadataOf));
        return out;
      }
      case 'or': {
        const out = new RowBitmap(size);
        for (const n of node.nodes) if (!this.addPostings(n, out)) out.or(this.evaluate(n, size, metadataOf));
        return out;
      }
      case 'not':
        return this.evaluate(node.node, size, metadataOf).not();
      case 'exists': {
        const rows = RowBitmap.of(size, this.paths.get(node.path)?.exists ?? NO_ROWS);
        return node.value ? rows : rows.not();
      }
      case 'eq':
      case 'range': {
        const out = new RowBitmap(size);
        return this.addPostings(node, out) ? out : this.scan(node, size, metadataOf);
      }
    }
  }

  /**
   * Set the rows of a node answered by postings alone (scalar equality, a
   * range) in `out`; false for any other node. An $in of many values thus
   * fills one bitmap instead of or-ing one bitmap per value.
   */
  private addPostings(node: FilterNode, out: RowBitmap): boolean {
    if (node.kind === 'eq' && isScalar(node.value)) {
      const rows = this.paths.get(node.path)?.values.get(keyOf(node.value))?.rows;
      if (rows) out.addAll(rows);
      return true;
    }
    if (node.kind === 'range') {
      for (const posting of this.paths.get(node.path)?.values.values() ?? []) {
        if (compareRange(node.op, posting.value, node.value)) out.addAll(posting.rows);
      }
      return true;
    }
    return false;
  }

  private scan(node: FilterNode, size: number, metadataOf: readonly Metadata[]): RowBitmap {
    const out = new RowBitmap(size);
    for (let row = 0; row < size; row++) if (matchNode(node, metadataOf[row])) out.add(row);
    return out;
  }

  private entry(path: string): PathEntry {
    let entry = this.paths.get(path);
    if (!entry) {
      this.paths.set(path, entry = { exists: new Set(), values: new Map(), bytes: 0 });
      this.grow(entry, PATH_BYTES + stringHeapBytes(path));
    }
    return entry;
  }

  /** Count `bytes` more (or fewer) in `entry` and in the whole index. */
  private grow(entry: PathEntry, bytes: number): void {
    entry.bytes += bytes;
    this.bytes += bytes;
  }
}
