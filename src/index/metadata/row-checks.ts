// The rows a filter must read to be answered (a long string's or a large
// array's or object's hash has them as candidates; a string range, the rows
// with long strings at its path), gathered over the whole filter first, so
// that each row's metadata is read once per filter, whatever the number of
// clauses that name it. Clauses that mean the same (one path, one operator,
// one operand) are checked once; a row's values at a path are found once.
// The index then answers each such clause from the rows verified here
// (MetadataIndex.evaluate's second pass).

import type { RowBitmap } from '../bitmap.js';
import type { FilterNode, Metadata } from '../filter-types.js';
import { equalsAmong, rangeAmong, valuesAt } from '../filter-match.js';
import { canonicalJson } from './canonical-json.js';

/** Reads a row's metadata (parsed from its stored bytes). */
export type MetadataReader = (row: number) => Metadata;

/** Longest stretch of reading rows before the event loop gets a turn. */
const SLICE_MS = 4;

type Leaf = Extract<FilterNode, { kind: 'eq' } | { kind: 'range' }>;

interface Check {
  node: Leaf;
  /** Candidate rows, from every clause with this meaning. */
  rows: Int32Array[];
  matches: number[];
}

export class RowChecks {
  /** Per meaning of a clause that reads (checkKey): its candidates, then its matches. */
  private readonly checks = new Map<string, Check>();
  private verified = false;

  /** Clauses that have rows to read. */
  get size(): number {
    return this.checks.size;
  }

  /** Whether the reads are done (the clauses then answer from them). */
  get done(): boolean {
    return this.verified;
  }

  /** Rows `node` (an equality or a range) must read. */
  add(node: FilterNode, rows: Int32Array): void {
    if (rows.length === 0 || (node.kind !== 'eq' && node.kind !== 'range')) return;
    const key = checkKey(node);
    const check = this.checks.get(key);
    if (check) check.rows.push(rows);
    else this.checks.set(key, { node, rows: [rows], matches: [] });
  }

  /** Read each candidate row once, in row order, and test every distinct clause that names it. */
  verify(read: MetadataReader): void {
    const plan = this.plan();
    this.verifyRows(plan, read, 0, Number.POSITIVE_INFINITY);
    this.verified = true;
  }

  /** verify(), giving the event loop back every `sliceMs` (the server's filters; the caller keeps writes away meanwhile). */
  async verifySliced(read: MetadataReader, sliceMs = SLICE_MS): Promise<void> {
    const plan = this.plan();
    for (let next = 0; next < plan.rows.length; ) {
      next = this.verifyRows(plan, read, next, performance.now() + sliceMs);
      if (next < plan.rows.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.verified = true;
  }

  /** The rows to read, ascending, and the checks that name each. */
  private plan(): { rows: Int32Array; checksOf: Map<number, Check[]> } {
    const checksOf = new Map<number, Check[]>();
    for (const check of this.checks.values()) {
      for (const rows of check.rows) {
        for (const row of rows) {
          const list = checksOf.get(row);
          if (!list) checksOf.set(row, [check]);
          else if (list[list.length - 1] !== check) list.push(check); // a check's rows arrive together
        }
      }
    }
    return { rows: Int32Array.from(checksOf.keys()).sort(), checksOf };
  }

  /** Verify plan.rows from `from` until `deadline` (checked every few rows); the next row to do. */
  private verifyRows({ rows, checksOf }: ReturnType<RowChecks['plan']>, read: MetadataReader, from: number, deadline: number): number {
    for (let i = from; i < rows.length; i++) {
      if ((i & 7) === 7 && performance.now() > deadline) return i;
      const row = rows[i];
      const metadata = read(row);
      const valuesOf = new Map<string, unknown[]>();
      for (const check of checksOf.get(row)!) {
        const { node } = check;
        const values = valuesOf.get(node.path) ?? valuesAt(metadata, node.path);
        valuesOf.set(node.path, values);
        if (node.kind === 'eq' ? equalsAmong(values, node.value) : rangeAmong(values, node.op, node.value)) check.matches.push(row);
      }
    }
    return rows.length;
  }

  /** Set in `out` the rows of `node` that matched. */
  orMatches(node: FilterNode, out: RowBitmap): void {
    if (node.kind !== 'eq' && node.kind !== 'range') return;
    for (const row of this.checks.get(checkKey(node))?.matches ?? []) out.add(row);
  }
}

/** What a clause means, as a string: two clauses with one key match the same rows. */
function checkKey(node: Leaf): string {
  // An operand JSON cannot hold never reads (it equals nothing), so its key is never asked for.
  const operand = node.kind === 'eq' ? (canonicalJson(node.value, 'operand') ?? '') : `${typeof node.value}:${node.value}`;
  return `${node.kind === 'eq' ? 'eq' : node.op}\u0000${node.path}\u0000${operand}`;
}
