// A page of a listing ordered by the value at a metadata path (orderBy):
// numbers, then strings (value-order.ts; desc reverses it), ties by insertion
// order, then the rows without such a value (path missing, or holding only
// booleans, null, objects or strings too long to be index keys) in insertion
// order. A row holding an array is placed at its first element in the order
// (the least for asc, the greatest for desc). Read from the filter index: one
// walk of the path's values keeps the first RUN_VALUES after the cursor in a
// heap (most values turned away by one comparison), never a sort of every
// row; while nothing is written, the next pages take their values from that
// run, so a quiet listing walks the values once per RUN_VALUES values.
import { RowBitmap } from './bitmap.js';
import { parseFilter } from './filter.js';
import type { IndexRead } from './index-read.js';
import { liveMatching } from './live-rows.js';
import { NUMBER, STRING } from './metadata/entry-key.js';
import type { PathValues } from './metadata/metadata-index.js';
import { decodeOrderCursor, encodeOrderCursor, type OrderBy, type OrderKey, orderTag } from './order-cursor.js';
import type { ListOptions } from './types.js';
import { compareEntries, kindRank } from './value-order.js';

/** The rows of one ordered page (listing.ts makes them vectors). */
export interface OrderedRows {
  ids: string[];
  rows: number[];
  nextCursor: string | null;
}

interface Placed {
  row: number;
  key: OrderKey;
}

/** What placing a page reads: the index, the path's values and the order. */
interface Walk {
  index: IndexRead;
  values: PathValues;
  path: number;
  /** 1 asc, -1 desc. */
  sign: number;
  after: OrderKey | null;
  within: RowBitmap | null;
  want: number;
  placed: Placed[];
  cache: RunCache;
  /** The index's version and the path's name: what a kept run must match. */
  version: number;
  pathName: string;
}

const NO_BYTES = new Uint8Array(0);

/** Values the first walk of a page keeps in order, for the next pages while nothing is written (RunCache). */
const RUN_VALUES = 1024;

/**
 * The values of one path in order after a cursor (`from`, null: the start),
 * as the last walk found them, while the index is at `version`: the pages of
 * a listing during which nothing is written take their values from it, so
 * a walk of all the path's values is made every RUN_VALUES values, not every
 * page. One per index; a few KiB.
 */
export interface RunCache {
  run: { version: number; path: string; sign: number; from: OrderKey | null; ids: number[]; complete: boolean } | null;
}

/** Values or log entries walked between two pauses of a page's steps. */
const STEP_ITEMS = 2048;

/** One page of `options.orderBy`'s order after `options.cursor`, as steps (a pause between each, see Slices.run); writes kept away meanwhile. */
export function* orderedPageSteps(
  index: IndexRead,
  epoch: string,
  options: ListOptions & { orderBy: OrderBy },
  cache: RunCache = { run: null },
): Generator<void, OrderedRows> {
  const { rows } = index;
  const size = rows.size;
  const tag = orderTag(options.orderBy);
  const after = options.cursor === undefined ? null : decodeOrderCursor(options.cursor, epoch, tag, rows.nextSeq - 1);
  // The rows the filter matches that are live now (per-record TTL), null for every row: a kept run holds values, not rows.
  const within = liveMatching(index, options.filter ? parseFilter(options.filter) : null);
  const values = index.metadata.values;
  const path = values && size > 0 ? values.findPath(options.orderBy.path) : -1;
  const placed: Placed[] = [];
  const walk: Walk | null =
    values && path >= 0
      ? {
          index,
          values,
          path,
          sign: options.orderBy.direction === 'asc' ? 1 : -1,
          after,
          within,
          want: options.limit + 1,
          placed,
          cache,
          version: index.version,
          pathName: options.orderBy.path,
        }
      : null;
  if (walk && !(after !== null && after.rank < 0)) yield* placeValued(walk);
  if (placed.length <= options.limit) yield* placeMissing(index, after, within, walk ? yield* valuedRows(walk) : null, options.limit + 1, placed);
  const page = placed.slice(0, options.limit);
  return {
    ids: page.map(({ row }) => rows.idAt(row)),
    rows: page.map(({ row }) => row),
    nextCursor: placed.length > options.limit ? encodeOrderCursor(epoch, tag, page[page.length - 1].key) : null,
  };
}

