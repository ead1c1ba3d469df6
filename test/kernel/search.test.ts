// The WASM scan and top-K against the float64 reference on random data.
import { expect } from 'chai';
import type { Metric } from '../../src/config.js';
import { randomInt, randomVector, randomVectors, seededRng, shuffled } from '../helpers/random.js';
import { expectSameTopK } from '../helpers/reference.js';
import { sampled } from '../helpers/scale.js';
import { KernelModel } from './model.js';

const METRICS: Metric[] = ['cosine', 'l2'];
const DIMENSIONS = [1, 3, 17, 128, 1024];

describe('kernel search against the reference', function () {
  // Randomized against a plain reference: tens of seconds on a loaded 2-core machine.
  this.timeout(180_000);
  for (const metric of METRICS) {
    for (const dim of DIMENSIONS) {
      // 1..13, 16, 17 and 21 queries: tiles of 4, up to 16 a pass, then nq % 4 singly; across deletes and replacements.
      it(`${metric}, ${dim} dims: top-K of 1 to 21 queries equals the reference`, () => {
        const rng = seededRng(dim * 7919 + (metric === 'l2' ? 1 : 0));
        const model = new KernelModel(dim, metric);
        const rowCount = dim >= 1024 ? 120 : 300;
        for (const v of randomVectors(rng, rowCount, dim)) model.add(v);

        const check = (phase: string) => {
          for (const nq of sampled([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 21])) {
            const queries = randomVectors(rng, nq, dim);
            const k = 1 + randomInt(rng, 20);
            const results = model.search(queries, k);
            expect(results).to.have.length(nq);
            results.forEach((list, j) => {
              expectSameTopK(metric, list, queries[j], model.rows, k, `${phase} nq=${nq} q=${j}`);
            });
          }
        };

        check('after adds');
        for (let i = 0; i < rowCount / 5; i++) model.delete(randomInt(rng, model.rows.length));
        check('after deletes');
        for (let i = 0; i < rowCount / 5; i++) model.replace(randomInt(rng, model.rows.length), randomVector(rng, dim));
        for (const v of randomVectors(rng, rowCount / 10, dim)) model.add(v);
        check('after replacements and more adds');
        // Every stored row still holds exactly what was written to it.
        model.rows.forEach((row, r) => {
          expect(Array.from(model.kernel.readRow(r))).to.deep.equal(Array.from(row.vector));
        });
      });
    }
  }

  it('returns min(k, count) results when k exceeds the stored rows', () => {
    for (const metric of METRICS) {
      const rng = seededRng(11);
      const model = new KernelModel(5, metric);
      for (const v of randomVectors(rng, 7, 5)) model.add(v);
      const queries = randomVectors(rng, 9, 5);
      const results = model.search(queries, 50);
      results.forEach((list, j) => {
        expect(list).to.have.length(7);
        expectSameTopK(metric, list, queries[j], model.rows, 50);
      });
    }
  });

  it('finds an exact copy of the query first, with cosine 1 or distance 0', () => {
    const rng = seededRng(5);
    for (const metric of METRICS) {
      const model = new KernelModel(33, metric);
      const vectors = randomVectors(rng, 100, 33);
      const ids = vectors.map((v) => model.add(v));
      const [hit] = model.search([vectors[42]], 1)[0];
      expect(hit.id).to.equal(ids[42]);
      if (metric === 'cosine') expect(hit.score).to.be.closeTo(1, 1e-6);
      else expect(hit.score).to.equal(0);
    }
  });

  it('answers nothing for an empty index or k rows of nothing', () => {
    const model = new KernelModel(4, 'cosine');
    expect(model.search([[1, 2, 3, 4]], 10)).to.deep.equal([[]]);
    model.add([1, 0, 0, 0]);
    expect(
      model.search(
        [
          [1, 2, 3, 4],
          [0, 1, 0, 0],
        ],
        10,
        [],
      ),
    ).to.deep.equal([[], []]);
  });
});

