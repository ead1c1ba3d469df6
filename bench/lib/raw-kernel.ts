// The bench kernel's raw exports over packed data, for what the service's
// KernelInstance deliberately does not offer: the bare dot-product scan
// (the baseline for cosine and l2), the read-only memory floor, and the
// int8 first stage on its own.
import { inverseNorm } from '../../src/kernel/inverse-norm.js';
import { instantiateKernel } from '../../src/kernel/kernel-module.js';
import { codeStrideFor, int8ScratchFor, layoutFor, pagesFor, scratchFor, type Layout } from '../../src/kernel/layout.js';
import { quantizeInto, sumOfSquares } from '../../src/kernel/quantize.js';
import { runKernelSearch, singleQueryPath } from '../../src/kernel/search-path.js';
import { loadBenchKernelModule, singleQueryPathsOfAnyBuild, type BenchKernelExports } from './bench-kernel.js';

export type RawMetric = 'cosine' | 'l2' | 'dot';

export class RawKernel {
  readonly memory = new WebAssembly.Memory({ initial: 1 });
  readonly exports: BenchKernelExports;
  readonly layout: Layout;
  private scratchEnd = 0;

  /** `module`: another build of the kernel (an experiment compares one against the current build); `int8`: int8 codes beside the rows. */
  constructor(
    data: Float32Array,
    readonly dim: number,
    readonly count = data.length / dim,
    module = loadBenchKernelModule(),
    int8 = false,
  ) {
    this.exports = instantiateKernel(module, this.memory) as BenchKernelExports;
    this.layout = layoutFor(this.exports.heapBase(), dim, count, codeStrideFor(dim, int8));
    this.grow(this.layout.scratch);
    const buffer = this.memory.buffer;
    new Float32Array(buffer, this.layout.vectors, data.length).set(data);
    const norms = new Float32Array(buffer, this.layout.invNorms, count);
    const seqs = new Uint32Array(buffer, this.layout.seqs, count);
    for (let r = 0; r < count; r++) {
      norms[r] = inverseNorm(data.subarray(r * dim, (r + 1) * dim));
      seqs[r] = r;
    }
    const { codeStride, codes, scales, sqNorms } = this.layout;
    for (let r = 0; r < count && codeStride > 0; r++) {
      const row = data.subarray(r * dim, (r + 1) * dim);
      new Float32Array(buffer, scales, count)[r] = quantizeInto(row, new Int8Array(buffer, codes + r * codeStride, codeStride));
      new Float32Array(buffer, sqNorms, count)[r] = sumOfSquares(row);
    }
  }

  private grow(bytes: number): void {
    const pages = pagesFor(bytes) - pagesFor(this.memory.buffer.byteLength);
    if (pages > 0) this.memory.grow(pages);
  }

  metricCode(metric: RawMetric): number {
    const e = this.exports;
    return (metric === 'cosine' ? e.METRIC_COSINE : metric === 'l2' ? e.METRIC_L2 : e.METRIC_DOT).value;
  }

  /** Best-first rows of each query's top k (no score conversion). */
  search(queries: Float32Array, nq: number, k: number, metric: RawMetric, onePass = false): Int32Array {
    return this.searchWithKeys(queries, nq, k, metric, null, onePass).rows;
  }

  /**
   * Rows and raw keys (larger is nearer), best first, of each query's top k over all rows or `rowList`.
   * One query goes the way the service's KernelInstance sends it (on a build
   * that has them, singleQueryPath): l2 by searchL2Bounded, a large top k of
   * a cache-sized scan keys first; unless `onePass`: the one-pass scan with its selection inside.
   */
  searchWithKeys(queries: Float32Array, nq: number, k: number, metric: RawMetric, rowList: Int32Array | null = null, onePass = false) {
    const count = rowList ? rowList.length : this.count;
    // The way depends only on whether the metric is l2: the bench build's dot goes as cosine does.
    const path =
      nq === 1 && k >= 1 && !onePass
        ? singleQueryPath(singleQueryPathsOfAnyBuild(this.exports), { metric: metric === 'l2' ? 'l2' : 'cosine', dim: this.dim, k, scanned: count })
        : 'plain';
    const s = scratchFor(this.layout, nq, rowList ? rowList.length : 0, k, path === 'plain' ? 0 : count, path === 'bounded');
    if (s.end > this.scratchEnd) {
      this.grow(s.end);
      this.scratchEnd = s.end;
    }
    new Float32Array(this.memory.buffer, s.queries, queries.length).set(queries);
    if (rowList) new Int32Array(this.memory.buffer, s.rowList, rowList.length).set(rowList);
    runKernelSearch({
      kernel: this.exports,
      layout: this.layout,
      scratch: s,
      path,
      withRowList: rowList !== null,
      count,
      queries,
      queryCount: nq,
      metricCode: this.metricCode(metric),
      k,
    });
    // Query j's results start at j * k (the kernel's heaps), min(k, count) of them.
    const kept = Math.min(k, count);
    const allRows = new Int32Array(this.memory.buffer, s.outRows, nq * k),
      allKeys = new Float32Array(this.memory.buffer, s.outKeys, nq * k);
    const rows = new Int32Array(nq * kept),
      keys = new Float32Array(nq * kept);
    for (let j = 0; j < nq; j++) {
      rows.set(allRows.subarray(j * k, j * k + kept), j * kept);
      keys.set(allKeys.subarray(j * k, j * k + kept), j * kept);
    }
    return { rows, keys };
  }

  /** One read of every stored vector byte, nothing else. */
  readFloor(): number {
    return this.exports.readFloor(this.layout.vectors, Math.floor((this.count * this.dim * 4) / 64) * 64);
  }

  /** The same read as four streams, one per quarter, as the single-query scan reads the rows. */
  readFloor4(): number {
    return this.exports.readFloor4(this.layout.vectors, Math.floor((this.count * this.dim * 4) / 64) * 64);
  }

  /**
   * The int8 first stage alone (int8 codes needed): rows of the `pool` best
   * approximate keys of one query, unordered, selected as KernelInstance's
   * searchInt8 selects them.
   */
  firstStage(query: Float32Array, pool: number, metric: 'cosine' | 'l2' = 'cosine'): Int32Array {
    const { codeStride, codes, scales, invNorms, sqNorms, seqs } = this.layout;
    if (codeStride === 0) throw new Error('no int8 codes: construct with int8 = true');
    const keysFirst = pool >= (this.exports.KEYS_FIRST_MIN_POOL?.value ?? Infinity);
    const s = int8ScratchFor(this.layout, 0, pool, keysFirst ? this.count : 0);
    if (s.end > this.scratchEnd) {
      this.grow(s.end);
      this.scratchEnd = s.end;
    }
    const codes8 = new Int8Array(codeStride);
    const queryScale = quantizeInto(query, codes8);
    new Int16Array(this.memory.buffer, s.query16, codeStride).set(codes8);
    const found = this.exports.searchInt8(
      codes,
      codeStride,
      scales,
      metric === 'cosine' ? invNorms : sqNorms,
      seqs,
      0,
      this.count,
      s.query16,
      queryScale,
      this.metricCode(metric),
      pool,
      s.outRows,
      s.outKeys,
      keysFirst ? s.keys : 0,
    );
    return new Int32Array(this.memory.buffer, s.outRows, found).slice();
  }
}