/** Whether a value entry is one the order places (a number, or a string short enough to be a key). */
function ordered(values: PathValues, id: number): boolean {
  const kind = values.valueKind(id);
  return kind === NUMBER || kind === STRING;
}

/** Order of value entry `id` against the key `key` (ascending): negative when it comes first. */
function compareToKey(values: PathValues, id: number, key: OrderKey): number {
  const rank = kindRank(values.valueKind(id));
  if (rank !== key.rank) return rank - key.rank;
  return rank === 0 ? Math.sign(values.numberOf(id) - key.number) : values.compareStringTo(id, key.bytes);
}

/**
 * Place the rows with a value after the cursor, up to `want`, in order: the
 * first `take` values after the cursor (then after the last taken, twice as
 * many, while the page is not full), each value's rows in insertion order.
 */
function* placeValued(walk: Walk): Generator<void, void> {
  const { values, sign, after, want, placed } = walk;
  const first = (a: number, b: number) => sign * compareEntries(values, a, b) < 0;
  let from: number | null = null;
  for (let take = Math.max(want, RUN_VALUES), round = 0; placed.length < want; take *= 2, round++) {
    // The first round takes the kept run when it serves, else walks and keeps what it found.
    const kept = round === 0 ? keptRun(walk) : null;
    const batch: number[] = kept ?? (yield* firstAfter(walk, from, take, first));
    const complete = kept !== null ? walk.cache.run!.complete : batch.length < take;
    if (round === 0 && kept === null) keepRun(walk, batch, complete);
    for (const id of batch) {
      if (placed.length === want) return;
      placeEntry(walk, id, after !== null && compareToKey(values, id, after) === 0 ? after.seq : -1);
    }
    if (complete || batch.length === 0) return;
    from = batch[batch.length - 1];
  }
}

/** Keep `ids` (the values in order after the cursor; `complete`: every such value) for the next pages. */
function keepRun(walk: Walk, ids: number[], complete: boolean): void {
  walk.cache.run = { version: walk.version, path: walk.pathName, sign: walk.sign, from: walk.after, ids, complete };
}

/** The kept run's values at or after the cursor, when the run was made for this order at this version from a cursor at or before it; else null. */
function keptRun(walk: Walk): number[] | null {
  const { values, sign, after } = walk;
  const run = walk.cache.run;
  if (run === null || run.version !== walk.version || run.path !== walk.pathName || run.sign !== sign) return null;
  if (run.from !== null && (after === null || sign * compareKeys(after, run.from) < 0)) return null;
  if (after === null) return run.ids;
  // The first value at or after the cursor's: a binary search of the run.
  let lo = 0,
    hi = run.ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sign * compareToKey(values, run.ids[mid], after) < 0) lo = mid + 1;
    else hi = mid;
  }
  // Past the run's last value, the run says nothing about what follows unless it held every value.
  if (lo === run.ids.length && !run.complete) return null;
  return run.ids.slice(lo);
}

/** Ascending order of two keys' values (numbers, then strings; seqs not compared). */
function compareKeys(a: OrderKey, b: OrderKey): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.rank === 0) return Math.sign(a.number - b.number);
  const n = Math.min(a.bytes.length, b.bytes.length);
  for (let i = 0; i < n; i++) if (a.bytes[i] !== b.bytes[i]) return a.bytes[i] - b.bytes[i];
  return a.bytes.length - b.bytes.length;
}

/**
 * The first `k` ordered values after entry `from` (or after the cursor when
 * null), sorted: a heap of k with the last of them on top, so once it is full
 * most values are turned away by one comparison with its top.
 */
function* firstAfter(walk: Walk, from: number | null, k: number, first: (a: number, b: number) => boolean): Generator<void, number[]> {
  const { values, path, sign, after } = walk;
  const heap: number[] = [];
  let walked = 0;
  for (let id = values.firstValue(path); id >= 0; id = values.nextValue(id)) {
    if (++walked % STEP_ITEMS === 0) yield;
    if (!ordered(values, id)) continue;
    if (heap.length === k && !first(id, heap[0])) continue;
    if (from !== null ? !first(from, id) : after !== null && sign * compareToKey(values, id, after) < 0) continue;
    if (heap.length < k) {
      heap.push(id);
      siftUp(heap, heap.length - 1, first);
    } else {
      heap[0] = id;
      siftDown(heap, 0, first);
    }
  }
  return heap.sort((a, b) => (first(a, b) ? -1 : 1));
}