describe('kernel ties', () => {
  for (const metric of METRICS) {
    it(`${metric}: equal scores come back in insertion order, in tiles and singly`, () => {
      const rng = seededRng(99);
      const dim = 19;
      const model = new KernelModel(dim, metric);
      const twin = randomVector(rng, dim);
      const twinIds: string[] = [];
      for (let i = 0; i < 40; i++) {
        if (i % 4 === 1) twinIds.push(model.add(twin));
        else model.add(randomVector(rng, dim).map((x) => x * 0.01)); // far from the twin
      }
      // Delete non-twin rows from the front so twins are moved into earlier slots.
      for (let r = 0; r < 8; r++) {
        if (!twinIds.includes(model.rows[r].id)) model.delete(r);
      }
      const results = model.search(
        Array.from({ length: 11 }, () => twin),
        twinIds.length,
      );
      for (const list of results) expect(list.map((h) => h.id)).to.deep.equal(twinIds);
    });
  }

  it('a replaced row counts as written last among equal scores', () => {
    const model = new KernelModel(3, 'l2');
    const a = model.add([1, 1, 1]);
    const b = model.add([1, 1, 1]);
    const c = model.add([1, 1, 1]);
    model.replace(0, [1, 1, 1]);
    expect(model.search([[1, 1, 1]], 3)[0].map((h) => h.id)).to.deep.equal([b, c, a]);
  });
});

describe('kernel filtered row lists', () => {
  for (const metric of METRICS) {
    for (const dim of [3, 17, 128]) {
      it(`${metric}, ${dim} dims: a row list search equals the reference on those rows`, () => {
        const rng = seededRng(dim + 1000);
        const model = new KernelModel(dim, metric);
        for (const v of randomVectors(rng, 200, dim)) model.add(v);
        for (let i = 0; i < 30; i++) model.delete(randomInt(rng, model.rows.length));
        for (const size of [1, 5, 37, model.rows.length]) {
          const rowList = shuffled(
            rng,
            model.rows.map((_, r) => r),
          ).slice(0, size);
          const subset = rowList.map((r) => model.rows[r]);
          for (const nq of [1, 4, 6, 9]) {
            const queries = randomVectors(rng, nq, dim);
            const k = 10;
            model.search(queries, k, rowList).forEach((list, j) => {
              expect(list).to.have.length(Math.min(k, size));
              expectSameTopK(metric, list, queries[j], subset, k, `size=${size} nq=${nq}`);
            });
          }
        }
      });
    }
  }
});

describe('kernel cosine scale', () => {
  it('scores do not depend on the scale of the components, from 1e-30 to 1e15', () => {
    const rng = seededRng(31);
    const base = randomVectors(rng, 50, 12);
    const queries = randomVectors(rng, 5, 12);
    for (const scale of [1e-30, 1e-25, 1e-20, 1e-10, 1, 1e10, 1e15]) {
      const model = new KernelModel(12, 'cosine');
      for (const v of base) model.add(v.map((x) => x * scale));
      const scaledQueries = queries.map((q) => q.map((x) => x * scale));
      model.search(scaledQueries, 10).forEach((list, j) => {
        expectSameTopK('cosine', list, scaledQueries[j], model.rows, 10, `scale ${scale}`);
      });
    }
  });
});

describe('kernel query tiles against single queries', () => {
  for (const metric of METRICS) {
    // Tiles of 4 queries x 2 rows, 16 queries a pass, then singles; every dim % 8, odd and even row counts, row lists.
    it(`${metric}: each query of a search-many gets the ids and scores it gets alone`, () => {
      const rng = seededRng(metric === 'l2' ? 611 : 612);
      for (const dim of [1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 33, 100, 384]) {
        const model = new KernelModel(dim, metric);
        for (const v of randomVectors(rng, 157, dim)) model.add(v);
        const shuffledRows = shuffled(
          rng,
          model.rows.map((_, r) => r),
        );
        for (const rowList of [null, shuffledRows.slice(0, 61), shuffledRows.slice(0, 60)]) {
          for (const nq of [4, 6, 11, 16, 37]) {
            const queries = randomVectors(rng, nq, dim);
            const many = model.search(queries, 9, rowList);
            queries.forEach((q, j) => {
              // Scores compared with ===, not within a tolerance: the tile's sums are the single scan's, in its order.
              expect(many[j], `dim=${dim} nq=${nq} q=${j} list=${rowList !== null}`).to.deep.equal(model.search([q], 9, rowList)[0]);
            });
          }
        }
      }
    });
  }
});
