// The kernel's raw exports over packed data, for what the service's
// KernelInstance deliberately does not offer: the bare dot-product scan
// (the baseline for cosine and l2) and the read-only memory floor.
import { instantiateKernel, type KernelExports } from '../../src/kernel/kernel-module.js';
import { layoutFor, pagesFor, scratchFor, type Layout } from '../../src/kernel/layout.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { callSearch, inverseNorm, singleQueryPath, singleQueryPathsOf } from '../../src/kernel/kernel-instance.js';

export type RawMetric = 'cosine' | 'l2' | 'dot';

export class RawKernel {
  readonly memory = new WebAssembly.Memory({ initial: 1 });
  readonly exports: KernelExports;
  readonly layout: Layout;
  private scratchEnd = 0;

  /** `module`: another build of the kernel (bench:single compares one against the current build). */
  constructor(data: Float32Array, readonly dim: number, readonly count = data.length / dim, module = loadKernelModule()) {
    this.exports = instantiateKernel(module, this.memory);
    this.layout = layoutFor(this.exports.heapBase(), dim, count);
    this.grow(this.layout.scratch);
    const buffer = this.memory.buffer;
    new Float32Array(buffer, this.layout.vectors, data.length).set(data);
    const norms = new Float32Array(buffer, this.layout.invNorms, count);
    const seqs = new Uint32Array(buffer, this.layout.seqs, count);
    for (let r = 0; r < count; r++) {
      norms[r] = inverseNorm(data.subarray(r * dim, (r + 1) * dim));
      seqs[r] = r;
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
    const path = nq === 1 && k >= 1 && !onePass ? singleQueryPath(singleQueryPathsOf(this.exports), metric, this.dim, k, count) : 'plain';
    const s = scratchFor(this.layout, nq, rowList ? rowList.length : 0, k, path === 'plain' ? 0 : count, path === 'bounded');
    if (s.end > this.scratchEnd) {
      this.grow(s.end);
      this.scratchEnd = s.end;
    }
    new Float32Array(this.memory.buffer, s.queries, queries.length).set(queries);
    if (rowList) new Int32Array(this.memory.buffer, s.rowList, rowList.length).set(rowList);
    callSearch(this.exports, this.layout, this.dim, s, path, rowList !== null, count, queries, nq, this.metricCode(metric), k);
    // Query j's results start at j * k (the kernel's heaps), min(k, count) of them.
    const kept = Math.min(k, count);
    const allRows = new Int32Array(this.memory.buffer, s.outRows, nq * k), allKeys = new Float32Array(this.memory.buffer, s.outKeys, nq * k);
    const rows = new Int32Array(nq * kept), keys = new Float32Array(nq * kept);
    for (let j = 0; j < nq; j++) {
      rows.set(allRows.subarray(j * k, j * k + kept), j * kept);
      keys.set(allKeys.subarray(j * k, j * k + kept), j * kept);
    }
    return { rows, keys };
  }

  /** One read of every stored vector byte, nothing else. */
  readFloor(): number {
    return this.exports.readFloor(this.layout.vectors, Math.floor(this.count * this.dim * 4 / 64) * 64);
  }

  /** The same read as four streams, one per quarter, as the single-query scan reads the rows. */
  readFloor4(): number {
    return this.exports.readFloor4(this.layout.vectors, Math.floor(this.count * this.dim * 4 / 64) * 64);
  }
}
