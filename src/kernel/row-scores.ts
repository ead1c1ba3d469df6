// Every listed row's score for one query, with no top k: what a stage exact
// over all filtered rows (decay, groupBy) or between stored vectors (MMR)
// needs. The kernel scores four rows a step (SIMD, as a search's scan) and
// stores their keys in list order in scratch, where `read` reads them (no copy).
import { inverseNorm } from './inverse-norm.js';
import { align16 } from './layout.js';
import type { SearchSpace } from './search-steps.js';
import type { MemoryGuard } from './search-request.js';

/**
 * `read` of each row's key (larger is nearer: cosine similarity, or minus the
 * squared l2 distance), in `rowList`'s order (rows from..count-1 without one): a
 * view of the scratch, valid only while `read` runs.
 */
export function rowKeys<T>(
  space: SearchSpace,
  query: Float32Array,
  rowList: Int32Array | null,
  count: number,
  guard: MemoryGuard | null,
  read: (keys: Float32Array) => T,
  from = 0,
): T {
  const { dim } = space.layout;
  if (query.length !== dim) throw new RangeError(`query of ${query.length} values, expected ${dim}`);
  if (!(count >= 0 && count <= space.layout.capacity)) throw new RangeError(`count ${count} out of range`);
  if (!(Number.isInteger(from) && from >= 0 && from <= count)) throw new RangeError(`from ${from} out of range`);
  const scanned = rowList ? rowList.length : count - from;
  if (scanned === 0) return read(new Float32Array(0));
  if (rowList) {
    for (let i = 0; i < rowList.length; i++) if (!(rowList[i] >= 0 && rowList[i] < count)) throw new RangeError(`row ${rowList[i]} out of range`);
  }
  const at = align16(space.scratchBase);
  const listAt = align16(at + dim * 4);
  const keysAt = align16(listAt + (rowList ? scanned * 4 : 0));
  const end = align16(keysAt + scanned * 4);
  space.hold(end, guard);
  try {
    const { floats, ints } = space.views();
    // Cosine keys take the query at unit length (as a search does).
    const scale = space.metric === 'cosine' ? inverseNorm(query) : 1;
    for (let i = 0; i < dim; i++) floats[(at >> 2) + i] = query[i] * scale;
    if (rowList) ints.set(rowList, listAt >> 2);
    const { vectors, invNorms } = space.layout;
    // Without a row list, rows from..count-1: their regions start at row `from`.
    const first = rowList ? 0 : from;
    space.kernel.scoreRows(vectors + first * dim * 4, invNorms + first * 4, dim, rowList ? listAt : 0, scanned, at, space.metricCode, keysAt);
    return read(floats.subarray(keysAt >> 2, (keysAt >> 2) + scanned));
  } finally {
    space.release();
  }
}

/**
 * `use` of a scorer of `rows` (each below `count`) gathered into one block of
 * scratch first: a row list scanned many times (MMR's candidates, once per
 * pick) is then read as one stream instead of scattered rows. The scorer's
 * keys are in `rows`' order, a view valid until its next call; the block
 * lives only while `use` runs (synchronously).
 */
export function withGatheredRows<T>(
  space: SearchSpace,
  rows: Int32Array,
  count: number,
  guard: MemoryGuard | null,
  use: (score: (query: Float32Array) => Float32Array) => T,
): T {
  const { dim, vectors, invNorms } = space.layout;
  const n = rows.length;
  for (let i = 0; i < n; i++) if (!(rows[i] >= 0 && rows[i] < count)) throw new RangeError(`row ${rows[i]} out of range`);
  const at = align16(space.scratchBase);
  const listAt = align16(at + dim * 4);
  const blockAt = align16(listAt + n * 4);
  const normsAt = align16(blockAt + n * dim * 4);
  const keysAt = align16(normsAt + n * 4);
  space.hold(align16(keysAt + n * 4), guard);
  try {
    const { floats, ints } = space.views();
    ints.set(rows, listAt >> 2);
    space.kernel.gatherRows(vectors, invNorms, dim, listAt, n, blockAt, normsAt);
    const scale = space.metric === 'cosine';
    return use((query) => {
      const s = scale ? inverseNorm(query) : 1;
      for (let i = 0; i < dim; i++) floats[(at >> 2) + i] = query[i] * s;
      space.kernel.scoreRows(blockAt, normsAt, dim, 0, n, at, space.metricCode, keysAt);
      return floats.subarray(keysAt >> 2, (keysAt >> 2) + n);
    });
  } finally {
    space.release();
  }
}
