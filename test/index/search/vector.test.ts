// VectorIndex.search: defaults, filters applied before ranking, exact results.
import { expect } from 'chai';
import type { Metric } from '../../../src/config.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { expectApiError } from '../../helpers/errors.js';
import { randomInt, randomVector, seededRng } from '../../helpers/random.js';
import { expectSameTopK, type ReferenceRow } from '../../helpers/reference.js';

const newIndex = (maxVectors = 10_000) => new VectorIndex(loadKernelModule(), maxVectors);

describe('VectorIndex search', () => {
  it('on a new index answers one empty list per query', () => {
    const out = newIndex().search([
      [1, 2],
      [3, 4],
    ]);
    expect(out.results).to.deep.equal([[], []]);
    expect(out.stats).to.include({ metric: null, matched: 0, scanned: 0 });
  });

  it('on a new index still refuses queries of different lengths', () => {
    const err = expectApiError(
      () =>
        newIndex().search([
          [1, 2],
          [3, 4, 5],
        ]),
      'DIMENSION_MISMATCH',
    );
    expect(err.details).to.deep.equal({ path: '/queryVectors/1', expected: 2, actual: 3 });
  });

  it('refuses a query of another length than the session dimension, even when cleared', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 2, 3] }]);
    expectApiError(() => index.search([[1, 2]]), 'DIMENSION_MISMATCH');
    index.clear();
    const err = expectApiError(() => index.search([[1, 2]]), 'DIMENSION_MISMATCH');
    expect(err.details).to.include({ expected: 3, actual: 2 });
  });

  it('refuses a zero query vector under cosine, accepts it under l2', () => {
    const cosine = newIndex();
    cosine.upsert([{ id: 'a', vector: [1, 2] }]);
    expect(
      expectApiError(
        () =>
          cosine.search([
            [1, 1],
            [0, 0],
          ]),
        'ZERO_VECTOR',
      ).details,
    ).to.deep.equal({ path: '/queryVectors/1' });
    const l2 = newIndex();
    l2.upsert([{ id: 'a', vector: [3, 4] }], { metric: 'l2' });
    expect(l2.search([[0, 0]]).results[0]).to.deep.equal([{ id: 'a', score: 5 }]);
  });

  it('defaults: topK 10, candidatePool 100 (raised to topK), no metadata', () => {
    const rng = seededRng(1);
    const index = newIndex();
    index.upsert(Array.from({ length: 30 }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, 4), metadata: { i } })));
    const out = index.search([randomVector(rng, 4)]);
    expect(out.results[0]).to.have.length(10);
    expect(out.stats).to.deep.equal({ exact: true, metric: 'cosine', topK: 10, candidatePool: 100, matched: 30, scanned: 30 });
    for (const hit of out.results[0]) expect(hit).to.have.all.keys('id', 'score');
    const raised = index.search([randomVector(rng, 4)], { topK: 20, candidatePool: 5, includeMetadata: true });
    expect(raised.stats).to.include({ topK: 20, candidatePool: 20 });
    for (const hit of raised.results[0]) expect(hit.metadata!.value()).to.deep.equal({ i: Number(hit.id.slice(1)) });
  });

  it('scores cosine similarity (higher first) and L2 distance (lower first)', () => {
    const cosine = newIndex();
    cosine.upsert([
      { id: 'same', vector: [2, 0] },
      { id: 'diag', vector: [1, 1] },
      { id: 'opposite', vector: [-3, 0] },
      { id: 'orth', vector: [0, 5] },
    ]);
    const c = cosine.search([[1, 0]]).results[0];
    expect(c.map((h) => h.id)).to.deep.equal(['same', 'diag', 'orth', 'opposite']);
    expect(c[0].score).to.be.closeTo(1, 1e-6);
    expect(c[1].score).to.be.closeTo(Math.SQRT1_2, 1e-6);
    expect(c[2].score).to.be.closeTo(0, 1e-6);
    expect(c[3].score).to.be.closeTo(-1, 1e-6);

    const l2 = newIndex();
    l2.upsert(
      [
        { id: 'far', vector: [6, 8] },
        { id: 'near', vector: [0, 1] },
        { id: 'mid', vector: [3, 4] },
      ],
      { metric: 'l2' },
    );
    const l = l2.search([[0, 0]]).results[0];
    expect(l).to.deep.equal([
      { id: 'near', score: 1 },
      { id: 'mid', score: 5 },
      { id: 'far', score: 10 },
    ]);
  });

  it('breaks ties by insertion order; a replacement counts as inserted then', () => {
    const index = newIndex();
    index.upsert(['a', 'b', 'c', 'd'].map((id) => ({ id, vector: [1, 1] })));
    index.delete(['a']); // d moves into a's row; order must not change
    expect(index.search([[1, 1]]).results[0].map((h) => h.id)).to.deep.equal(['b', 'c', 'd']);
    index.upsert([{ id: 'b', vector: [1, 1] }]);
    expect(index.search([[1, 1]]).results[0].map((h) => h.id)).to.deep.equal(['c', 'd', 'b']);
  });

  for (const metric of ['cosine', 'l2'] as Metric[]) {
    it(`${metric}: a filtered search returns min(topK, matching) exact results`, () => {
      const rng = seededRng(metric === 'cosine' ? 7 : 8);
      const index = newIndex();
      const colors = ['red', 'green', 'blue'];
      const rows: (ReferenceRow & { metadata: Record<string, unknown> })[] = [];
      for (let i = 0; i < 300; i++) {
        const vector = randomVector(rng, 16);
        const metadata = { color: colors[randomInt(rng, 3)], tags: i % 10 === 0 ? ['rare', 'x'] : ['x'], n: i % 7 };
        index.upsert([{ id: `v${i}`, vector, metadata }], { metric });
        rows.push({ id: `v${i}`, vector, seq: i, metadata });
      }
      const cases: [Record<string, unknown>, number][] = [
        [{ color: 'red' }, 10],
        [{ tags: 'rare' }, 50], // 30 match: fewer than topK
        [{ color: 'blue', n: 3 }, 100],
        [{ color: 'purple' }, 10],
      ];
      for (const [filter, topK] of cases) {
        const matching = rows.filter((r) =>
          Object.entries(filter).every(([k, v]) => {
            const field = r.metadata[k];
            return Array.isArray(field) ? field.includes(v) : field === v;
          }),
        );
        const query = randomVector(rng, 16);
        const out = index.search([query], { filter, topK, includeMetadata: true });
        expect(out.stats.matched).to.equal(matching.length);
        expect(out.results[0]).to.have.length(Math.min(topK, matching.length));
        expectSameTopK(metric, out.results[0], query, matching, topK, JSON.stringify(filter));
        for (const hit of out.results[0]) expect(matching.some((r) => r.id === hit.id && JSON.stringify(r.metadata) === hit.metadata!.json)).to.equal(true);
      }
    });
  }
});
