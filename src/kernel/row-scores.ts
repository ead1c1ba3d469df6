// Every listed row's score for one query, with no top k: what a stage exact
// over all filtered rows (decay, groupBy) or between stored vectors (MMR)
// needs. The kernel scores four rows a step (scanKeys, SIMD) into scratch;
// the keys are read back in list order.
import { inverseNorm } from './inverse-norm.js';
import { align16 } from './layout.js';
import type { SearchSpace } from './search-steps.js';
import type { MemoryGuard } from './search-request.js';

/** Each row's key (larger is nearer: cosine similarity, or minus the squared l2 distance), in `rowList`'s order (rows 0..count-1 without one). */
export function rowKeys(space: SearchSpace, query: Float32Array, rowList: Int32Array | null, count: number, guard: MemoryGuard | null): Float32Array {
  const { dim } = space.layout;
  if (query.length !== dim) throw new RangeError(`query of ${query.length} values, expected ${dim}`);
  if (!(count >= 0 && count <= space.layout.capacity)) throw new RangeError(`count ${count} out of range`);
  const scanned = rowList ? rowList.length : count;
  const out = new Float32Array(scanned);
  if (scanned === 0) return out;
  if (rowList) {
    for (let i = 0; i < rowList.length; i++) if (!(rowList[i] >= 0 && rowList[i] < count)) throw new RangeError(`row ${rowList[i]} out of range`);
  }
  const at = align16(space.scratchBase);
  const listAt = align16(at + dim * 4);
  const keysAt = align16(listAt + (rowList ? scanned * 4 : 0));
  const end = align16(keysAt + Math.ceil(scanned / 4) * 16);
  space.hold(end, guard);
  try {
    const { floats, ints } = space.views();
    // Cosine keys take the query at unit length (as a search does).
    const scale = space.metric === 'cosine' ? inverseNorm(query) : 1;
    for (let i = 0; i < dim; i++) floats[(at >> 2) + i] = query[i] * scale;
    if (rowList) ints.set(rowList, listAt >> 2);
    const { vectors, invNorms } = space.layout;
    space.kernel.scoreRows(vectors, invNorms, dim, rowList ? listAt : 0, scanned, at, space.metricCode, keysAt);
    readKeys(floats, keysAt >> 2, scanned, out);
    return out;
  } finally {
    space.release();
  }
}

/** The keys as scoreRows stores them (step g's four rows g, g + Q, g + 2Q, g + 3Q together), in list order. */
function readKeys(floats: Float32Array, from: number, count: number, out: Float32Array): void {
  const quarter = count >> 2;
  for (let g = 0; g < quarter; g++) {
    const at = from + 4 * g;
    out[g] = floats[at];
    out[g + quarter] = floats[at + 1];
    out[g + 2 * quarter] = floats[at + 2];
    out[g + 3 * quarter] = floats[at + 3];
  }
  for (let i = 4 * quarter; i < count; i++) out[i] = floats[from + i];
}
