// The int8 first stage scores four rows per step (one from each quarter of
// the rows, the last count % 4 in one padded step) and appends only what
// beats its threshold. These tests walk 1..9 rows (every tail), with and
// without a row list, pools below, at and above the row count, and ties
// whose rows fall in every lane and in the tail.
import { expect } from 'chai';
import { firstStagePool } from './first-stage.js';
import type { Metric } from '../../src/config.js';
import { RawKernel } from '../../bench/lib/raw-kernel.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { quantizeInto } from '../../src/kernel/quantize.js';
import { randomInt, randomVector, seededRng, shuffled } from '../helpers/random.js';

/** The first stage's key of each row, in float64 from the same codes. */
function approximateKeys(metric: Metric, rows: Float32Array[], query: Float32Array, dim: number): number[] {
  const stride = Math.ceil(dim / 32) * 32;
  const q = new Int8Array(stride);
  const queryScale = quantizeInto(query, q);
  return rows.map((v) => {
    const c = new Int8Array(stride);
    const scale = quantizeInto(v, c);
    let dot = 0,
      norm = 0;
    for (let i = 0; i < dim; i++) {
      dot += q[i] * c[i];
      norm += v[i] * v[i];
    }
    return metric === 'cosine' ? (dot * scale) / Math.sqrt(norm) : 2 * dot * scale * queryScale - norm;
  });
}

describe('int8 first stage: 4-row steps and their tails', () => {
  for (const metric of ['cosine', 'l2'] as const) {
    for (const dim of [1, 7, 33, 100]) {
      it(`${metric}, dim ${dim}, 1..9 rows: the pool holds the best int8 keys`, () => {
        const rng = seededRng(dim * 13 + (metric === 'l2' ? 1 : 0));
        for (let n = 1; n <= 9; n++) {
          const kernel = new KernelInstance(loadKernelModule(), dim, metric, n, 'int8');
          kernel.ensureCapacity(n);
          const rows = Array.from({ length: n }, () => Float32Array.from(randomVector(rng, dim)));
          rows.forEach((v, r) => {
            kernel.writeRows([r], [v], r);
          });
          const query = Float32Array.from(randomVector(rng, dim));
          const keys = approximateKeys(metric, rows, query, dim);
          const all = Array.from({ length: n }, (_, r) => r);
          for (const list of [null, shuffled(rng, all).slice(0, 1 + randomInt(rng, n))]) {
            const scanned = list ?? all;
            const rowList = list && Int32Array.from(list);
            for (const pool of [1, 2, 3, n, n + 3]) {
              const got = Array.from(firstStagePool(kernel, query, pool, n, rowList));
              const kept = Math.min(pool, scanned.length);
              const label = `n=${n} pool=${pool} list=${list}`;
              expect(got, label).to.have.length(kept);
              expect(new Set(got).size, label).to.equal(kept);
              for (const row of got) expect(scanned, label).to.include(row);
              const cut = scanned.map((r) => keys[r]).sort((a, b) => b - a)[kept - 1];
              for (const row of got) expect(keys[row], label).to.be.at.least(cut - 1e-5 * Math.abs(cut) - 1e-9);
            }
            const k = Math.min(3, scanned.length);
            const exact = kernel.search({ queries: query, queryCount: 1, k, count: n, rowList });
            const int8 = kernel.search({ queries: query, queryCount: 1, k, candidatePool: scanned.length, count: n, rowList });
            expect(Array.from(int8.rows)).to.deep.equal(Array.from(exact.rows));
            expect(Array.from(int8.scores)).to.deep.equal(Array.from(exact.scores));
          }
        }
      });
    }
  }

  it('a pool of 0 keeps nothing in the kernel, and the binding refuses it', () => {
    const rows = Float32Array.from({ length: 36 }, (_, i) => (i % 4 === 0 ? (i >> 2) + 1 : i % 4 === 1 ? 1 : i % 4 === 2 ? 0 : 2));
    expect(new RawKernel(rows, 4, 9, undefined, true).firstStage(Float32Array.from([1, 0, 0, 0]), 0)).to.have.length(0);
    const kernel = new KernelInstance(loadKernelModule(), 4, 'cosine', 9, 'int8');
    kernel.ensureCapacity(9);
    for (let r = 0; r < 9; r++) kernel.writeRows([r], [rows.subarray(r * 4, r * 4 + 4)], r);
    expect(() => kernel.search({ queries: Float32Array.from([1, 0, 0, 0]), queryCount: 1, k: 0, candidatePool: 0, count: 9 })).to.throw(RangeError);
  });

  it('equal rows in any lane, quarter or tail enter the pool in insertion order', () => {
    for (const n of [5, 7, 1003]) {
      const kernel = new KernelInstance(loadKernelModule(), 8, 'cosine', n, 'int8');
      kernel.ensureCapacity(n);
      const same = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
      const seqOf = (r: number) => (r * 389) % n; // scrambled: row order is not insertion order
      for (let r = 0; r < n; r++) kernel.writeRows([r], [same], seqOf(r));
      const byAge = Array.from({ length: n }, (_, r) => r).sort((a, b) => seqOf(a) - seqOf(b));
      for (const pool of [1, 2, 3, Math.floor(n / 2), n - 1]) {
        const got = Array.from(firstStagePool(kernel, same, pool, n)).sort((a, b) => a - b);
        expect(got, `n=${n} pool=${pool}`).to.deep.equal(byAge.slice(0, pool).sort((a, b) => a - b));
      }
    }
  });
});
