// One session's kernel: a WebAssembly.Memory, the instance over it, and the
// memory layout. Callers speak in rows and Float32Arrays; only this class
// knows addresses, and it checks every bound before calling into WASM (the
// kernel itself checks nothing).
//
// memory.grow() detaches every view of the old buffer, so views are made per
// call from `memory.buffer`, never kept.

import type { Metric } from '../config.js';
import { instantiateKernel, type KernelExports } from './kernel-module.js';
import { layoutFor, PAGE_BYTES, pagesFor, scratchFor, type Layout } from './layout.js';

const FIRST_CAPACITY = 64;
const GROWTH = 1.5;

/** Best-first results of a search: query j owns [j*perQuery, (j+1)*perQuery). */
export interface SearchHits {
  rows: Int32Array;
  scores: Float64Array;
  perQuery: number;
}

/** 1/||v|| in float64 over the float32 values actually stored; 0 for a zero vector. */
export function inverseNorm(values: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] * values[i];
  return sum > 0 ? 1 / Math.sqrt(sum) : 0;
}

/** Capacity after growing from `capacity` to hold `rows`: geometric, so adds stay amortised O(1). */
function grownCapacity(capacity: number, rows: number, maxCapacity: number): number {
  return Math.min(Math.max(rows, Math.ceil(capacity * GROWTH), FIRST_CAPACITY), maxCapacity);
}

export class KernelInstance {
  private readonly memory: WebAssembly.Memory;
  private readonly kernel: KernelExports;
  private readonly metricCode: number;
  private layout: Layout;

