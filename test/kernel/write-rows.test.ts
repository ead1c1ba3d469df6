// KernelInstance.writeRows of a batch in one pass against one call per row,
// inverseNorm (four running sums) against the plain sequential sum, and the
// kernel's storeInverseNorms (the stored rows' norms) against both.
import { expect } from 'chai';
import { firstStagePool } from './first-stage.js';
import type { VectorType } from '../../src/config.js';
import { inverseNorm } from '../../src/kernel/inverse-norm.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { instantiateKernel } from '../../src/kernel/kernel-module.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomVector, seededRng } from '../helpers/random.js';

function sequentialInverseNorm(values: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] * values[i];
  return sum > 0 ? 1 / Math.sqrt(sum) : 0;
}

describe('kernel batch writes', () => {
  for (const vectorType of ['float32', 'int8'] as VectorType[]) {
    it(`${vectorType}: a batch stores what one row at a time stores, repeats last-wins`, () => {
      const rng = seededRng(11);
      const dim = 13;
      const one = new KernelInstance(loadKernelModule(), dim, 'cosine', 1000, vectorType);
      const batch = new KernelInstance(loadKernelModule(), dim, 'cosine', 1000, vectorType);
      one.ensureCapacity(50);
      batch.ensureCapacity(50);
      const rows = [7, 0, 49, 7, 3, 12];
      const values = rows.map(() => Float32Array.from(randomVector(rng, dim)));
      rows.forEach((row, i) => {
        one.writeRows([row], [values[i]], 100 + i);
      });
      batch.writeRows(rows, values, 100);
      for (const row of new Set(rows)) expect(Array.from(batch.readRow(row))).to.deep.equal(Array.from(one.readRow(row)));
      // Norms, sequences (and int8 codes) are compared through the search results they produce.
      const query = Float32Array.from(randomVector(rng, dim));
      const count = 50;
      const a = one.search({ queries: query, queryCount: 1, k: 10, count });
      const b = batch.search({ queries: query, queryCount: 1, k: 10, count });
      expect(Array.from(b.rows)).to.deep.equal(Array.from(a.rows));
      expect(Array.from(b.scores)).to.deep.equal(Array.from(a.scores));
      if (vectorType === 'int8') {
        expect(Array.from(firstStagePool(batch, query, 5, count)).sort()).to.deep.equal(Array.from(firstStagePool(one, query, 5, count)).sort());
      }
    });
  }

  it('writeRows checks every row and length before writing any', () => {
    const kernel = new KernelInstance(loadKernelModule(), 2, 'l2', 10);
    kernel.ensureCapacity(4);
    kernel.writeRows([0], [Float32Array.of(1, 2)], 0);
    expect(() => kernel.writeRows([0, kernel.capacity], [Float32Array.of(5, 5), Float32Array.of(6, 6)], 1)).to.throw(RangeError);
    expect(() => kernel.writeRows([0, 1], [Float32Array.of(5, 5), Float32Array.of(6)], 1)).to.throw(RangeError);
    expect(() => kernel.writeRows([0], [], 1)).to.throw(RangeError);
    expect(Array.from(kernel.readRow(0))).to.deep.equal([1, 2]);
  });

  it('inverseNorm equals the float32 of the sequential sum at any length and scale', () => {
    const rng = seededRng(5);
    for (let n = 1; n <= 40; n++) {
      for (const scale of [1, 1e-20, 1e15]) {
        for (let t = 0; t < 25; t++) {
          const values = Float32Array.from(randomVector(rng, n), (x) => x * scale);
          const fast = inverseNorm(values);
          const plain = sequentialInverseNorm(values);
          expect(Math.fround(fast), `n=${n}`).to.equal(Math.fround(plain));
          expect(Math.abs(fast - plain) / plain).to.be.below(1e-14);
        }
      }
    }
    expect(inverseNorm(new Float32Array(7))).to.equal(0);
    expect(inverseNorm(Float32Array.of(0, 0, 0, 0, 1e-45))).to.equal(sequentialInverseNorm(Float32Array.of(0, 0, 0, 0, 1e-45)));
  });

  it('the kernel stores the sequential inverse norm at any length and scale', () => {
    const rng = seededRng(17);
    const memory = new WebAssembly.Memory({ initial: 4 });
    const kernel = instantiateKernel(loadKernelModule(), memory);
    const base = Math.ceil(kernel.heapBase() / 16) * 16;
    for (const dim of [...Array.from({ length: 40 }, (_, i) => i + 1), 383, 384, 1024]) {
      for (const scale of [1, 1e-20, 1e15]) {
        const count = 5;
        const rows = Array.from({ length: count }, () => Float32Array.from(randomVector(rng, dim), (x) => x * scale));
        rows[2].fill(0); // a zero row gets 0
        const vectors = base;
        const norms = vectors + count * dim * 4;
        rows.forEach((row, r) => {
          new Float32Array(memory.buffer, vectors + r * dim * 4, dim).set(row);
        });
        new Float32Array(memory.buffer, norms, count).fill(-1);
        // Rows 1..3 only: the others keep their -1.
        kernel.storeInverseNorms(vectors, dim, 1, 3, norms);
        const stored = Array.from(new Float32Array(memory.buffer, norms, count));
        const want = rows.map((row) => Math.fround(sequentialInverseNorm(row)));
        expect(stored, `dim=${dim} scale=${scale}`).to.deep.equal([-1, want[1], 0, want[3], -1]);
      }
    }
  });
});
