// The kernel's top-K and candidate-pool selection (a threshold, a buffer of
// 2k entries cut by a radix select, an exact select inside the boundary
// bucket) against a plain sort. Integer vectors make every key exact in
// float32, so the reference computes the same keys in JS; few distinct
// values give many exact ties across every cut, which only the insertion
// sequence (scrambled against the row order) may break.
import { expect } from 'chai';
import { firstStagePool } from './first-stage.js';
import type { Metric } from '../../src/config.js';
import { inverseNorm } from '../../src/kernel/inverse-norm.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomInt, seededRng, shuffled, type Rng } from '../helpers/random.js';
import { sampled } from '../helpers/scale.js';

const DIM = 3;

/** Integer rows with 127 first (int8 scale exactly 1, codes = values); `spread` distinct values per other component. */
function integerRows(rng: Rng, n: number, spread: number): Float32Array[] {
  const value = () => (spread >= 255 ? randomInt(rng, 255) - 127 : Math.round((randomInt(rng, spread) / Math.max(1, spread - 1)) * 254) - 127);
  return Array.from({ length: n }, () => Float32Array.from([127, value(), value()]));
}

function loaded(metric: Metric, rows: Float32Array[], seqs: number[], vectorType: 'float32' | 'int8'): KernelInstance {
  const kernel = new KernelInstance(loadKernelModule(), DIM, metric, Math.max(1, rows.length), vectorType);
  kernel.ensureCapacity(rows.length);
  rows.forEach((v, r) => {
    kernel.writeRows([r], [v], seqs[r]);
  });
  return kernel;
}

/** Rows of `scanned` best first: larger key first, then the earlier insertion. */
function sortedRows(scanned: number[], key: (row: number) => number, seqs: number[]): number[] {
  return [...scanned].sort((a, b) => key(b) - key(a) || seqs[a] - seqs[b]);
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i], 0);

function cases(rng: Rng): { n: number; spread: number; list: boolean }[] {
  const out = [];
  for (let n = 1; n <= 9; n++) out.push({ n, spread: 3, list: false }, { n, spread: 3, list: true });
  for (const n of [70, 300, 2500, 5000]) {
    for (const spread of [2, 5, 255]) out.push({ n, spread, list: rng() < 0.5 });
  }
  return out;
}

// 256 to 600 at 5000 rows: the int8 pools selected after the scan (8 rows per entry and more).
const sizesFor = (n: number) => [...new Set([1, 2, 3, 4, 5, n - 1, n, n + 1, 33, 64, 100, 256, 300, 600, 700, 1100])].filter((k) => k >= 1 && k <= n + 1);

describe('kernel selection against a plain sort', function () {
  // Randomized against a plain reference: tens of seconds on a loaded 2-core machine.
  this.timeout(180_000);
  it('float32 l2: top k rows equal a plain sort, singly and in tiles, with ties', () => {
    const rng = seededRng(41);
    for (const { n, spread, list } of cases(rng)) {
      const rows = integerRows(rng, n, spread);
      const seqs = shuffled(
        rng,
        Array.from({ length: n }, (_, i) => i * 3),
      );
      const kernel = loaded('l2', rows, seqs, 'float32');
      const all = Array.from({ length: n }, (_, r) => r);
      const scanned = list ? shuffled(rng, all).slice(0, 1 + randomInt(rng, n)) : all;
      for (const nq of [1, 4, 6]) {
        const queries = integerRows(rng, nq, spread);
        if (nq > 1) queries[0] = rows[randomInt(rng, n)]; // an exact match: key -0
        const packed = new Float32Array(nq * DIM);
        queries.forEach((q, j) => {
          packed.set(q, j * DIM);
        });
        for (const k of sampled(sizesFor(scanned.length))) {
          const hits = kernel.search({ queries: packed, queryCount: nq, k, count: n, rowList: list ? Int32Array.from(scanned) : null });
          for (let j = 0; j < nq; j++) {
            const key = (r: number) => -rows[r].reduce((s, x, i) => s + (queries[j][i] - x) ** 2, 0);
            const want = sortedRows(scanned, key, seqs).slice(0, k);
            const got = Array.from(hits.rows.subarray(j * hits.perQuery, (j + 1) * hits.perQuery));
            expect(got, `n=${n} spread=${spread} list=${list} nq=${nq} k=${k} q=${j}`).to.deep.equal(want);
          }
        }
      }
    }
  });

  for (const metric of ['cosine', 'l2'] as const) {
    it(`int8 first stage, ${metric}: the pool is the best keys, ties by insertion`, () => {
      const rng = seededRng(metric === 'l2' ? 43 : 47);
      for (const { n, spread, list } of cases(rng)) {
        const rows = integerRows(rng, n, spread);
        const seqs = shuffled(
          rng,
          Array.from({ length: n }, (_, i) => i),
        );
        const kernel = loaded(metric, rows, seqs, 'int8');
        const all = Array.from({ length: n }, (_, r) => r);
        const scanned = list ? shuffled(rng, all).slice(0, 1 + randomInt(rng, n)) : all;
        const query = integerRows(rng, 1, spread)[0];
        // The kernel's keys with scales of exactly 1: cosine dot * invNorm, l2 2 * dot - ||v||^2.
        const key = (r: number) =>
          metric === 'cosine' ? Math.fround(dot(query, rows[r]) * inverseNorm(rows[r])) : 2 * dot(query, rows[r]) - dot(rows[r], rows[r]);
        for (const pool of sampled(sizesFor(scanned.length))) {
          const got = Array.from(firstStagePool(kernel, query, pool, n, list ? Int32Array.from(scanned) : null));
          const want = sortedRows(scanned, key, seqs).slice(0, pool);
          expect(
            got.sort((a, b) => a - b),
            `n=${n} spread=${spread} list=${list} pool=${pool}`,
          ).to.deep.equal(want.sort((a, b) => a - b));
        }
      }
    });
  }

  it('int8 first stage: a pool stays exact when its sample holds the best keys', () => {
    // 2048 rows, pool 256: the sample is every 4th stored group of four keys,
    // i.e. the rows r with (r mod 512) mod 4 = 0 (each group holds one row of
    // each quarter). Those rows are the nearest, so the sample's threshold
    // lets fewer than 256 rows through.
    const rng = seededRng(53);
    const n = 2048;
    const query = Float32Array.from([127, 127, 127]);
    const rows = Array.from({ length: n }, (_, r) =>
      (r % (n / 4)) % 4 === 0
        ? Float32Array.from([127, 127 - randomInt(rng, 20), 127 - randomInt(rng, 20)])
        : Float32Array.from([127, -127 + randomInt(rng, 100), -127 + randomInt(rng, 100)]),
    );
    const seqs = shuffled(
      rng,
      Array.from({ length: n }, (_, i) => i),
    );
    for (const metric of ['cosine', 'l2'] as const) {
      const kernel = loaded(metric, rows, seqs, 'int8');
      const key = (r: number) =>
        metric === 'cosine' ? Math.fround(dot(query, rows[r]) * inverseNorm(rows[r])) : 2 * dot(query, rows[r]) - dot(rows[r], rows[r]);
      for (const pool of [256, 300]) {
        const got = Array.from(firstStagePool(kernel, query, pool, n)).sort((a, b) => a - b);
        const want = sortedRows(
          Array.from({ length: n }, (_, r) => r),
          key,
          seqs,
        )
          .slice(0, pool)
          .sort((a, b) => a - b);
        expect(got, `${metric} pool=${pool}`).to.deep.equal(want);
      }
    }
  });
});