  constructor(
    module: WebAssembly.Module,
    readonly dim: number,
    readonly metric: Metric,
    /** Rows this instance may ever hold (the session's maxVectors). */
    readonly maxCapacity: number,
  ) {
    this.memory = new WebAssembly.Memory({ initial: 1 });
    this.kernel = instantiateKernel(module, this.memory);
    this.metricCode = metric === 'cosine' ? this.kernel.METRIC_COSINE.value : this.kernel.METRIC_L2.value;
    this.layout = layoutFor(this.kernel.heapBase(), dim, 0);
  }

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
    const next = layoutFor(this.kernel.heapBase(), this.dim, grownCapacity(this.layout.capacity, rows, this.maxCapacity));
    return Math.max(this.memoryBytes, pagesFor(next.scratch) * PAGE_BYTES);
  }

  /** What memoryBytesFor(rows) would be for a new instance; the static data is counted as a whole page. */
  static memoryBytesForNew(dim: number, rows: number, maxCapacity: number): number {
    const next = layoutFor(PAGE_BYTES, dim, grownCapacity(0, rows, maxCapacity));
    return pagesFor(next.scratch) * PAGE_BYTES;
  }

  /** Make room for `rows` rows. Nothing already stored changes. */
  ensureCapacity(rows: number): void {
    if (rows <= this.layout.capacity) return;
    if (rows > this.maxCapacity) throw new RangeError(`capacity ${rows} exceeds ${this.maxCapacity}`);
    const next = layoutFor(this.kernel.heapBase(), this.dim, grownCapacity(this.layout.capacity, rows, this.maxCapacity));
    this.ensureBytes(next.scratch);
    const bytes = new Uint8Array(this.memory.buffer);
    const used = this.layout.capacity * 4;
    // Both per-row regions move up; the higher one goes first so the lower
    // one's copy cannot overwrite it.
    bytes.copyWithin(next.seqs, this.layout.seqs, this.layout.seqs + used);
    bytes.copyWithin(next.invNorms, this.layout.invNorms, this.layout.invNorms + used);
    this.layout = next;
  }

  /** Store `values` (length dim) as row `row` with insertion sequence `seq`. */
  writeRow(row: number, values: Float32Array, seq: number): void {
    this.checkRow(row);
    if (values.length !== this.dim) throw new RangeError(`row of ${values.length} values, expected ${this.dim}`);
    const { vectors, invNorms, seqs } = this.layout;
    const buffer = this.memory.buffer;
    new Float32Array(buffer, vectors + row * this.dim * 4, this.dim).set(values);
    new Float32Array(buffer, invNorms, this.layout.capacity)[row] = inverseNorm(values);
    new Uint32Array(buffer, seqs, this.layout.capacity)[row] = seq;
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
  }

  /**
   * The k nearest of rows [0, count) (or of `rowList`, when given) for each of
   * `queryCount` queries stored back to back in `queries`.
   * Scores: cosine similarity, or Euclidean distance for l2.
   */
  search(queries: Float32Array, queryCount: number, k: number, count: number, rowList: Int32Array | null = null): SearchHits {
    if (queries.length !== queryCount * this.dim) throw new RangeError('queries length is not queryCount * dim');
    if (!(k >= 1)) throw new RangeError('k must be at least 1');
    if (count < 0 || count > this.layout.capacity) throw new RangeError(`count ${count} out of range`);
    const scanned = rowList ? rowList.length : count;
    const perQuery = Math.min(k, scanned);
    if (perQuery === 0 || queryCount === 0) {
      return { rows: new Int32Array(0), scores: new Float64Array(0), perQuery: 0 };
    }
    if (rowList) {
      for (let i = 0; i < rowList.length; i++) {
        if (!(rowList[i] >= 0 && rowList[i] < count)) throw new RangeError(`row ${rowList[i]} out of range`);
      }
    }
    const scratch = scratchFor(this.layout, queryCount, rowList ? rowList.length : 0, k);
    this.ensureBytes(scratch.end);
    const buffer = this.memory.buffer;
    const queryView = new Float32Array(buffer, scratch.queries, queries.length);
    queryView.set(queries);
    // Cosine queries go in at unit length, so dot(query, row) stays in float32's
    // normal range whatever the scale of the components (a query of 1e-25-scale
    // components would otherwise underflow every dot product to 0).
    if (this.metric === 'cosine') {
      for (let q = 0; q < queryCount; q++) {
        const start = q * this.dim;
        const scale = inverseNorm(queries.subarray(start, start + this.dim));
        for (let i = start; i < start + this.dim; i++) queryView[i] = queries[i] * scale;
      }
    }
    if (rowList) new Int32Array(buffer, scratch.rowList, rowList.length).set(rowList);

    const { vectors, invNorms, seqs } = this.layout;
    this.kernel.search(
      vectors, invNorms, seqs, this.dim,
      rowList ? scratch.rowList : 0, scanned,
      scratch.queries, queryCount, this.metricCode, k,
      scratch.outRows, scratch.outKeys,
    );

    const outRows = new Int32Array(buffer, scratch.outRows, queryCount * k);
    const outKeys = new Float32Array(buffer, scratch.outKeys, queryCount * k);
    const rows = new Int32Array(queryCount * perQuery);
    const scores = new Float64Array(queryCount * perQuery);
    for (let q = 0; q < queryCount; q++) {
      for (let i = 0; i < perQuery; i++) {
        rows[q * perQuery + i] = outRows[q * k + i];
        scores[q * perQuery + i] = this.toScore(outKeys[q * k + i]);
      }
    }
    return { rows, scores, perQuery };
  }

  /** Kernel key (larger is nearer) to the score users see; cosine keys already use a unit query. */
  private toScore(key: number): number {
    if (this.metric === 'cosine') return Math.max(-1, Math.min(1, key));
    return Math.sqrt(Math.max(0, -key));
  }

  private ensureBytes(bytes: number): void {
    const pages = pagesFor(bytes) - pagesFor(this.memory.buffer.byteLength);
    if (pages > 0) this.memory.grow(pages);
  }

  private checkRow(row: number): void {
    if (!(Number.isInteger(row) && row >= 0 && row < this.layout.capacity)) {
      throw new RangeError(`row ${row} outside capacity ${this.layout.capacity}`);
    }
  }
}
