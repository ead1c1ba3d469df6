// int8 storage in the kernel: codes follow every write, move and growth;
// with a pool covering every row the answer is exactly the float32 answer;
// with the default pool, recall stays high on random data (a sanity bound).
import { expect } from 'chai';
import { firstStagePool } from './first-stage.js';
import type { Metric } from '../../src/config.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { quantizeInto } from '../../src/kernel/quantize.js';
import { randomVector, seededRng } from '../helpers/random.js';

function filled(metric: Metric, dim: number, n: number, seed: number) {
  const rng = seededRng(seed);
  const kernel = new KernelInstance(loadKernelModule(), dim, metric, n, 'int8');
  const rows: Float32Array[] = [];
  for (let r = 0; r < n; r++) {
    kernel.ensureCapacity(r + 1); // grow step by step: every region is moved many times
    rows.push(Float32Array.from(randomVector(rng, dim)));
    kernel.writeRows([r], [rows[r]], r);
  }
  return { kernel, rows, rng };
}

describe('int8 kernel', () => {
  it('quantizes with one scale per vector, symmetric and zero-padded', () => {
    const codes = new Int8Array(8).fill(9);
    const scale = quantizeInto(Float32Array.from([0.5, -1, 0.25, 0]), codes);
    expect(scale).to.equal(Math.fround(1 / 127));
    expect(Array.from(codes)).to.deep.equal([64, -127, 32, 0, 0, 0, 0, 0]);
    expect(quantizeInto(new Float32Array(3), codes)).to.equal(0);
  });

  for (const metric of ['cosine', 'l2'] as const) {
    for (const dim of [1, 7, 33, 100]) {
      it(`${metric}, dim ${dim}: a pool of every row gives exactly the float32 result`, () => {
        const { kernel, rng } = filled(metric, dim, 300, dim);
        const queries = Float32Array.from({ length: 3 * dim }, () => rng() * 2 - 1);
        const exact = kernel.search({ queries, queryCount: 3, k: 10, count: 300 });
        const int8 = kernel.search({ queries, queryCount: 3, k: 10, candidatePool: 300, count: 300 });
        expect(Array.from(int8.rows)).to.deep.equal(Array.from(exact.rows));
        expect(Array.from(int8.scores)).to.deep.equal(Array.from(exact.scores));
      });
    }

    it(`${metric}: keeps codes in step when a delete moves the last row`, () => {
      const { kernel, rng } = filled(metric, 24, 200, 5);
      for (let hole = 0; hole < 50; hole++) kernel.moveRow(199 - hole, hole * 2);
      const query = Float32Array.from({ length: 24 }, () => rng() * 2 - 1);
      const list = Int32Array.from({ length: 150 }, (_, i) => i);
      const exact = kernel.search({ queries: query, queryCount: 1, k: 10, count: 150, rowList: list });
      expect(Array.from(kernel.search({ queries: query, queryCount: 1, k: 10, candidatePool: 150, count: 150, rowList: list }).rows)).to.deep.equal(
        Array.from(exact.rows),
      );
    });

    it(`${metric}: recall@10 with a pool of 100 is high on random data`, () => {
      const { kernel, rng } = filled(metric, 64, 3000, 6);
      let found = 0;
      for (let q = 0; q < 20; q++) {
        const query = Float32Array.from({ length: 64 }, () => rng() * 2 - 1);
        const truth = new Set(kernel.search({ queries: query, queryCount: 1, k: 10, count: 3000 }).rows);
        for (const row of kernel.search({ queries: query, queryCount: 1, k: 10, candidatePool: 100, count: 3000 }).rows) if (truth.has(row)) found++;
      }
      expect(found / 200).to.be.at.least(0.95);
    });
  }

  /** The first stage's key of each row, recomputed in JS from the same codes (cosine). */
  function approximateKeys(rows: Float32Array[], query: Float32Array, dim: number): number[] {
    const stride = Math.ceil(dim / 32) * 32;
    const q = new Int8Array(stride);
    quantizeInto(query, q);
    return rows.map((v) => {
      const c = new Int8Array(stride);
      const scale = quantizeInto(v, c);
      let dot = 0,
        norm = 0;
      for (let i = 0; i < dim; i++) {
        dot += q[i] * c[i];
        norm += v[i] * v[i];
      }
      return (dot * scale) / Math.sqrt(norm);
    });
  }

  it('selects the pool best by the codes, through many re-selections of the buffer', () => {
    const dim = 40;
    const { kernel, rows, rng } = filled('cosine', dim, 5000, 12);
    // 3000 and 4999: more rows than the pool but fewer than the 2 x pool
    // buffer (one selection at the end); 5000 and 9000: every row.
    for (const pool of [1, 7, 100, 300, 2048, 3000, 4999, 5000, 9000]) {
      const query = Float32Array.from({ length: dim }, () => rng() * 2 - 1);
      const got = firstStagePool(kernel, query, pool, 5000);
      const kept = Math.min(pool, 5000);
      expect(got.length).to.equal(kept);
      expect(new Set(got).size).to.equal(kept);
      const keys = approximateKeys(rows, query, dim);
      const cut = [...keys].sort((a, b) => b - a)[kept - 1];
      for (const row of got) expect(keys[row]).to.be.at.least(cut - 1e-5 * Math.abs(cut) - 1e-9);
    }
  });

  it('the first stage over a row list keeps the pool best of the listed rows only', () => {
    const dim = 17;
    const { kernel, rows, rng } = filled('cosine', dim, 2000, 13);
    const list = Int32Array.from({ length: 1500 }, (_, i) => (i * 7) % 2000);
    for (const pool of [1, 3, 100, 700, 1000, 2000]) {
      const query = Float32Array.from({ length: dim }, () => rng() * 2 - 1);
      const got = firstStagePool(kernel, query, pool, 2000, list);
      const kept = Math.min(pool, list.length);
      expect(got.length).to.equal(kept);
      expect(new Set(got).size).to.equal(kept);
      const listed = new Set(list);
      for (const row of got) expect(listed.has(row)).to.equal(true);
      const keys = approximateKeys(rows, query, dim);
      const cut = Array.from(list, (r) => keys[r]).sort((a, b) => b - a)[kept - 1];
      for (const row of got) expect(keys[row]).to.be.at.least(cut - 1e-5 * Math.abs(cut) - 1e-9);
    }
  });

  it('breaks ties by insertion when a few rows beat a tied crowd, any pool', () => {
    const kernel = new KernelInstance(loadKernelModule(), 8, 'l2', 3000, 'int8');
    kernel.ensureCapacity(3000);
    const same = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    const near = Float32Array.from([0, 0, 0, 0, 0, 0, 0, 1]);
    // Sequences in a scrambled order; every 100th row is nearer than the crowd.
    const seqOf = (r: number) => (r * 1237) % 3000;
    for (let r = 0; r < 3000; r++) kernel.writeRows([r], [r % 100 === 0 ? near : same], seqOf(r));
    const crowd = Array.from({ length: 3000 }, (_, r) => r)
      .filter((r) => r % 100 !== 0)
      .sort((a, b) => seqOf(a) - seqOf(b));
    for (const pool of [1, 30, 31, 64, 1000, 2000, 2999]) {
      const got = Array.from(firstStagePool(kernel, near, pool, 3000));
      const nearRows = Array.from({ length: 30 }, (_, i) => i * 100);
      const want = pool <= 30 ? null : [...nearRows, ...crowd.slice(0, pool - 30)].sort((a, b) => a - b);
      if (want) expect(got.sort((a, b) => a - b)).to.deep.equal(want);
      else for (const row of got) expect(row % 100).to.equal(0);
      expect(got.length).to.equal(pool);
    }
  });

  it('breaks ties in the selection by insertion order', () => {
    const kernel = new KernelInstance(loadKernelModule(), 8, 'l2', 1000, 'int8');
    kernel.ensureCapacity(1000);
    const same = Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    // Rows written in reverse sequence order: row r has sequence 999 - r.
    for (let r = 0; r < 1000; r++) kernel.writeRows([r], [same], 999 - r);
    const got = Array.from(firstStagePool(kernel, Float32Array.from([0, 0, 0, 0, 0, 0, 0, 1]), 50, 1000)).sort((a, b) => a - b);
    expect(got).to.deep.equal(Array.from({ length: 50 }, (_, i) => 950 + i));
  });
});
