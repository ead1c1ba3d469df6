// One session's kernel: a WebAssembly.Memory, the instance over it, and the
// memory layout. Callers speak in rows and Float32Arrays; only this class
// knows addresses, and it checks every bound before calling into WASM (the
// kernel itself checks nothing).
//
// memory.grow() replaces `memory.buffer` (detaching a non-shared one), so
// views are made per call from it, except search()'s two views of the whole
// memory, made anew when the buffer they view is no longer the memory's.
// A shared build's memory is shared (searchOnPool's threads read it).
//
// A search's scratch grows the memory too (and memory never shrinks), so a
// search takes a MemoryGuard: asked with the bytes the memory would hold,
// only when it must grow, before it grows; it throws to refuse.

import type { Metric, VectorType } from '../config.js';
import { instantiateKernel, memoryFor, type KernelExports } from './kernel-module.js';
import type { KernelPool } from './kernel-pool.js';
import { align16, codeStrideFor, int8ScratchFor, layoutFor, movableRegions, PAGE_BYTES, pagesFor, scratchFor, type Layout, type ScratchLayout } from './layout.js';
import { inverseNorm } from './inverse-norm.js';
import { quantizeInto, sumOfSquares } from './quantize.js';
import { int8RowParts, kernelCallOf, POOL_MAX_SLICES, POOL_MIN_WORK, POOL_SLICE_WORK, runKernelSearch, singleQueryPath, singleQueryPathsOf, type SingleQueryPathName, type SingleQueryPaths } from './search-path.js';

export { inverseNorm } from './inverse-norm.js';

const FIRST_CAPACITY = 64;
const GROWTH = 1.5;
/** Best-first results of a search: query j owns [j*perQuery, (j+1)*perQuery). */
export interface SearchHits {
  rows: Int32Array;
  scores: Float64Array;
  perQuery: number;
}

/** One call of a search on a kernel pool: queries [q0, q1) over scanned rows [r0, r1), and where its scratch lies. */
interface PoolSlice {
  q0: number;
  q1: number;
  r0: number;
  r1: number;
  path: SingleQueryPathName;
  scratch: ScratchLayout;
  workArea: number;
  end: number;
}

/** Called before a search grows the memory, with the bytes it would then hold; throws to refuse (nothing has changed then). */
export type MemoryGuard = (bytesAfter: number) => void;

/** Kernel key (larger is nearer) to the score users see; cosine keys already use a unit query. */
const cosineScore = (key: number) => Math.max(-1, Math.min(1, key));
const l2Score = (key: number) => Math.sqrt(Math.max(0, -key));

/** Capacity after growing from `capacity` to hold `rows`: geometric, so adds stay amortised O(1). */
function grownCapacity(capacity: number, rows: number, maxCapacity: number): number {
  return Math.min(Math.max(rows, Math.ceil(capacity * GROWTH), FIRST_CAPACITY), maxCapacity);
}

export class KernelInstance {
  private readonly memory: WebAssembly.Memory;
  private static nextId = 0;
  /** Names this instance's memory to the pool's threads. */
  readonly id = KernelInstance.nextId++;
  private readonly kernel: KernelExports;
  private readonly metricCode: number;
  private layout: Layout;
  /** Views of the whole memory for search(), remade when a grow has detached them (wholeMemory()). */
  private floats = new Float32Array(0);
  private ints = new Int32Array(0);

  constructor(
    module: WebAssembly.Module,
    readonly dim: number,
    readonly metric: Metric,
    /** Rows this instance may ever hold (the session's maxVectors). */
    readonly maxCapacity: number,
    /** int8 keeps int8 codes beside the float32 rows for a fast first stage. */
    readonly vectorType: VectorType = 'float32',
  ) {
    this.memory = memoryFor(module);
    this.kernel = instantiateKernel(module, this.memory);
    this.metricCode = metric === 'cosine' ? this.kernel.METRIC_COSINE.value : this.kernel.METRIC_L2.value;
    this.codeStride = codeStrideFor(dim, vectorType === 'int8');
    this.layout = layoutFor(this.kernel.heapBase(), dim, 0, this.codeStride);
    this.keysFirstMinPool = this.kernel.KEYS_FIRST_MIN_POOL.value;
    this.singleQueryPaths = singleQueryPathsOf(this.kernel);
  }

  private readonly codeStride: number;
  /** Pools from which the int8 first stage gets room for every scanned row's key (selected after the scan). */
  private readonly keysFirstMinPool: number;
  /** What the kernel offers one query beyond the one-pass scan. */
  private readonly singleQueryPaths: SingleQueryPaths;

  get capacity(): number {
    return this.layout.capacity;
  }

