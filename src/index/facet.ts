// Facet counts: how many of the rows a filter matches hold each value at a
// path, read from the filter index (a value's posting counted within the
// filter's bitmap), never from the rows' JSON. A row counts once per distinct
// value it holds (an array's elements each once). The values come ordered by
// count, descending, then by value (value-order.ts); numeric ranges count the
// rows holding a number in [gte, lt). Strings too long to be index keys
// (maxIndexedValueBytes) are no value of a facet: `longStrings` counts the rows
// holding one. Objects are no value either (facet a nested path: "a.b").
import { RowBitmap } from './bitmap.js';
import { parseFilter, type Filter } from './filter.js';
import { liveMatching } from './live-rows.js';
import type { IndexRead } from './index-read.js';
import { NUMBER } from './metadata/entry-key.js';
import type { PathValues } from './metadata/metadata-index.js';
import { compareEntries, type ScalarValue, entryValue } from './value-order.js';

/** A numeric bucket: rows holding a number x with gte <= x < lt (a missing bound is open). */
export interface FacetRange {
  gte?: number;
  lt?: number;
}

export interface FacetOptions {
  path: string;
  filter?: Filter;
  /** Values answered, the most counted first. */
  limit: number;
  ranges?: FacetRange[];
}

export interface FacetResult {
  values: { value: ScalarValue; count: number }[];
  /** Distinct values with a count above 0 (values answers the first `limit`). */
  distinctValues: number;
  /** Rows holding a string at the path too long to be counted as a value. */
  longStrings: number;
  /** With ranges: each range asked, in its order, with its count. */
  ranges?: (FacetRange & { count: number })[];
}

/** Value entries walked between two pauses. */
const STEP_ENTRIES = 2048;

/** The facet of `options.path`, as steps (a pause between each, see Slices.run); writes kept away meanwhile. */
export function* facetSteps(index: IndexRead, options: FacetOptions): Generator<void, FacetResult> {
  const ranges = options.ranges ?? null;
  const values = index.metadata.values;
  const size = index.rows.size;
  const path = values && size > 0 ? values.findPath(options.path) : -1;
  if (values === null || path < 0) return empty(ranges);
  // The rows the filter matches that are live now (postings keep expired rows until the sweep), null for every row.
  const within = liveMatching(index, options.filter ? parseFilter(options.filter) : null);
  const top = new TopValues(values, options.limit);
  let distinct = 0,
    walked = 0;
  for (let id = values.firstValue(path); id >= 0; id = values.nextValue(id)) {
    if (++walked % STEP_ENTRIES === 0) yield;
    const count = within ? values.countIn(id, within.words) : values.rowCount(id);
    if (count === 0) continue;
    distinct++;
    top.offer(id, count);
  }
  const long = values.findLongStrings(path);
  const longStrings = long < 0 ? 0 : within ? values.countIn(long, within.words) : values.rowCount(long);
  const counted = top.sorted().map((id, i) => ({ value: entryValue(values, id), count: top.countAt(i) }));
  const result: FacetResult = { values: counted, distinctValues: distinct, longStrings };
  if (ranges) result.ranges = yield* rangeCounts(values, path, ranges, size, within);
  return result;
}

function empty(ranges: FacetRange[] | null): FacetResult {
  const result: FacetResult = { values: [], distinctValues: 0, longStrings: 0 };
  if (ranges) result.ranges = ranges.map((range) => ({ ...range, count: 0 }));
  return result;
}

/**
 * Each range's rows (within the filter) holding a number in it: one walk of
 * the path's values a range, into one bitmap of the rows reused for all, so a
 * request holds one bitmap whatever its ranges (a row holding two numbers of
 * a range counts once).
 */
function* rangeCounts(
  values: PathValues,
  path: number,
  ranges: FacetRange[],
  size: number,
  within: RowBitmap | null,
): Generator<void, (FacetRange & { count: number })[]> {
  const rows = new RowBitmap(size);
  const counts: (FacetRange & { count: number })[] = [];
  for (const range of ranges) {
    rows.words.fill(0);
    const { gte, lt } = range;
    let walked = 0;
    for (let id = values.firstValue(path); id >= 0; id = values.nextValue(id)) {
      if (++walked % STEP_ENTRIES === 0) yield;
      if (values.valueKind(id) !== NUMBER) continue;
      const x = values.numberOf(id);
      if ((gte === undefined || x >= gte) && (lt === undefined || x < lt)) values.orInto(id, rows.words);
    }
    counts.push({ ...range, count: (within ? rows.and(within) : rows).count() });
  }
  return counts;
}

/**
 * The first `limit` values by (count desc, value asc), kept in a heap with
 * the last of them on top: most values are turned away by one comparison of
 * counts, so the walk costs about one step per value whatever `limit`.
 */
class TopValues {
  private readonly ids: Int32Array;
  private readonly counts: Uint32Array;
  private size = 0;

  constructor(
    private readonly values: PathValues,
    private readonly limit: number,
  ) {
    this.ids = new Int32Array(limit);
    this.counts = new Uint32Array(limit);
  }

  offer(id: number, count: number): void {
    if (this.size < this.limit) {
      this.ids[this.size] = id;
      this.counts[this.size] = count;
      this.up(this.size++);
    } else if (this.before(id, count, this.ids[0], this.counts[0])) {
      this.ids[0] = id;
      this.counts[0] = count;
      this.down(0);
    }
  }

  /** The kept ids, first first (the counts then read by countAt in the same order). */
  sorted(): number[] {
    const order = Array.from({ length: this.size }, (_, i) => i);
    order.sort((a, b) => (this.before(this.ids[a], this.counts[a], this.ids[b], this.counts[b]) ? -1 : 1));
    const ids = order.map((i) => this.ids[i]);
    const counts = order.map((i) => this.counts[i]);
    this.counts.set(counts);
    return ids;
  }

  countAt(i: number): number {
    return this.counts[i];
  }

  /** Whether (a, countA) comes before (b, countB) in the answer. */
  private before(a: number, countA: number, b: number, countB: number): boolean {
    if (countA !== countB) return countA > countB;
    return compareEntries(this.values, a, b) < 0;
  }

  /** Whether kept slot `i` comes after slot `j`. */
  private after(i: number, j: number): boolean {
    return this.before(this.ids[j], this.counts[j], this.ids[i], this.counts[i]);
  }

  /** Heap order: a parent comes after its children (the last kept on top). */
  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(this.ids[parent], this.counts[parent], this.ids[i], this.counts[i])) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      let last = i;
      const left = 2 * i + 1,
        right = left + 1;
      if (left < this.size && this.after(left, last)) last = left;
      if (right < this.size && this.after(right, last)) last = right;
      if (last === i) return;
      this.swap(i, last);
      i = last;
    }
  }

  private swap(i: number, j: number): void {
    const id = this.ids[i],
      count = this.counts[i];
    this.ids[i] = this.ids[j];
    this.counts[i] = this.counts[j];
    this.ids[j] = id;
    this.counts[j] = count;
  }
}
