// The single-query scan scores four rows per step (one from each quarter of
// the rows) and the last count % 4 rows in one padded step; its inner loop
// takes 16, then 8, then 4 floats per step, then a scalar tail. These tests
// walk every such case: 1..9 rows (every 4-row tail), dimensions that hit
// each step (1, 3, 4, 8, 12, 17, 28, 384), with and without a row list,
// k above and below the row count, all three metrics.
import { expect } from 'chai';
import type { Metric } from '../../src/config.js';
import { RawKernel } from '../../bench/lib/raw-kernel.js';
import { randomInt, randomVector, randomVectors, seededRng, shuffled, type Rng } from '../helpers/random.js';
import { expectSameTopK } from '../helpers/reference.js';
import { KernelModel } from './model.js';

const METRICS: Metric[] = ['cosine', 'l2'];
const DIMENSIONS = [1, 3, 4, 8, 12, 17, 28, 384];
const ROW_COUNTS = [1, 2, 3, 4, 5, 6, 7, 8, 9];

/** A row list: a shuffled subset (some rows left out) or every row in shuffled order. */
function rowListOf(rng: Rng, rows: number, all: boolean): number[] {
  const list = shuffled(
    rng,
    Array.from({ length: rows }, (_, r) => r),
  );
  return all ? list : list.slice(0, Math.max(1, rows - 1 - randomInt(rng, rows)));
}

describe('kernel single-query scan: 4-row steps and their tails', () => {
  for (const metric of METRICS) {
    for (const dim of DIMENSIONS) {
      it(`${metric}, ${dim} dims, 1..9 rows: top-K equals the reference for any k`, () => {
        const rng = seededRng(dim * 31 + (metric === 'l2' ? 7 : 0));
        for (const rows of ROW_COUNTS) {
          const model = new KernelModel(dim, metric);
          for (const v of randomVectors(rng, rows, dim)) model.add(v);
          for (const k of [1, 3, rows, rows + 4]) {
            const query = randomVector(rng, dim);
            const [all] = model.search([query], k);
            expectSameTopK(metric, all, query, model.rows, k, `rows=${rows} k=${k}`);
            for (const whole of [false, true]) {
              const list = rowListOf(rng, rows, whole);
              const [filtered] = model.search([query], k, list);
              expectSameTopK(
                metric,
                filtered,
                query,
                list.map((r) => model.rows[r]),
                k,
                `rows=${rows} k=${k} list=${list}`,
              );
            }
          }
        }
      });
    }
  }

  it("dot (the benchmarks' baseline metric): rows and keys equal a float64 dot product, 1..9 rows, with and without a row list", () => {
    const rng = seededRng(4242);
    for (const dim of DIMENSIONS) {
      for (const rows of ROW_COUNTS) {
        const data = Float32Array.from(randomVectors(rng, rows, dim).flat());
        const kernel = new RawKernel(data, dim);
        const query = Float32Array.from(randomVector(rng, dim));
        const dot = (r: number) => data.subarray(r * dim, (r + 1) * dim).reduce((s, x, d) => s + x * query[d], 0);
        for (const list of [null, rowListOf(rng, rows, false)]) {
          for (const k of [2, rows + 3]) {
            const candidates = list ?? Array.from({ length: rows }, (_, r) => r);
            const expected = candidates
              .map((r) => ({ r, key: dot(r) }))
              .sort((a, b) => b.key - a.key || a.r - b.r)
              .slice(0, k);
            const got = kernel.searchWithKeys(query, 1, k, 'dot', list && Int32Array.from(list));
            const label = `dim=${dim} rows=${rows} k=${k} list=${list}`;
            expect(Array.from(got.rows), label).to.deep.equal(expected.map((e) => e.r));
            got.keys.forEach((key, i) => {
              expect(key, label).to.be.closeTo(expected[i].key, 1e-5 * Math.max(1, Math.abs(expected[i].key)));
            });
          }
        }
      }
    }
  });
});

