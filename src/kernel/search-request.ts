// What a search of one kernel instance is asked (SearchRequest) and what it
// answers (SearchHits): the one shape every caller, executor and kernel build
// share (KernelInstance.search).

/** Called before a search grows the memory, with the bytes it would then hold; throws to refuse (nothing has changed then). */
export type MemoryGuard = (bytesAfter: number) => void;

export interface SearchRequest {
  /** `queryCount` queries of `dim` floats each, back to back. */
  queries: Float32Array;
  queryCount: number;
  /** Hits wanted per query (at least 1). */
  k: number;
  /** Rows stored: the search scans rows [0, count), or `rowList` when given. */
  count: number;
  /** A filter's rows, each below `count`; null scans them all. */
  rowList?: Int32Array | null;
  /**
   * int8 storage: the candidates (at least k) each query's first stage keeps
   * by the int8 codes, re-ranked exactly in float32. Absent: one exact scan
   * of the float32 rows (what an int8 instance also offers).
   */
  candidatePool?: number;
  /** Asked before the memory grows for the search's scratch. */
  guard?: MemoryGuard | null;
}

/** Best-first results of a search: query j owns [j*perQuery, (j+1)*perQuery). */
export interface SearchHits {
  rows: Int32Array;
  scores: Float64Array;
  perQuery: number;
}

/** A request whose bounds are checked: the rows it scans and the hits each query gets (0: nothing to search). */
export interface CheckedRequest extends SearchRequest {
  rowList: Int32Array | null;
  guard: MemoryGuard | null;
  scanned: number;
  perQuery: number;
}

export const NO_HITS: SearchHits = { rows: new Int32Array(0), scores: new Float64Array(0), perQuery: 0 };

/** `request` checked against an instance of `dim` floats a row and `capacity` rows (the kernel checks nothing). */
export function checkRequest(request: SearchRequest, dim: number, capacity: number): CheckedRequest {
  const { queries, queryCount, k, count, candidatePool } = request;
  const rowList = request.rowList ?? null;
  if (queries.length !== queryCount * dim) throw new RangeError('queries length is not queryCount * dim');
  if (!(k >= 1)) throw new RangeError('k must be at least 1');
  if (candidatePool !== undefined && !(candidatePool >= k)) throw new RangeError('need 1 <= k <= candidatePool');
  if (!(count >= 0 && count <= capacity)) throw new RangeError(`count ${count} out of range`);
  const scanned = rowList ? rowList.length : count;
  const perQuery = queryCount === 0 ? 0 : Math.min(k, scanned);
  if (perQuery > 0 && rowList) {
    for (let i = 0; i < rowList.length; i++) {
      if (!(rowList[i] >= 0 && rowList[i] < count)) throw new RangeError(`row ${rowList[i]} out of range`);
    }
  }
  return { queries, queryCount, k, count, rowList, candidatePool, guard: request.guard ?? null, scanned, perQuery };
}