/** Heap order: a parent comes after its children in `first`'s order (the last of the kept on top). */
function siftUp(heap: number[], i: number, first: (a: number, b: number) => boolean): void {
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!first(heap[parent], heap[i])) return;
    [heap[i], heap[parent]] = [heap[parent], heap[i]];
    i = parent;
  }
}

function siftDown(heap: number[], i: number, first: (a: number, b: number) => boolean): void {
  for (;;) {
    let top = i;
    const left = 2 * i + 1,
      right = left + 1;
    if (left < heap.length && first(heap[top], heap[left])) top = left;
    if (right < heap.length && first(heap[top], heap[right])) top = right;
    if (top === i) return;
    [heap[i], heap[top]] = [heap[top], heap[i]];
    i = top;
  }
}

/** Whether value entry `id` is the first, in the order, of the values `row` holds at the path (an array's row is placed there only). */
function firstOfRow(walk: Walk, id: number, row: number): boolean {
  const { index, values, path, sign } = walk;
  const entries = index.metadata.rowEntries(row);
  for (let i = 0; i < entries.length; i++) {
    const other = entries[i];
    if (other !== id && values.pathOfValue(other) === path && ordered(values, other) && sign * compareEntries(values, other, id) < 0) return false;
  }
  return true;
}

/** Place the rows of value entry `id` whose first value it is, with a seq past `afterSeq`, in insertion order. */
function placeEntry(walk: Walk, id: number, afterSeq: number): void {
  const { index, values, within, want, placed } = walk;
  const { rows } = index;
  const found: number[] = [];
  values.forEachRow(id, (row) => {
    if ((within === null || within.has(row)) && firstOfRow(walk, id, row)) found.push(row);
  });
  const seqs = new Float64Array(found.length);
  for (let i = 0; i < found.length; i++) seqs[i] = rows.order.seqOf(rows.idAt(found[i]))!;
  const order = Array.from(found.keys()).sort((a, b) => seqs[a] - seqs[b]);
  const kind = values.valueKind(id);
  const number = kind === NUMBER ? values.numberOf(id) : 0;
  const bytes = kind === STRING ? values.stringBytesOf(id).slice() : NO_BYTES;
  for (const i of order) {
    if (placed.length === want) return;
    if (seqs[i] <= afterSeq) continue;
    placed.push({ row: found[i], key: { rank: kindRank(kind), number, bytes, seq: seqs[i] } });
  }
}

/** The rows holding an ordered value at the path. */
function* valuedRows({ index, values, path }: Walk): Generator<void, RowBitmap> {
  const valued = new RowBitmap(index.rows.size);
  let walked = 0;
  for (let id = values.firstValue(path); id >= 0; id = values.nextValue(id)) {
    if (++walked % STEP_ITEMS === 0) yield;
    if (ordered(values, id)) values.orInto(id, valued.words);
  }
  return valued;
}

/** Place the rows without a value (not in `valued`) after `after`, in insertion order, up to `want`: the log walked STEP_ITEMS seqs a step. */
function* placeMissing(
  index: IndexRead,
  after: OrderKey | null,
  within: RowBitmap | null,
  valued: RowBitmap | null,
  want: number,
  placed: Placed[],
): Generator<void, void> {
  const { rows } = index;
  const visit = (id: string, seq: number) => {
    if (rows.order.seqOf(id) !== seq) return true; // replaced or deleted since
    const row = rows.rowOf(id)!;
    if ((within !== null && !within.has(row)) || valued?.has(row)) return true;
    placed.push({ row, key: { rank: -1, number: 0, bytes: NO_BYTES, seq } });
    return placed.length < want;
  };
  for (let from = after !== null && after.rank < 0 ? after.seq : -1; from < rows.nextSeq && placed.length < want; from += STEP_ITEMS) {
    rows.order.walk(from, from + STEP_ITEMS, visit);
    yield;
  }
}