describe('kernel single-query scan: selection through a 2k buffer', () => {
  for (const metric of METRICS) {
    // Each query's 2k buffer runs into the next one's slots; also after query tiles.
    it(`${metric}: any k up to past the row count, several queries in one call`, () => {
      const rng = seededRng(metric === 'l2' ? 501 : 502);
      const dim = 9;
      const model = new KernelModel(dim, metric);
      for (const v of randomVectors(rng, 403, dim)) model.add(v);
      for (const k of [1, 2, 7, 100, 201, 202, 403, 500]) {
        for (const nq of [1, 3, 5, 7]) {
          // 5 = a tile of 4 + 1 single; 7 = a tile of 4 + 3 singles
          const queries = randomVectors(rng, nq, dim);
          model.search(queries, k).forEach((list, j) => {
            expectSameTopK(metric, list, queries[j], model.rows, k, `k=${k} nq=${nq} q=${j}`);
          });
        }
      }
    });

    it(`${metric}: a crowd of equal rows cut by k keeps the earliest insertions`, () => {
      const rng = seededRng(metric === 'l2' ? 503 : 504);
      const dim = 5;
      const model = new KernelModel(dim, metric);
      const twin = randomVector(rng, dim);
      const twinIds: string[] = [];
      for (let r = 0; r < 600; r++) {
        if (r % 2 === 0) twinIds.push(model.add(twin));
        else model.add(randomVector(rng, dim).map((x) => x * 0.01 - 3));
      }
      for (let i = 0; i < 40; i++) model.delete(randomInt(rng, model.rows.length)); // scramble rows against insertion order
      const alive = new Set(model.rows.map((r) => r.id));
      const twinsLeft = twinIds.filter((id) => alive.has(id));
      for (const k of [1, 3, 64, 150, twinsLeft.length]) {
        expect(
          model.search([twin], k)[0].map((h) => h.id),
          `k=${k}`,
        ).to.deep.equal(twinsLeft.slice(0, k));
      }
    });
  }
});

describe('kernel single-query scan: ties', () => {
  for (const metric of METRICS) {
    it(`${metric}: copies of one vector in any lane score equally, insertion order`, () => {
      const rng = seededRng(metric === 'l2' ? 77 : 78);
      for (const dim of [3, 17, 384]) {
        for (const rows of [5, 9, 23, 42]) {
          const model = new KernelModel(dim, metric);
          const twin = randomVector(rng, dim);
          const twinIds: string[] = [];
          for (let r = 0; r < rows; r++) {
            if (r % 3 === 1 || r === rows - 1) twinIds.push(model.add(twin));
            else model.add(randomVector(rng, dim).map((x) => x * 0.01 - 2)); // far from the twin
          }
          // Swap-remove moves later twins into earlier rows, so row order and insertion order differ.
          model.delete(0);
          if (!twinIds.includes(model.rows[0].id)) model.delete(0);
          for (const k of [1, 2, twinIds.length]) {
            const [hits] = model.search([twin], k);
            const label = `dim=${dim} rows=${rows} k=${k}`;
            expect(
              hits.map((h) => h.id),
              label,
            ).to.deep.equal(twinIds.slice(0, k));
            expect(new Set(hits.map((h) => h.score)).size, `${label}: equal scores`).to.equal(1);
            const list = shuffled(
              rng,
              model.rows.map((_, r) => r),
            );
            expect(
              model.search([twin], k, list)[0].map((h) => h.id),
              `${label} row list`,
            ).to.deep.equal(twinIds.slice(0, k));
          }
        }
      }
    });
  }

  it('a query alone and inside a tile rank a larger index alike', () => {
    const rng = seededRng(9);
    for (const metric of METRICS) {
      const model = new KernelModel(33, metric);
      for (const v of randomVectors(rng, 1003, 33)) model.add(v);
      const queries = randomVectors(rng, 7, 33);
      const block = model.search(queries, 10);
      queries.forEach((q, j) => {
        const [alone] = model.search([q], 10);
        expectSameTopK(metric, alone, q, model.rows, 10, `single q=${j}`);
        expect(
          alone.map((h) => h.id),
          `q=${j}`,
        ).to.deep.equal(block[j].map((h) => h.id));
      });
    }
  });
});
