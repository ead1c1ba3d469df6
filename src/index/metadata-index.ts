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
import { isObject, isScalar, type Scalar } from './json-value.js';

interface Posting {
  value: Scalar;
  rows: Set<number>;
}

interface PathEntry {
  exists: Set<number>;
  /** Keyed by type and value, so 1 and "1" stay apart. */
  values: Map<string, Posting>;
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

  clear(): void {
    this.paths.clear();
  }

  add(row: number, metadata: Metadata): void {
    walk(metadata, null,
      (path) => this.entry(path).exists.add(row),
      (path, value) => {
        const values = this.entry(path).values;
        const key = keyOf(value);
        let posting = values.get(key);
        if (!posting) values.set(key, posting = { value, rows: new Set() });
        posting.rows.add(row);
      });
  }

  remove(row: number, metadata: Metadata): void {
    walk(metadata, null,
      (path) => {
        const entry = this.paths.get(path);
        if (!entry) return;
        entry.exists.delete(row);
        if (entry.exists.size === 0) this.paths.delete(path);
      },
      (path, value) => {
        const values = this.paths.get(path)?.values;
        const key = keyOf(value);
        const posting = values?.get(key);
        if (!posting) return;
        posting.rows.delete(row);
        if (posting.rows.size === 0) values!.delete(key);
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
    if (!entry) this.paths.set(path, entry = { exists: new Set(), values: new Map() });
    return entry;
  }
}
