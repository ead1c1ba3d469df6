// The kernel's raw exports over packed data, for what the service's
// KernelInstance deliberately does not offer: the bare dot-product scan
// (the baseline for cosine and l2) and the read-only memory floor.
import { instantiateKernel, type KernelExports } from '../../src/kernel/kernel-module.js';
import { layoutFor, pagesFor, scratchFor, type Layout } from '../../src/kernel/layout.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { inverseNorm } from '../../src/kernel/kernel-instance.js';

export type RawMetric = 'cosine' | 'l2' | 'dot';

export class RawKernel {
  readonly memory = new WebAssembly.Memory({ initial: 1 });
  readonly exports: KernelExports;
  readonly layout: Layout;
  private scratchEnd = 0;

  constructor(data: Float32Array, readonly dim: number, readonly count = data.length / dim) {
    this.exports = instantiateKernel(loadKernelModule(), this.memory);
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
  search(queries: Float32Array, nq: number, k: number, metric: RawMetric): Int32Array {
    const s = scratchFor(this.layout, nq, 0, k);
    if (s.end > this.scratchEnd) {
      this.grow(s.end);
      this.scratchEnd = s.end;
    }
    new Float32Array(this.memory.buffer, s.queries, queries.length).set(queries);
    const { vectors, invNorms, seqs } = this.layout;
    this.exports.search(vectors, invNorms, seqs, this.dim, 0, this.count, s.queries, nq, this.metricCode(metric), k, s.outRows, s.outKeys, s.block);
    return new Int32Array(this.memory.buffer, s.outRows, nq * Math.min(k, this.count)).slice();
  }

  /** One read of every stored vector byte, nothing else. */
  readFloor(): number {
    return this.exports.readFloor(this.layout.vectors, Math.floor(this.count * this.dim * 4 / 64) * 64);
  }
}
