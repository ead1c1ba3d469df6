// The rows a filter must read to be answered (a long string's or a large
// array's or object's hash has them as candidates; a string range, the rows
// with long strings at its path), gathered over the whole filter first, so
// that each row's metadata is read once per filter, whatever the number of
// clauses that name it. Clauses that mean the same (one path, one operator,
// one operand) are checked once; a row's values at a path are found once.
// The index then answers each such clause from the rows verified here
// (MetadataIndex.evaluate's second pass).

import { RowBitmap } from '../bitmap.js';
import type { FilterNode, Metadata } from '../filter-types.js';
import { equalsAmong, rangeAmong, valuesAt } from '../filter-match.js';
import { canonicalJson } from './canonical-json.js';

/** Reads a row's metadata (parsed from its stored bytes). */
export type MetadataReader = (row: number) => Metadata;

type Range = Extract<FilterNode, { kind: 'range' }>;
/** A range of a walk, and the rows of the values in it. */
export interface WalkedRange {
  node: Range;
  bits: RowBitmap;
}
/** The walk of a path's values from an entry (START: the first) until a deadline: the entry to go on from, or -1 when done (MetadataIndex.walkStep). */
export type WalkStep = (path: number, ranges: WalkedRange[], from: number, deadline: number) => number;
export const START = -2;

/** The rows to read, ascending; the checks of row r are checks[list[start[r] .. start[r + 1])]. */
interface Plan {
  rows: Int32Array;
  start: Int32Array;
  list: Int32Array;
  checks: Check[];
}

/** The ranges of one path, walked together. */
interface Walk {
  path: number;
  ranges: Map<string, WalkedRange>;
  next: number;
}

/** Longest stretch of reading rows before the event loop gets a turn. */
const SLICE_MS = 4;

type Leaf = Extract<FilterNode, { kind: 'eq' } | { kind: 'range' }>;

interface Check {
  node: Leaf;
  /** Candidate rows, from every clause with this meaning. */
  rows: Int32Array[];
  /** The `within` each list of rows was cut to: a clause repeated under one (an $in's) adds nothing. */
  cuts: (RowBitmap | null)[];
  matches: number[];
}

export class RowChecks {
  /** Per meaning of a clause that reads (checkKey): its candidates, then its matches. */
  private readonly checks = new Map<string, Check>();
  /** Per path id, the ranges on it (checkKey), walked over its values once. */
  private readonly walks = new Map<number, Walk>();
  private verified = false;

  /** Clauses that have rows to read or values to walk. */
  get size(): number {
    return this.checks.size + this.walks.size;
  }

  /** Whether the reads are done (the clauses then answer from them). */
  get done(): boolean {
    return this.verified;
  }

  /** Whether `node` (an equality or a range) under `within` has rows to note yet (false once a clause of the same meaning under the same `within` has). */
  wants(node: FilterNode, within: RowBitmap | null): boolean {
    if (node.kind !== 'eq' && node.kind !== 'range') return false;
    return !this.checks.get(checkKey(node))?.cuts.includes(within);
  }

  /** Rows `node` (an equality or a range) must read, its candidates under `within`. */
  add(node: FilterNode, rows: Int32Array, within: RowBitmap | null): void {
    if (node.kind !== 'eq' && node.kind !== 'range') return;
    const key = checkKey(node);
    const check = this.checks.get(key);
    if (check) {
      check.rows.push(rows);
      check.cuts.push(within);
    } else this.checks.set(key, { node, rows: [rows], cuts: [within], matches: [] });
  }

  /** The range `node` on path `path` (an id of the index) is answered by a walk of the path's values. */
  addWalk(path: number, node: Range, size: number): void {
    let walk = this.walks.get(path);
    if (!walk) {
      walk = { path, ranges: new Map(), next: START };
      this.walks.set(path, walk);
    }
    const key = checkKey(node);
    if (!walk.ranges.has(key)) walk.ranges.set(key, { node, bits: new RowBitmap(size) });
  }

  /** Set in `out` the rows of the values the walk found in range `node`. */
  orWalked(node: Range, out: RowBitmap): void {
    const key = checkKey(node);
    for (const walk of this.walks.values()) {
      const range = walk.ranges.get(key);
      if (range) {
        out.or(range.bits);
        return;
      }
    }
  }

  /** Walk the values of each range's path, read each candidate row once, in row order, and test every distinct clause that names it. */
  verify(read: MetadataReader, walk: WalkStep): void {
    for (const w of this.walks.values()) w.next = walk(w.path, [...w.ranges.values()], w.next, Number.POSITIVE_INFINITY);
    const plan = this.plan();
    this.verifyRows(plan, read, 0, Number.POSITIVE_INFINITY);
    this.verified = true;
  }

  /**
   * verify(), giving the event loop back every `sliceMs` (the server's
   * filters; the caller keeps writes away meanwhile). Stops, unverified,
   * once `stale` says the rows changed.
   */
  async verifySliced(read: MetadataReader, walk: WalkStep, stale: () => boolean, sliceMs = SLICE_MS): Promise<void> {
    const pause = () => new Promise<void>((resolve) => setImmediate(resolve));
    for (const w of this.walks.values()) {
      const ranges = [...w.ranges.values()];
      for (;;) {
        w.next = walk(w.path, ranges, w.next, performance.now() + sliceMs);
        if (w.next === -1) break;
        await pause();
        if (stale()) return;
      }
    }
    const plan = this.plan();
    for (let next = 0; next < plan.rows.length; ) {
      next = this.verifyRows(plan, read, next, performance.now() + sliceMs);
      if (next < plan.rows.length) {
        await pause();
        if (stale()) return;
      }
    }
    this.verified = true;
  }

  /** The rows to read, ascending, and the checks that name each (rows' lists side by side in typed arrays: no object per row). */
  private plan(): Plan {
    const checks = [...this.checks.values()];
    let size = 0;
    for (const check of checks) for (const rows of check.rows) if (rows.length > 0) size = Math.max(size, rows[rows.length - 1] + 1);
    const start = new Int32Array(size + 1);
    const last = new Int32Array(size).fill(-1);
    const each = (visit: (row: number, c: number) => void) => {
      last.fill(-1);
      checks.forEach((check, c) => {
        for (const rows of check.rows) {
          for (const row of rows) {
            if (last[row] === c) continue; // a row twice in one check
            last[row] = c;
            visit(row, c);
          }
        }
      });
    };
    each((row) => start[row + 1]++);
    for (let r = 0; r < size; r++) start[r + 1] += start[r];
    const fill = start.slice(0, size);
    const list = new Int32Array(start[size]);
    each((row, c) => {
      list[fill[row]++] = c;
    });
    let count = 0;
    for (let r = 0; r < size; r++) if (start[r + 1] > start[r]) count++;
    const rows = new Int32Array(count);
    for (let r = 0, j = 0; r < size; r++) if (start[r + 1] > start[r]) rows[j++] = r;
    return { rows, start, list, checks };
  }

  /** Verify plan.rows from `from` until `deadline` (checked every few rows); the next row to do. */
  private verifyRows({ rows, start, list, checks }: Plan, read: MetadataReader, from: number, deadline: number): number {
    for (let i = from; i < rows.length; i++) {
      if ((i & 7) === 7 && performance.now() > deadline) return i;
      const row = rows[i];
      const metadata = read(row);
      const valuesOf = new Map<string, unknown[]>();
      for (let k = start[row]; k < start[row + 1]; k++) {
        const check = checks[list[k]];
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
