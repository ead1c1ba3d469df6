// groupBy: the topK groups of the kept rows by the scalars at a path, each
// with its best `size` rows, groups ordered by their best row. Read from the
// filter index (each value's rows) over every kept row, so exact; a row with
// an array joins the group of each distinct element, a row without a scalar
// there (missing, or an object) joins none. Strings too long to be index keys
// are read from their rows' metadata.
import { valuesAt } from '../filter-match.js';
import type { IndexRead } from '../index-read.js';
import type { Scalar } from '../json-value.js';
import { kept, type ScoredRows } from './scored-rows.js';

/** A group: its value and its best positions, best first. */
export interface PositionGroup {
  value: Scalar;
  positions: Int32Array;
}

const TYPE_ORDER: Record<string, number> = { number: 0, string: 1, boolean: 2, object: 3 };

/** An order of values for groups whose best rows tie (the same row, in two groups through an array). */
function compareValues(a: Scalar, b: Scalar): number {
  const ta = TYPE_ORDER[typeof a],
    tb = TYPE_ORDER[typeof b];
  if (ta !== tb) return ta - tb;
  return a! < b! ? -1 : a! > b! ? 1 : 0;
}

/** The topK groups at `path` of the kept positions of `scored`, each with its best `size`. */
export function groupPositions(index: IndexRead, scored: ScoredRows, seqs: Uint32Array, path: string, size: number, topK: number): PositionGroup[] {
  const { rows, good } = scored;
  // Every row scored (no filter): a row is its own position, left out by its goodness.
  const positionOf = rows.length === index.rows.size ? null : new Int32Array(index.rows.size).fill(-1);
  if (positionOf) for (let i = 0; i < rows.length; i++) positionOf[rows[i]] = i;
  const worse = (a: number, b: number) => good[a] < good[b] || (good[a] === good[b] && seqs[rows[a]] > seqs[rows[b]]);
  const groupWorse = (a: PositionGroup, b: PositionGroup) =>
    worse(a.positions[0], b.positions[0]) || (a.positions[0] === b.positions[0] && compareValues(a.value, b.value) > 0);
  const groups: PositionGroup[] = [];
  const best = new Int32Array(size);
  // One value's rows: its best `size` by insertion into `best`, then the group among the topK best so far.
  const offer = (value: Scalar, members: ArrayLike<number>, from: number, to: number) => {
    // Once topK groups are held, a value whose best row is worse than the last group's best makes no group:
    // told by one pass over its rows' goodness before any insertion (most values, on most searches).
    if (groups.length === topK) {
      const last = groups[topK - 1].positions[0];
      const floor = good[last];
      let any = false;
      for (let m = from; m < to && !any; m++) {
        const p = positionOf ? positionOf[members[m]] : members[m];
        any = p >= 0 && good[p] >= floor;
      }
      if (!any) return;
    }
    let count = 0;
    for (let m = from; m < to; m++) {
      const p = positionOf ? positionOf[members[m]] : members[m];
      // kept() written out: an imported function's binding is looked up at each call.
      if (p < 0 || !(good[p] > Number.NEGATIVE_INFINITY) || (count === size && !worse(best[size - 1], p))) continue;
      let at = count < size ? count++ : size - 1;
      while (at > 0 && worse(best[at - 1], p)) {
        best[at] = best[at - 1];
        at--;
      }
      best[at] = p;
    }
    if (count === 0) return;
    // Most values fall short of the topK groups so far: told by their best row before a group is made.
    if (groups.length === topK) {
      const last = groups[topK - 1].positions[0];
      if (worse(best[0], last) || (best[0] === last && compareValues(value, groups[topK - 1].value) > 0)) return;
    }
    const group = { value, positions: best.slice(0, count) };
    let at = groups.length < topK ? groups.length : topK - 1;
    groups[at] = group;
    while (at > 0 && groupWorse(groups[at - 1], groups[at])) {
      [groups[at - 1], groups[at]] = [groups[at], groups[at - 1]];
      at--;
    }
  };
  const { values, starts, rows: valueRows, longRows } = index.metadata.valuesAt(path);
  for (let v = 0; v < values.length; v++) offer(values[v], valueRows, starts[v], starts[v + 1]);
  for (const [value, members] of longValues(index, path, values, longRows, (row) => {
    const p = positionOf ? positionOf[row] : row;
    return p >= 0 && kept(good, p);
  }))
    offer(value, members, 0, members.length);
  return groups;
}

/** The kept rows of each string at `path` too long to be an index key (those the index lists are left out), read from the rows. */
function longValues(index: IndexRead, path: string, values: Scalar[], longRows: Int32Array, keptRow: (row: number) => boolean): Map<string, number[]> {
  const byValue = new Map<string, number[]>();
  if (longRows.length === 0) return byValue;
  const indexed = new Set(values.filter((value) => typeof value === 'string'));
  for (const row of longRows) {
    if (!keptRow(row)) continue;
    const seen = new Set<string>();
    for (const value of valuesAt(index.metadata.object(row), path)) {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (typeof item !== 'string' || indexed.has(item) || seen.has(item)) continue;
        seen.add(item);
        const members = byValue.get(item);
        if (members) members.push(row);
        else byValue.set(item, [row]);
      }
    }
  }
  return byValue;
}
