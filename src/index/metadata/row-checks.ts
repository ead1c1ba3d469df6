// The rows a filter must read to be answered (a long string's or a large
// array's or object's hash has them as candidates; a string range, the rows
// with long strings at its path), gathered over the whole filter first, so
// that each row's metadata is read once per filter, whatever the number of
// clauses that name it. The index then answers each such clause from the
// rows verified here (MetadataIndex.evaluate's second pass).

import type { RowBitmap } from '../bitmap.js';
import type { FilterNode, Metadata } from '../filter-types.js';
import { matchNode } from '../filter-match.js';

/** Reads a row's metadata (parsed from its stored bytes). */
export type MetadataReader = (row: number) => Metadata;

export class RowChecks {
  /** Per clause that reads: its candidate rows (ascending), then the ones that match. */
  private readonly candidates = new Map<FilterNode, Int32Array>();
  private readonly matches = new Map<FilterNode, number[]>();
  private verified = false;

  /** Clauses that have rows to read. */
  get size(): number {
    return this.candidates.size;
  }

  /** Whether the reads are done (the clauses then answer from them). */
  get done(): boolean {
    return this.verified;
  }

  /** Rows `node` must read, added to the ones it has (a clause can ask twice only when its rows are the same). */
  add(node: FilterNode, rows: Int32Array): void {
    if (rows.length > 0) this.candidates.set(node, rows);
  }

  /** Read each candidate row once, in row order, and test every clause that names it. */
  verify(read: MetadataReader): void {
    const clausesOf = new Map<number, FilterNode[]>();
    for (const [node, rows] of this.candidates) {
      for (const row of rows) {
        const list = clausesOf.get(row);
        if (list) list.push(node);
        else clausesOf.set(row, [node]);
      }
    }
    const rows = Int32Array.from(clausesOf.keys()).sort();
    for (const row of rows) {
      const metadata = read(row);
      for (const node of clausesOf.get(row)!) if (matchNode(node, metadata)) this.matchesOf(node).push(row);
    }
    this.verified = true;
  }

  /** Set in `out` the rows of `node` that matched. */
  orMatches(node: FilterNode, out: RowBitmap): void {
    for (const row of this.matches.get(node) ?? []) out.add(row);
  }

  private matchesOf(node: FilterNode): number[] {
    const list = this.matches.get(node);
    if (list) return list;
    const made: number[] = [];
    this.matches.set(node, made);
    return made;
  }
}