  /** Bytes of linear memory this instance holds (committed to the memory object). */
  get memoryBytes(): number {
    return this.memory.buffer.byteLength;
  }

  /** Bytes the stored rows and their bookkeeping occupy at the current capacity. */
  get usedBytes(): number {
    return this.layout.scratch;
  }

  /** Bytes of linear memory once ensureCapacity(rows) has run (memory never shrinks). */
  memoryBytesFor(rows: number): number {
    if (rows <= this.layout.capacity) return this.memoryBytes;
    const next = layoutFor(this.kernel.heapBase(), this.dim, grownCapacity(this.layout.capacity, rows, this.maxCapacity), this.codeStride);
    return Math.max(this.memoryBytes, pagesFor(next.scratch) * PAGE_BYTES);
  }

  /** What memoryBytesFor(rows) would be for a new instance; the static data is counted as a whole page. */
  static memoryBytesForNew(dim: number, rows: number, maxCapacity: number, vectorType: VectorType = 'float32'): number {
    const next = layoutFor(PAGE_BYTES, dim, grownCapacity(0, rows, maxCapacity), codeStrideFor(dim, vectorType === 'int8'));
    return pagesFor(next.scratch) * PAGE_BYTES;
  }

  /** Make room for `rows` rows. Nothing already stored changes. */
  ensureCapacity(rows: number): void {
    if (rows <= this.layout.capacity) return;
    if (rows > this.maxCapacity) throw new RangeError(`capacity ${rows} exceeds ${this.maxCapacity}`);
    const next = layoutFor(this.kernel.heapBase(), this.dim, grownCapacity(this.layout.capacity, rows, this.maxCapacity), this.codeStride);
    this.ensureBytes(next.scratch);
    const bytes = new Uint8Array(this.memory.buffer);
    // The per-row regions move up, the highest first so that a lower one's
    // copy cannot overwrite one not yet moved.
    for (const region of movableRegions(this.layout)) {
      if (region.bytes > 0) bytes.copyWithin(next[region.name], region.start, region.start + region.bytes);
    }
    this.layout = next;
  }

