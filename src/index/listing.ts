// Counting and listing: the vectors a filter matches, and pages of them in
// insertion order behind a cursor.
import { parseFilter, type Filter } from './filter.js';
import type { IndexRead } from './index-read.js';
import { liveMatching } from './live-rows.js';
import { decodeCursor, encodeCursor } from './list-cursor.js';
import { orderedPageSteps, type RunCache } from './ordered-listing.js';
import { runSteps } from '../limits/steps.js';
import type { ListedVector, ListOptions, ListPage } from './types.js';

/** How many vectors match `filter` (all of them without one). */
export function countMatching(index: IndexRead, filter?: Filter): number {
  const live = liveMatching(index, filter ? parseFilter(filter) : null);
  return live ? live.count() : index.rows.size;
}

/** Ids of the vectors matching `filter`, in row order (what a delete by filter removes). */
export function idsMatching(index: IndexRead, filter: Filter): string[] {
  const node = parseFilter(filter);
  if (index.rows.size === 0) return [];
  const rows = liveMatching(index, node)!.rows();
  const ids = new Array<string>(rows.length);
  for (let i = 0; i < rows.length; i++) ids[i] = index.rows.idAt(rows[i]);
  return ids;
}

/**
 * One page of the vectors in insertion order (a replaced vector moves to
 * the end), or with orderBy in the order of a metadata value
 * (ordered-listing.ts). The cursor is a position in that order, tagged with
 * `epoch`, so a vector stored and unchanged during a whole listing is listed
 * exactly once.
 */
export function listPage(index: IndexRead, epoch: string, options: ListOptions, runs?: RunCache): ListPage {
  return runSteps(listPageSteps(index, epoch, options, runs));
}

/** listPage as steps (an orderBy page pauses between walks of its values, Slices.run); writes kept away meanwhile. */
export function* listPageSteps(index: IndexRead, epoch: string, options: ListOptions, runs?: RunCache): Generator<void, ListPage> {
  const { orderBy } = options;
  if (!orderBy) return insertionPage(index, epoch, options);
  const page = yield* orderedPageSteps(index, epoch, { ...options, orderBy }, runs);
  return { vectors: page.ids.map((id, i) => listed(index, id, page.rows[i], options)), nextCursor: page.nextCursor };
}

/** A page in insertion order: the log walked from the cursor's seq. */
function insertionPage(index: IndexRead, epoch: string, options: ListOptions): ListPage {
  const { rows } = index;
  const node = options.filter ? parseFilter(options.filter) : null;
  const after = options.cursor === undefined ? -1 : decodeCursor(options.cursor, epoch, rows.nextSeq - 1);
  const matching = liveMatching(index, node);
  const vectors: ListedVector[] = [];
  let last = after;
  let more = false;
  rows.order.walk(after, Infinity, (id, seq) => {
    if (rows.order.seqOf(id) !== seq) return true; // replaced or deleted since
    const row = rows.rowOf(id)!;
    if (matching && !matching.has(row)) return true;
    if (vectors.length === options.limit) {
      more = true;
      return false;
    }
    vectors.push(listed(index, id, row, options));
    last = seq;
    return true;
  });
  return { vectors, nextCursor: more ? encodeCursor(epoch, last) : null };
}

/** The vector of `row` as a listing answers it (its vector, metadata and text when asked; its ttl when it has one). */
function listed(index: IndexRead, id: string, row: number, options: ListOptions): ListedVector {
  const vector: ListedVector = { id };
  if (options.includeVectors) vector.vector = index.kernel!.readRow(row);
  if (options.includeMetadata) vector.metadata = index.metadata.json(row);
  if (options.includeText) vector.text = index.texts.json(row);
  const ttl = index.expiry.ttlOf(row);
  if (ttl) Object.assign(vector, ttl);
  return vector;
}
