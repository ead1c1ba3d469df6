// One session's kernel: a WebAssembly.Memory, the instance over it, and the
// memory layout. Callers speak in rows and Float32Arrays; only this class
// knows addresses, and it checks every bound before calling into WASM (the
// kernel itself checks nothing).
//
// memory.grow() replaces `memory.buffer` (detaching a non-shared one), so
// views are made per call from it, except the searches' two views of the
// whole memory, made anew when the buffer they view is no longer the memory's.
// A shared build's memory is shared (a kernel pool's threads read it).
//
// A search's scratch grows the memory too (and memory never shrinks), so a
// search takes a MemoryGuard: asked with the bytes the memory would hold,
// only when it must grow, before it grows; it throws to refuse.

import type { Metric, VectorType } from '../config.js';
import { runHere, runOnPool, THIS_THREAD, type PoolExecutor } from './executor.js';
import { instantiateKernel, memoryFor, type KernelExports } from './kernel-module.js';
import { align16, codeStrideFor, layoutFor, movableRegions, PAGE_BYTES, pagesFor, type Layout } from './layout.js';
import { quantizeInto, sumOfSquares } from './quantize.js';
import { singleQueryPathsOf } from './search-path.js';
import { checkRequest, NO_HITS, type MemoryGuard, type SearchHits, type SearchRequest } from './search-request.js';
import { rowKeys, withGatheredRows } from './row-scores.js';
import { exactSearch, int8Search, type SearchSpace } from './search-steps.js';

const FIRST_CAPACITY = 64;
const GROWTH = 1.5;

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
    /** Rows this instance may ever hold (the session's maxVectors; raised by VectorIndex.allowRows()). */
    public maxCapacity: number,
    /** int8 keeps int8 codes beside the float32 rows for a fast first stage. */
    readonly vectorType: VectorType = 'float32',
  ) {
    this.memory = memoryFor(module);
    this.kernel = instantiateKernel(module, this.memory);
    this.metricCode = metric === 'cosine' ? this.kernel.METRIC_COSINE.value : this.kernel.METRIC_L2.value;
    this.codeStride = codeStrideFor(dim, vectorType === 'int8');
    this.layout = layoutFor(this.kernel.heapBase(), dim, 0, this.codeStride);
    this.space = this.searchSpace();
  }

  private readonly codeStride: number;
  /** What a search sees of this instance (made once: a search makes no closures). */
  private readonly space: SearchSpace;

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
    for (let i = 0; i < rows.length; ) {
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
   * The k nearest of the stored rows for each query of `request`, best
   * first: cosine similarity or Euclidean distance. On this thread, or with
   * `executor` (a shared build's instance only) on a kernel pool's threads,
   * with the same rows, scores and order (search-steps.ts); the caller keeps
   * writes to this instance away until it settles. Its scratch is laid out
   * (the memory grown) before this returns.
   */
  search(request: SearchRequest): SearchHits;
  search(request: SearchRequest, executor: PoolExecutor): Promise<SearchHits>;
  search(request: SearchRequest, executor?: PoolExecutor): SearchHits | Promise<SearchHits> {
    const checked = checkRequest(request, this.dim, this.layout.capacity);
    if (checked.candidatePool !== undefined && this.codeStride === 0) throw new Error('this instance stores no int8 codes');
    if (checked.perQuery === 0) return executor ? Promise.resolve(NO_HITS) : NO_HITS;
    const algorithm = checked.candidatePool === undefined ? exactSearch : int8Search;
    if (!executor) return runHere(this.kernel, algorithm(this.space, checked, THIS_THREAD));
    return runOnPool(executor, this.id, this.memory, this.kernel, algorithm(this.space, checked, executor));
  }

  /**
   * `read` of every listed row's key for `query`, in `rowList`'s order (rows
   * from..count-1 without one), on this thread: cosine similarity, or minus the
   * squared l2 distance (row-scores.ts). The keys are a view of the scratch,
   * valid only while `read` runs.
   */
  rowKeys<T>(query: Float32Array, rowList: Int32Array | null, count: number, guard: MemoryGuard | null, read: (keys: Float32Array) => T, from = 0): T {
    return rowKeys(this.space, query, rowList, count, guard, read, from);
  }

  /** `use` of a scorer of `rows` gathered into one block (row-scores.ts): for a row list scored many times. */
  withGatheredRows<T>(rows: Int32Array, count: number, guard: MemoryGuard | null, use: (score: (query: Float32Array) => Float32Array) => T): T {
    return withGatheredRows(this.space, rows, count, guard, use);
  }

  /** A view of every row's insertion sequence, valid until the next write or grow. */
  seqs(): Uint32Array {
    return this.space.seqs();
  }

  /** The instance as the search steps see it: its constants, and getters for what a grow or a search in flight changes. */
  private searchSpace(): SearchSpace {
    const instance = this;
    return {
      kernel: this.kernel,
      metric: this.metric,
      metricCode: this.metricCode,
      paths: singleQueryPathsOf(this.kernel),
      get layout() {
        return instance.layout;
      },
      // Past the scratch of the pool searches in flight: searches of one session run side by side,
      // each in scratch of its own (a write waits for all of them, so the rows do not move).
      get scratchBase() {
        return instance.searchesInFlight > 0 ? instance.scratchTop : instance.layout.scratch;
      },
      allows: (bytes, guard) => this.allows(bytes, guard),
      hold: (end, guard) => this.holdScratch(end, guard),
      release: () => this.releaseScratch(),
      views: () => this.wholeMemory(),
      seqs: () => new Uint32Array(this.memory.buffer, this.layout.seqs, this.layout.capacity),
    };
  }

  /** Searches holding scratch, and the end of the scratch they hold. */
  private searchesInFlight = 0;
  private scratchTop = 0;

  /** Grow to hold scratch up to `end` for a search, held until releaseScratch(). */
  private holdScratch(end: number, guard: MemoryGuard | null): void {
    this.ensureBytes(end, guard);
    this.searchesInFlight++;
    this.scratchTop = Math.max(this.scratchTop, align16(end));
  }

  private releaseScratch(): void {
    if (--this.searchesInFlight === 0) this.scratchTop = 0;
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

  /** Views of the whole memory, made anew after a grow has replaced its buffer (scratch offsets are 16-aligned). */
  private wholeMemory() {
    const buffer = this.memory.buffer;
    if (this.floats.buffer !== buffer) {
      this.floats = new Float32Array(buffer);
      this.ints = new Int32Array(buffer);
    }
    return { buffer, floats: this.floats, ints: this.ints };
  }

  /** Grow the memory to hold `bytes`, asking `guard` first (upserts are checked by their caller before they get here). */
  private ensureBytes(bytes: number, guard: MemoryGuard | null = null): void {
    const pages = pagesFor(bytes) - pagesFor(this.memory.buffer.byteLength);
    if (pages <= 0) return;
    guard?.(pagesFor(bytes) * PAGE_BYTES);
    this.memory.grow(pages);
  }

  private checkRow(row: number): void {
    if (!(Number.isInteger(row) && row >= 0 && row < this.layout.capacity)) {
      throw new RangeError(`row ${row} outside capacity ${this.layout.capacity}`);
    }
  }
}
