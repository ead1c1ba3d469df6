// Which rows a read sees: those whose expiry (row-expiry.ts) has not passed
// at the index's clock. Every read goes through these, so a record is gone
// from get, list, count, search and export the moment it expires, before a
// sweep removes it. A read that gathers rows (a facet, say) takes
// liveMatching's bitmap.
import { RowBitmap } from './bitmap.js';
import type { FilterNode } from './filter.js';
import type { IndexRead } from './index-read.js';

/** The rows `filter` matches (every row without one) that are live now; null when that is every row. */
export function liveMatching(index: IndexRead, filter: FilterNode | null): RowBitmap | null {
  const size = index.rows.size;
  const bitmap = filter && size > 0 ? index.metadata.evaluate(filter, size) : null;
  const now = index.clock();
  if (!index.expiry.anyExpired(now, size)) return bitmap;
  const live = bitmap ?? RowBitmap.all(size);
  index.expiry.clearExpired(live, now);
  return live;
}

/** The row of `id` if it is stored and live now. */
export function liveRowOf(index: IndexRead, id: string): number | undefined {
  const row = index.rows.rowOf(id);
  return row !== undefined && index.expiry.isLive(row, index.clock()) ? row : undefined;
}

/** Rows live now. */
export function liveCount(index: IndexRead): number {
  const size = index.rows.size;
  return size - index.expiry.expiredCount(index.clock(), size);
}