  /** Store `values[i]` (length dim) as row `rows[i]` with insertion sequence `firstSeq + i`; views are made once. */
  writeRows(rows: ArrayLike<number>, values: Float32Array[], firstSeq: number): void {
    if (rows.length !== values.length) throw new RangeError('rows and values differ in length');
    for (let i = 0; i < rows.length; i++) {
      this.checkRow(rows[i]);
      if (values[i].length !== this.dim) throw new RangeError(`row of ${values[i].length} values, expected ${this.dim}`);
    }
    const { vectors, invNorms, seqs, capacity } = this.layout;
    const buffer = this.memory.buffer;
    const stored = new Float32Array(buffer, vectors, capacity * this.dim);
    const seq = new Uint32Array(buffer, seqs, capacity);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      stored.set(values[i], row * this.dim);
      seq[row] = firstSeq + i;
    }
    // Norms in the kernel (SIMD), one call per run of consecutive rows: a
    // batch of new rows, or one replacing rows in order, is a single run.
    for (let i = 0; i < rows.length;) {
      let run = 1;
      while (i + run < rows.length && rows[i + run] === rows[i] + run) run++;
      this.kernel.storeInverseNorms(vectors, this.dim, rows[i], run, invNorms);
      i += run;
    }
    if (this.codeStride > 0) {
      const { codes, scales, sqNorms } = this.layout;
      const scale = new Float32Array(buffer, scales, capacity);
      const squares = new Float32Array(buffer, sqNorms, capacity);
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i];
        scale[row] = quantizeInto(values[i], new Int8Array(buffer, codes + row * this.codeStride, this.codeStride));
        squares[row] = sumOfSquares(values[i]);
      }
    }
  }

  /** A copy of row `row`. */
  readRow(row: number): Float32Array {
    this.checkRow(row);
    return new Float32Array(this.memory.buffer, this.layout.vectors + row * this.dim * 4, this.dim).slice();
  }

  /** Copy row `from` over row `to` (a delete fills its hole with the last row). */
  moveRow(from: number, to: number): void {
    this.checkRow(from);
    this.checkRow(to);
    const { vectors, invNorms, seqs, capacity } = this.layout;
    const buffer = this.memory.buffer;
    const rowBytes = this.dim * 4;
    new Uint8Array(buffer).copyWithin(vectors + to * rowBytes, vectors + from * rowBytes, vectors + (from + 1) * rowBytes);
    const norms = new Float32Array(buffer, invNorms, capacity);
    norms[to] = norms[from];
    const seq = new Uint32Array(buffer, seqs, capacity);
    seq[to] = seq[from];
    if (this.codeStride > 0) {
      const { codes, scales, sqNorms } = this.layout;
      const stride = this.codeStride;
      new Uint8Array(buffer).copyWithin(codes + to * stride, codes + from * stride, codes + (from + 1) * stride);
      for (const region of [scales, sqNorms]) {
        const values = new Float32Array(buffer, region, capacity);
        values[to] = values[from];
      }
    }
  }

  /**
   * int8 storage: for each query, the `pool` best candidates by the int8
   * codes, then the `k` best of those re-ranked exactly in float32 (exact
   * scores; a true neighbour outside the pool is missed). Same result shape
   * as search().
   */
  searchInt8(queries: Float32Array, queryCount: number, k: number, pool: number, count: number, rowList: Int32Array | null = null, guard: MemoryGuard | null = null): SearchHits {
    const { scanned, perQuery, rows, scores } = this.int8Hits(queries, queryCount, k, pool, count, rowList);
    if (perQuery === 0) return { rows, scores, perQuery: 0 };
    const keysFirst = pool >= this.keysFirstMinPool;
    const scratch = int8ScratchFor(this.freeScratch(), rowList ? rowList.length : 0, pool, keysFirst ? scanned : 0);
    // The scratch of the whole call (first stage, then re-ranking at most
    // `pool` rows) in one step: a refused call has grown nothing.
    const reranked = Math.min(pool, scanned);
    this.ensureBytes(Math.max(scratch.end, this.searchScratch(1, reranked, k, reranked, guard).scratch.end), guard);
    for (let q = 0; q < queryCount; q++) {
      const query = queries.subarray(q * this.dim, (q + 1) * this.dim);
      const pooled = this.firstStageIn(scratch, keysFirst, query, pool, scanned, rowList);
      const exact = this.search(query, 1, k, count, pooled, guard);
      rows.set(exact.rows, q * perQuery);
      scores.set(exact.scores, q * perQuery);
    }
    return { rows, scores, perQuery };
  }

  /**
   * searchInt8() on the threads of `pool`, with the same results. Fewer
   * queries than threads (or a query of more than `sliceWork`): each query's
   * first stage cut into ranges of rows (searchInt8ByRows); otherwise blocks
   * of queries, each query's first stage and exact re-ranking done as
   * searchInt8() does them. The caller keeps writes away until it settles.
   */
  async searchInt8OnPool(pool: KernelPool, queries: Float32Array, queryCount: number, k: number, poolSize: number, count: number, rowList: Int32Array | null = null, guard: MemoryGuard | null = null, sliceWork = POOL_SLICE_WORK): Promise<SearchHits> {
    const { scanned, perQuery, rows, scores } = this.int8Hits(queries, queryCount, k, poolSize, count, rowList);
    if (perQuery === 0) return { rows, scores, perQuery: 0 };
    const rowParts = int8RowParts(pool.size, queryCount, scanned, this.dim, sliceWork);
    if (rowParts > 1) return this.searchInt8ByRows(pool, queries, queryCount, k, poolSize, count, rowList, guard, rowParts, { rows, scores, perQuery });
    const keysFirst = poolSize >= this.keysFirstMinPool;
    // The row list once; per query its first stage's scratch, then re-ranking's; per call a work area.
    const rowListAt = this.freeScratch().scratch;
    let base = align16(rowListAt + (rowList ? rowList.length * 4 : 0));
    const perCall = Math.ceil(queryCount / Math.min(queryCount, POOL_MAX_SLICES));
    const places = [];
    for (let q = 0; q < queryCount; q++) {
      const first = int8ScratchFor({ ...this.layout, scratch: base }, 0, poolSize, keysFirst ? scanned : 0);
      const exact = scratchFor({ ...this.layout, scratch: align16(first.end) }, 1, 0, k);
      places.push({ first, exact });
      base = align16(exact.end);
    }
    const workAreas = [];
    for (let q = 0; q < queryCount; q += perCall) {
      workAreas.push(base);
      base = align16(base + this.kernel.WORK_AREA_BYTES.value);
    }
    const release = this.holdScratch(base, guard);
    const buffer = this.memory.buffer;
    const { floats, ints } = this.wholeMemory();
    if (rowList) ints.set(rowList, rowListAt >> 2);
    const { codes, scales, invNorms, sqNorms, seqs, vectors } = this.layout;
    const steps = places.map(({ first, exact }, q) => {
      const query = queries.subarray(q * this.dim, (q + 1) * this.dim);
      const codes8 = new Int8Array(this.codeStride);
      const queryScale = quantizeInto(query, codes8);
      new Int16Array(buffer, first.query16, this.codeStride).set(codes8);
      const scale = this.metric === 'cosine' ? inverseNorm(query) : 1;
      for (let i = 0; i < this.dim; i++) floats[(exact.queries >> 2) + i] = query[i] * scale;
      const firstArgs: Parameters<KernelExports['searchInt8']> = [codes, this.codeStride, scales, this.metric === 'cosine' ? invNorms : sqNorms, seqs,
        rowList ? rowListAt : 0, scanned, first.query16, queryScale, this.metricCode, poolSize, first.outRows, first.outKeys, keysFirst ? first.keys : 0];
      const rerankArgs: Parameters<KernelExports['search']> = [vectors, invNorms, seqs, this.dim, first.outRows, 0,
        exact.queries, 1, this.metricCode, k, exact.outRows, exact.outKeys, exact.block, 0];
      return [firstArgs, rerankArgs] as [typeof firstArgs, typeof rerankArgs];
    });
    const runs = workAreas.map((workArea, c) => pool.run(this.id, this.memory, workArea, { fn: 'int8', steps: steps.slice(c * perCall, (c + 1) * perCall) }));
    const settled = await Promise.allSettled(runs);
    const failed = settled.find((run) => run.status === 'rejected');
    if (failed) {
      release();
      throw (failed as PromiseRejectedResult).reason;
    }
    const cosine = this.metric === 'cosine';
    const { floats: f, ints: n } = this.wholeMemory();
    places.forEach(({ exact }, q) => {
      for (let i = 0; i < perQuery; i++) {
        rows[q * perQuery + i] = n[(exact.outRows >> 2) + i];
        const key = f[(exact.outKeys >> 2) + i];
        scores[q * perQuery + i] = cosine ? cosineScore(key) : l2Score(key);
      }
    });
    release();
    return { rows, scores, perQuery };
  }

  /**
   * The int8 search of a few queries: each query's first stage cut into
   * `rowParts` ranges of the scanned rows, one pool call each, every range
   * keeping its `poolSize` best by the int8 keys. A row's key is the same
   * wherever it is scanned and the kernel breaks ties by insertion sequence,
   * so the `poolSize` best of the ranges' candidates (by key, then sequence)
   * are the one-thread first stage's pool; re-ranked by search() as
   * searchInt8() does, they give its rows and scores.
   */
  private async searchInt8ByRows(pool: KernelPool, queries: Float32Array, queryCount: number, k: number, poolSize: number, count: number, rowList: Int32Array | null, guard: MemoryGuard | null, rowParts: number, out: SearchHits): Promise<SearchHits> {
    const scanned = rowList ? rowList.length : count;
    const keysFirst = poolSize >= this.keysFirstMinPool;
    const rowStep = Math.ceil(scanned / rowParts);
    const workAreaBytes = this.kernel.WORK_AREA_BYTES.value;
    const ranges: { q: number; r0: number; r1: number; first: ReturnType<typeof int8ScratchFor>; workArea: number }[] = [];
    let base = this.freeScratch().scratch;
    for (let q = 0; q < queryCount; q++) {
      for (let r0 = 0; r0 < scanned; r0 += rowStep) {
        const r1 = Math.min(scanned, r0 + rowStep);
        const first = int8ScratchFor({ ...this.layout, scratch: base }, rowList ? r1 - r0 : 0, poolSize, keysFirst ? r1 - r0 : 0);
        const workArea = align16(first.end);
        ranges.push({ q, r0, r1, first, workArea });
        base = align16(workArea + workAreaBytes);
      }
    }
    // The memory grows here, before the first await, enough for re-ranking's scratch too (at most
    // poolSize rows, any path), as every pool search grows it: the caller counts it in the budget then.
    const release = this.holdScratch(scratchFor({ ...this.layout, scratch: base }, 1, poolSize, k, poolSize, true).end, guard);
    let candidates: Int32Array[];
    try {
      const buffer = this.memory.buffer;
      const { codes, scales, invNorms, sqNorms, seqs } = this.layout;
      const aux = this.metric === 'cosine' ? invNorms : sqNorms;
      const quantized = Array.from({ length: queryCount }, (_, q) => {
        const codes8 = new Int8Array(this.codeStride);
        return { codes8, scale: quantizeInto(queries.subarray(q * this.dim, (q + 1) * this.dim), codes8) };
      });
      const runs = ranges.map(({ q, r0, r1, first, workArea }) => {
        new Int16Array(buffer, first.query16, this.codeStride).set(quantized[q].codes8);
        if (rowList) new Int32Array(buffer, first.rowList, r1 - r0).set(rowList.subarray(r0, r1));
        // Without a row list a range is its own rows from r0: its per-row regions start there.
        const at = rowList ? 0 : r0;
        const args: Parameters<KernelExports['searchInt8']> = [codes + at * this.codeStride, this.codeStride, scales + at * 4, aux + at * 4, seqs + at * 4,
          rowList ? first.rowList : 0, r1 - r0, first.query16, quantized[q].scale, this.metricCode, poolSize, first.outRows, first.outKeys, keysFirst ? first.keys : 0];
        return pool.run(this.id, this.memory, workArea, { fn: 'searchInt8', args });
      });
      // Every call settled before its scratch is given back: a failed search must not leave one still writing.
      const settled = await Promise.allSettled(runs);
      const failed = settled.find((run) => run.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      const found = settled.map((run) => (run as PromiseFulfilledResult<number>).value);
      candidates = this.mergeInt8Ranges(ranges, found, queryCount, poolSize, rowList !== null);
    } finally {
      release();
    }
    // Re-ranking scores at most poolSize rows: here when that is little work, else on the pool.
    for (let q = 0; q < queryCount; q++) {
      const query = queries.subarray(q * this.dim, (q + 1) * this.dim);
      const exact = candidates[q].length * this.dim < POOL_MIN_WORK
        ? this.search(query, 1, k, count, candidates[q], guard)
        : await this.searchOnPool(pool, query, 1, k, count, candidates[q], guard);
      out.rows.set(exact.rows, q * out.perQuery);
      out.scores.set(exact.scores, q * out.perQuery);
    }
    return out;
  }

  /** Each query's `poolSize` best candidates across its ranges (by int8 key, then insertion sequence): its first stage's pool. */
  private mergeInt8Ranges(ranges: { q: number; r0: number; first: { outRows: number; outKeys: number } }[], found: number[], queryCount: number, poolSize: number, withRowList: boolean): Int32Array[] {
    const { floats, ints } = this.wholeMemory();
    const seqs = new Uint32Array(this.memory.buffer, this.layout.seqs, this.layout.capacity);
    const rowsOf: number[][] = Array.from({ length: queryCount }, () => []);
    const keysOf: number[][] = Array.from({ length: queryCount }, () => []);
    ranges.forEach(({ q, r0, first }, i) => {
      const offset = withRowList ? 0 : r0;
      for (let j = 0; j < found[i]; j++) {
        rowsOf[q].push(ints[(first.outRows >> 2) + j] + offset);
        keysOf[q].push(floats[(first.outKeys >> 2) + j]);
      }
    });
    return rowsOf.map((rows, q) => {
      const keys = keysOf[q];
      const order = Array.from(rows.keys());
      order.sort((a, b) => keys[b] - keys[a] || seqs[rows[a]] - seqs[rows[b]]);
      return Int32Array.from(order.slice(0, poolSize), (i) => rows[i]);
    });
  }

  /** A float32 search's arguments checked: the rows it scans, and its hits per query (0: nothing to search). */
  private checkSearch(queries: Float32Array, queryCount: number, k: number, count: number, rowList: Int32Array | null) {
    if (queries.length !== queryCount * this.dim) throw new RangeError('queries length is not queryCount * dim');
    if (!(k >= 1)) throw new RangeError('k must be at least 1');
    if (count < 0 || count > this.layout.capacity) throw new RangeError(`count ${count} out of range`);
    const scanned = rowList ? rowList.length : count;
    const perQuery = queryCount === 0 ? 0 : Math.min(k, scanned);
    if (perQuery > 0) this.checkRowList(rowList, count);
    return { scanned, perQuery };
  }

  /** An int8 search's arguments checked, and its results' arrays. */
  private int8Hits(queries: Float32Array, queryCount: number, k: number, pool: number, count: number, rowList: Int32Array | null) {
    if (this.codeStride === 0) throw new Error('this instance stores no int8 codes');
    if (queries.length !== queryCount * this.dim) throw new RangeError('queries length is not queryCount * dim');
    if (!(k >= 1 && pool >= k)) throw new RangeError('need 1 <= k <= pool');
    if (count < 0 || count > this.layout.capacity) throw new RangeError(`count ${count} out of range`);
    this.checkRowList(rowList, count);
    const scanned = rowList ? rowList.length : count;
    const perQuery = Math.min(k, scanned);
    return { scanned, perQuery, rows: new Int32Array(queryCount * perQuery), scores: new Float64Array(queryCount * perQuery) };
  }

  /** Rows of the `pool` best int8 keys, in no particular order, in scratch the caller has made room for. */
  private firstStageIn(scratch: ReturnType<typeof int8ScratchFor>, keysFirst: boolean, query: Float32Array, pool: number, scanned: number, rowList: Int32Array | null): Int32Array {
    const buffer = this.memory.buffer;
    const codes8 = new Int8Array(this.codeStride);
    const queryScale = quantizeInto(query, codes8);
    new Int16Array(buffer, scratch.query16, this.codeStride).set(codes8);
    if (rowList) new Int32Array(buffer, scratch.rowList, rowList.length).set(rowList);
    const { codes, scales, invNorms, sqNorms, seqs } = this.layout;
    const found = this.kernel.searchInt8(
      codes, this.codeStride, scales, this.metric === 'cosine' ? invNorms : sqNorms, seqs,
      rowList ? scratch.rowList : 0, scanned,
      scratch.query16, queryScale, this.metricCode, pool,
      scratch.outRows, scratch.outKeys, keysFirst ? scratch.keys : 0,
    );
    return new Int32Array(buffer, scratch.outRows, found).slice();
  }

  /**
   * The k nearest of rows [0, count) (or of `rowList`, when given) for each of
   * `queryCount` queries stored back to back in `queries`.
   * Scores: cosine similarity, or Euclidean distance for l2.
   */
  search(queries: Float32Array, queryCount: number, k: number, count: number, rowList: Int32Array | null = null, guard: MemoryGuard | null = null): SearchHits {
    const { scanned, perQuery } = this.checkSearch(queries, queryCount, k, count, rowList);
    if (perQuery === 0) return { rows: new Int32Array(0), scores: new Float64Array(0), perQuery: 0 };
    const { scratch, path } = this.searchScratch(queryCount, rowList ? rowList.length : 0, k, scanned, guard);
    this.ensureBytes(scratch.end, guard);
    const { floats, ints } = this.wholeMemory();
    const queryAt = scratch.queries >> 2;
    // Cosine queries go in at unit length, so dot(query, row) stays in float32's
    // normal range whatever the scale of the components (a query of 1e-25-scale
    // components would otherwise underflow every dot product to 0).
    if (this.metric === 'cosine') {
      for (let q = 0; q < queryCount; q++) {
        const start = q * this.dim;
        const scale = inverseNorm(queryCount === 1 ? queries : queries.subarray(start, start + this.dim));
        for (let i = start; i < start + this.dim; i++) floats[queryAt + i] = queries[i] * scale;
      }
    } else {
      floats.set(queries, queryAt);
    }
    if (rowList) ints.set(rowList, scratch.rowList >> 2);

    // One l2 query may go by bounds from the dot loop, then an exact pass (the same hits).
    runKernelSearch({
      kernel: this.kernel, layout: this.layout, scratch, path, withRowList: rowList !== null,
      count: scanned, queries, queryCount, metricCode: this.metricCode, k,
    });

    const rowsAt = scratch.outRows >> 2, keysAt = scratch.outKeys >> 2;
    const rows = new Int32Array(queryCount * perQuery);
    const scores = new Float64Array(queryCount * perQuery);
    const cosine = this.metric === 'cosine';
    for (let q = 0; q < queryCount; q++) {
      for (let i = 0; i < perQuery; i++) {
        rows[q * perQuery + i] = ints[rowsAt + q * k + i];
        const key = floats[keysAt + q * k + i];
        scores[q * perQuery + i] = cosine ? cosineScore(key) : l2Score(key);
      }
    }
    return { rows, scores, perQuery };
  }

  /**
   * search() on the threads of `pool` (a shared build's instance only), cut
   * into calls of bounded work (poolSlices): blocks of queries times ranges
   * of rows, merged exactly: a row's key is the same arithmetic wherever it
   * is scanned, and ties go by insertion sequence, so rows, scores and order
   * equal search()'s. The caller keeps writes and other searches of this
   * instance away until it settles.
   */
  async searchOnPool(pool: KernelPool, queries: Float32Array, queryCount: number, k: number, count: number, rowList: Int32Array | null = null, guard: MemoryGuard | null = null, sliceWork = POOL_SLICE_WORK): Promise<SearchHits> {
    const { scanned, perQuery } = this.checkSearch(queries, queryCount, k, count, rowList);
    if (perQuery === 0) return { rows: new Int32Array(0), scores: new Float64Array(0), perQuery: 0 };
    const slices = this.poolSlices(pool.size, queryCount, scanned, k, sliceWork);
    const release = this.holdScratch(slices[slices.length - 1].end, guard);
    const { floats, ints } = this.wholeMemory();
    const rowBytes = this.dim * 4;
    const runs = slices.map((slice) => {
      const { scratch, q0, q1, r0, r1, path } = slice;
      for (let q = q0; q < q1; q++) {
        const query = queries.subarray(q * this.dim, (q + 1) * this.dim);
        const scale = this.metric === 'cosine' ? inverseNorm(query) : 1;
        const at = (scratch.queries >> 2) + (q - q0) * this.dim;
        for (let i = 0; i < this.dim; i++) floats[at + i] = this.metric === 'cosine' ? query[i] * scale : query[i];
      }
      if (rowList) ints.set(rowList.subarray(r0, r1), scratch.rowList >> 2);
      // Without a row list a range is its own rows from r0: its per-row regions start there.
      const layout = rowList ? this.layout : { ...this.layout, vectors: this.layout.vectors + r0 * rowBytes, invNorms: this.layout.invNorms + r0 * 4, seqs: this.layout.seqs + r0 * 4 };
      const call = kernelCallOf({
        layout, scratch, path, withRowList: rowList !== null, count: r1 - r0,
        queries: queries.subarray(q0 * this.dim, q1 * this.dim), queryCount: q1 - q0, metricCode: this.metricCode, k,
      });
      return pool.run(this.id, this.memory, slice.workArea, call);
    });
    // Every call settled before its scratch is given back: a failed search must not leave one still writing.
    const failed = (await Promise.allSettled(runs)).find((run) => run.status === 'rejected');
    try {
      if (failed) throw (failed as PromiseRejectedResult).reason;
      return this.mergeSlices(slices, queryCount, k, perQuery, rowList !== null);
    } finally {
      release();
    }
  }

  /** Each query's best perQuery across its slices' best-first lists: a merge by key, then insertion sequence. */
  private mergeSlices(slices: PoolSlice[], queryCount: number, k: number, perQuery: number, withRowList: boolean): SearchHits {
    const { floats, ints } = this.wholeMemory();
    const seqs = new Uint32Array(this.memory.buffer, this.layout.seqs, this.layout.capacity);
    const rows = new Int32Array(queryCount * perQuery);
    const scores = new Float64Array(queryCount * perQuery);
    const cosine = this.metric === 'cosine';
    const lists: { rowsAt: number; keysAt: number; kept: number; offset: number; next: number }[] = [];
    for (let q = 0; q < queryCount; q++) {
      lists.length = 0;
      for (const { scratch, q0, q1, r0, r1 } of slices) {
        if (q < q0 || q >= q1) continue;
        const from = (q - q0) * k;
        lists.push({ rowsAt: (scratch.outRows >> 2) + from, keysAt: (scratch.outKeys >> 2) + from, kept: Math.min(k, r1 - r0), offset: withRowList ? 0 : r0, next: 0 });
      }
      for (let i = 0; i < perQuery; i++) {
        let best = -1, bestKey = 0, bestRow = 0;
        for (let l = 0; l < lists.length; l++) {
          const list = lists[l];
          if (list.next >= list.kept) continue;
          const key = floats[list.keysAt + list.next], row = ints[list.rowsAt + list.next] + list.offset;
          if (best < 0 || key > bestKey || (key === bestKey && seqs[row] < seqs[bestRow])) {
            best = l; bestKey = key; bestRow = row;
          }
        }
        lists[best].next++;
        rows[q * perQuery + i] = bestRow;
        scores[q * perQuery + i] = cosine ? cosineScore(bestKey) : l2Score(bestKey);
      }
    }
    return { rows, scores, perQuery };
  }

  /**
   * How searchOnPool cuts a search: into at least `threads` calls and about
   * one per `sliceWork` (POOL_SLICE_WORK; tests pass less) of work (at most POOL_MAX_SLICES): blocks of
   * whole tile passes of queries first (each keeps its pass's reuse of a
   * row), then ranges of the scanned rows; each call's scratch and kernel
   * work area laid out back to back.
   */
  private poolSlices(threads: number, queryCount: number, scanned: number, k: number, sliceWork: number): PoolSlice[] {
    const work = queryCount * scanned * this.dim;
    const parts = Math.min(POOL_MAX_SLICES, Math.max(threads, Math.ceil(work / sliceWork)));
    const tile = this.kernel.TILE_PASS_QUERIES.value;
    const maxRowParts = Math.max(1, Math.floor(scanned / Math.max(k, 64)));
    let queryBlocks = Math.min(parts, Math.ceil(queryCount / tile));
    const rowParts = Math.min(maxRowParts, Math.ceil(parts / queryBlocks));
    // Too few rows to cut further: smaller blocks of queries (groups of four) instead.
    if (queryBlocks * rowParts < parts) queryBlocks = Math.min(Math.ceil(queryCount / 4), Math.ceil(parts / rowParts));
    const queryStep = Math.ceil(queryCount / queryBlocks / 4) * 4;
    const rowStep = Math.ceil(scanned / rowParts);
    const workAreaBytes = this.kernel.WORK_AREA_BYTES.value;
    const slices: PoolSlice[] = [];
    let base = this.freeScratch().scratch;
    for (let q0 = 0; q0 < queryCount; q0 += queryStep) {
      for (let r0 = 0; r0 < scanned; r0 += rowStep) {
        const q1 = Math.min(queryCount, q0 + queryStep), r1 = Math.min(scanned, r0 + rowStep);
        const nq = q1 - q0, rows = r1 - r0;
        const path: SingleQueryPathName = nq === 1 ? singleQueryPath(this.singleQueryPaths, { metric: this.metric, dim: this.dim, k, scanned: rows }) : 'plain';
        const scratch = scratchFor({ ...this.layout, scratch: base }, nq, rows, k, path === 'plain' ? 0 : rows, path === 'bounded');
        const workArea = align16(scratch.end);
        const end = workArea + workAreaBytes;
        slices.push({ q0, q1, r0, r1, path, scratch, workArea, end });
        base = align16(end);
      }
    }
    return slices;
  }

  /**
   * The scratch of a search() call, and the way one query goes
   * (singleQueryPath): the faster ways need room for a key or bound per
   * scanned row, and where the budget does not allow it the one-pass scan
   * runs instead, with the same hits.
   */
  private searchScratch(queryCount: number, rowListLength: number, k: number, scanned: number, guard: MemoryGuard | null) {
    const plain = { scratch: scratchFor(this.freeScratch(), queryCount, rowListLength, k), path: 'plain' as const };
    if (queryCount !== 1) return plain;
    const path = singleQueryPath(this.singleQueryPaths, { metric: this.metric, dim: this.dim, k, scanned });
    if (path === 'plain') return plain;
    const scratch = scratchFor(this.freeScratch(), queryCount, rowListLength, k, scanned, path === 'bounded');
    return this.allows(scratch.end, guard) ? { scratch, path } : plain;
  }

  /**
   * The layout with its scratch moved past that of the pool searches in
   * flight: searches of one session run side by side, each in scratch of
   * its own (a write waits for all of them, so the rows do not move).
   */
  private freeScratch(): Layout {
    return this.poolSearches > 0 ? { ...this.layout, scratch: this.scratchTop } : this.layout;
  }

  /** Pool searches in flight, and the end of the scratch they hold. */
  private poolSearches = 0;
  private scratchTop = 0;

  /** Grow to hold scratch up to `end` for a pool search; the function it returns gives the scratch back. */
  private holdScratch(end: number, guard: MemoryGuard | null): () => void {
    this.ensureBytes(end, guard);
    this.poolSearches++;
    this.scratchTop = Math.max(this.scratchTop, align16(end));
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.poolSearches === 0) this.scratchTop = 0;
    };
  }

  /** Whether the memory holds `bytes`, or `guard` lets it grow to (asking only; nothing grows). */
  private allows(bytes: number, guard: MemoryGuard | null): boolean {
    if (pagesFor(bytes) <= pagesFor(this.memory.buffer.byteLength) || !guard) return true;
    try {
      guard(pagesFor(bytes) * PAGE_BYTES);
      return true;
    } catch {
      return false;
    }
  }

  /** Float32 and Int32 views of the whole memory, made anew after a grow (scratch offsets are 16-aligned). */
  private wholeMemory(): { floats: Float32Array; ints: Int32Array } {
    const buffer = this.memory.buffer;
    if (this.floats.buffer !== buffer) {
      this.floats = new Float32Array(buffer);
      this.ints = new Int32Array(buffer);
    }
    return { floats: this.floats, ints: this.ints };
  }

  /** Grow the memory to hold `bytes`, asking `guard` first (upserts are checked by their caller before they get here). */
  private ensureBytes(bytes: number, guard: MemoryGuard | null = null): void {
    const pages = pagesFor(bytes) - pagesFor(this.memory.buffer.byteLength);
    if (pages <= 0) return;
    guard?.(pagesFor(bytes) * PAGE_BYTES);
    this.memory.grow(pages);
  }

  private checkRowList(rowList: Int32Array | null, count: number): void {
    if (!rowList) return;
    for (let i = 0; i < rowList.length; i++) {
      if (!(rowList[i] >= 0 && rowList[i] < count)) throw new RangeError(`row ${rowList[i]} out of range`);
    }
  }

  private checkRow(row: number): void {
    if (!(Number.isInteger(row) && row >= 0 && row < this.layout.capacity)) {
      throw new RangeError(`row ${row} outside capacity ${this.layout.capacity}`);
    }
  }
}
