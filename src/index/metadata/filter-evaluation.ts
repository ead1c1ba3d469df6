// A filter answered from the filter index's entries (metadata-index.ts) by
// set algebra over their rows. A first pass gathers the rows the clauses that
// must read metadata may match (RowChecks), which are then read once each; a
// second pass answers those clauses from what was read.

import { RowBitmap } from '../bitmap.js';
import type { FilterNode } from '../filter.js';
import { isScalar } from '../json-value.js';
import { canonicalJson } from './canonical-json.js';
import { type MetadataReader, RowChecks, type WalkStep } from './row-checks.js';

/** What evaluating a filter asks of the index: entries by path and value, their rows, and the walk of a path's values. */
export interface EntryLookup {
  findPath(path: string): number;
  /** The entry of an equality's operand at `path`: -1 when no row holds it, LONG when it is keyed by its hash. */
  findOperand(path: number, value: unknown): number;
  /** The entry keyed by the hash of a long value's canonical `text` at `path`, -1 when no row holds one. */
  findHashed(path: number, text: string): number;
  /** The entry of the rows with long strings at `path`, or -1. */
  findLongStrings(path: number): number;
  orInto(id: number, words: Uint32Array): void;
  readonly walkStep: WalkStep;
}

/**
 * Rows of [0, size) that match `node`. A first pass gathers the rows the
 * clauses that must read metadata may match (RowChecks), which are then
 * read once each; a second pass answers those clauses from what was read.
 */
export function evaluate(index: EntryLookup, node: FilterNode, size: number, read: MetadataReader, prepared: RowChecks | null = null): RowBitmap {
  if (prepared?.done) return rowsOf(index, node, size, null, prepared);
  const checks = new RowChecks();
  const first = rowsOf(index, node, size, null, checks);
  if (checks.size === 0) return first;
  checks.verify(read, index.walkStep);
  return rowsOf(index, node, size, null, checks);
}

/** The first pass of evaluate alone: the rows `node` must read, to be read before evaluate (verifySliced) and given to it. */
export function checksOf(index: EntryLookup, node: FilterNode, size: number): RowChecks {
  const checks = new RowChecks();
  rowsOf(index, node, size, null, checks);
  return checks;
}

/**
 * The rows matching `node`, exact on the rows of `within` (all rows when
 * null); others may be either. Before `checks` are done, the clauses that
 * read give their candidates, a superset: `within` is thus only ever made
 * of clauses that do not read, the same in both passes.
 */
function rowsOf(index: EntryLookup, node: FilterNode, size: number, within: RowBitmap | null, checks: RowChecks): RowBitmap {
  switch (node.kind) {
    case 'and': {
      const out = within ? within.copy() : RowBitmap.all(size); // the empty filter {} matches everything
      let exact: RowBitmap | null = null;
      for (const child of readsLast(node.nodes)) {
        if (exact === null && reads(child)) exact = out.copy();
        out.and(rowsOf(index, child, size, exact ?? out, checks));
      }
      return out;
    }
    case 'or': {
      const out = new RowBitmap(size);
      for (const child of node.nodes) {
        if (!addMatches(index, child, out, within, checks)) out.or(rowsOf(index, child, size, within, checks));
      }
      return out;
    }
    case 'not':
      return rowsOf(index, node.node, size, within, checks).not();
    case 'exists': {
      const out = new RowBitmap(size);
      const path = index.findPath(node.path);
      if (path >= 0) index.orInto(path, out.words);
      return node.value ? out : out.not();
    }
    case 'eq':
    case 'range': {
      const out = new RowBitmap(size);
      addMatches(index, node, out, within, checks);
      return out;
    }
  }
}

/**
 * Set the rows matching an equality or a range in `out` (exact on
 * `within`), reading only rows under a long value's hash or, for a string
 * range, with long strings at the path; false for any other node. An $in
 * of many values thus fills one bitmap.
 */
function addMatches(index: EntryLookup, node: FilterNode, out: RowBitmap, within: RowBitmap | null, checks: RowChecks): boolean {
  if (node.kind === 'eq') {
    const path = index.findPath(node.path);
    if (path < 0) return true;
    const id = index.findOperand(path, node.value);
    if (id >= 0) index.orInto(id, out.words);
    else if (id === LONG) readRows(index, index.findHashed(path, canonicalJson(node.value, 'operand')!), node, out, within, checks);
    return true;
  }
  if (node.kind === 'range') {
    const path = index.findPath(node.path);
    if (path < 0) return true;
    // The walk over the path's values is done between the passes (in slices ahead, on the server).
    if (checks.done) checks.orWalked(node, out);
    else checks.addWalk(path, node, out.size);
    if (typeof node.value === 'string') readRows(index, index.findLongStrings(path), node, out, within, checks);
    return true;
  }
  return false;
}

/**
 * Set in `out` the rows of entry `id` (none when -1) within `within` whose
 * metadata matches `node`: once `checks` are done, those read; before, all
 * of them, each noted to be read.
 */
function readRows(index: EntryLookup, id: number, node: FilterNode, out: RowBitmap, within: RowBitmap | null, checks: RowChecks): void {
  if (checks.done) {
    checks.orMatches(node, out);
    return;
  }
  if (id < 0 || !checks.wants(node, within)) return;
  const candidates = new RowBitmap(out.size);
  index.orInto(id, candidates.words);
  if (within) candidates.and(within);
  checks.add(node, candidates.rows(), within);
  out.or(candidates);
}

/** findOperand's answer for a value too long to be a key (keyed by its hash). */
export const LONG = -2;

/** Whether answering `node` may read rows' metadata or walk a path's values (equality with a string, an object or an array, a range). */
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
      return true;
    case 'exists':
      return false;
  }
}

/** The clauses of an and, those that may read rows last: they then read only the rows the others leave. */
function readsLast(nodes: FilterNode[]): FilterNode[] {
  const first = nodes.filter((n) => !reads(n));
  return first.length === nodes.length ? nodes : [...first, ...nodes.filter(reads)];
}
