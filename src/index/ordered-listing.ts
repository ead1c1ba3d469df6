// A page of a listing ordered by the value at a metadata path (orderBy):
// numbers, then strings (value-order.ts; desc reverses it), ties by insertion
// order, then the rows without such a value (path missing, or holding only
// booleans, null, objects or strings too long to be index keys) in insertion
// order. A row holding an array takes its first element in the order (the
// least for asc, the greatest for desc). Read from the filter index: the
// path's values are a heap, and only as many are taken off it as the page
// needs, so a page costs one walk of the path's values and postings, not a
// sort of every row.
import { RowBitmap } from './bitmap.js';
import { parseFilter } from './filter.js';
import type { IndexRead } from './index-read.js';
import { NUMBER, STRING } from './metadata/entry-key.js';
import type { PathValues } from './metadata/metadata-index.js';
import { decodeOrderCursor, encodeOrderCursor, type OrderBy, type OrderKey, orderTag } from './order-cursor.js';
import type { ListOptions } from './types.js';
import { compareBytes, compareEntries, kindRank } from './value-order.js';

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

const NO_BYTES = new Uint8Array(0);

/** One page of `options.orderBy`'s order after `options.cursor`. */
export function orderedPage(index: IndexRead, epoch: string, options: ListOptions & { orderBy: OrderBy }): OrderedRows {
  const { rows } = index;
  const size = rows.size;
  const tag = orderTag(options.orderBy);
  const after = options.cursor === undefined ? null : decodeOrderCursor(options.cursor, epoch, tag, rows.nextSeq - 1);
  const within = options.filter && size > 0 ? index.metadata.evaluate(parseFilter(options.filter), size) : null;
  const values = index.metadata.values;
  const path = values && size > 0 ? values.findPath(options.orderBy.path) : -1;
  const want = options.limit + 1;
  const placed: Placed[] = [];
  let valued: RowBitmap | null = null;
  if (values && path >= 0) {
    const sign = options.orderBy.direction === 'asc' ? 1 : -1;
    valued = placeValued(index, values, path, sign, after, within, want, placed);
  }
  if (placed.length < want) placeMissing(index, after, within, valued, want, placed);
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
  return rank === 0 ? Math.sign(values.numberOf(id) - key.number) : compareBytes(values.stringBytesOf(id), key.bytes);
}

/**
 * Place the rows with a value after `after`, up to `want`, in order; the rows
 * holding a value at all (for placeMissing). Values before the cursor set
 * their rows in `seen`, so an array's row is placed only at its first element.
 */
function placeValued(
  index: IndexRead,
  values: PathValues,
  path: number,
  sign: number,
  after: OrderKey | null,
  within: RowBitmap | null,
  want: number,
  placed: Placed[],
): RowBitmap {
  const size = index.rows.size;
  const valued = new RowBitmap(size),
    seen = new RowBitmap(size);
  const pending: number[] = [];
  const inMissing = after !== null && after.rank < 0;
  for (let id = values.firstValue(path); id >= 0; id = values.nextValue(id)) {
    if (!ordered(values, id)) continue;
    values.orInto(id, valued.words);
    if (inMissing) continue;
    if (after !== null && sign * compareToKey(values, id, after) < 0) values.orInto(id, seen.words);
    else pending.push(id);
  }
  const heap = new EntryHeap(values, pending, sign);
  while (placed.length < want && heap.size > 0) {
    const id = heap.pop();
    const atCursor = after !== null && compareToKey(values, id, after) === 0;
    placeEntry(index, values, id, atCursor ? after.seq : -1, within, seen, want, placed);
  }
  return valued;
}

/** Place the rows of value entry `id` not seen yet, with a seq past `afterSeq`, in insertion order. */
function placeEntry(
  index: IndexRead,
  values: PathValues,
  id: number,
  afterSeq: number,
  within: RowBitmap | null,
  seen: RowBitmap,
  want: number,
  placed: Placed[],
): void {
  const { rows } = index;
  const found: number[] = [];
  values.forEachRow(id, (row) => {
    if (seen.has(row) || (within !== null && !within.has(row))) return;
    seen.add(row);
    found.push(row);
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

/** Place the rows without a value (not in `valued`) after `after`, in insertion order, up to `want`. */
function placeMissing(index: IndexRead, after: OrderKey | null, within: RowBitmap | null, valued: RowBitmap | null, want: number, placed: Placed[]): void {
  const { rows } = index;
  const from = after !== null && after.rank < 0 ? after.seq : -1;
  rows.order.walk(from, Infinity, (id, seq) => {
    if (rows.order.seqOf(id) !== seq) return true; // replaced or deleted since
    const row = rows.rowOf(id)!;
    if ((within !== null && !within.has(row)) || valued?.has(row)) return true;
    placed.push({ row, key: { rank: -1, number: 0, bytes: NO_BYTES, seq } });
    return placed.length < want;
  });
}

/** A binary heap of value entries, first in the order (`sign` 1 asc, -1 desc) on top; made in O(n). */
class EntryHeap {
  constructor(
    private readonly values: PathValues,
    private readonly ids: number[],
    private readonly sign: number,
  ) {
    for (let i = (ids.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  get size(): number {
    return this.ids.length;
  }

  pop(): number {
    const ids = this.ids;
    const top = ids[0];
    const last = ids.pop()!;
    if (ids.length > 0) {
      ids[0] = last;
      this.down(0);
    }
    return top;
  }

  private first(i: number, j: number): boolean {
    return this.sign * compareEntries(this.values, this.ids[i], this.ids[j]) < 0;
  }

  private down(i: number): void {
    const ids = this.ids;
    for (;;) {
      let top = i;
      const left = 2 * i + 1,
        right = left + 1;
      if (left < ids.length && this.first(left, top)) top = left;
      if (right < ids.length && this.first(right, top)) top = right;
      if (top === i) return;
      [ids[i], ids[top]] = [ids[top], ids[i]];
      i = top;
    }
  }
}
