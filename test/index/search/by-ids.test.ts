// VectorIndex search with scoreThreshold, and searchByIds (a stored vector as
// the query, left out of its own results), against the plain reference.
import { expect } from 'chai';
import type { Metric, VectorType } from '../../../src/config.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { expectApiError } from '../../helpers/errors.js';
import { randomInt, randomVector, seededRng } from '../../helpers/random.js';
import { expectSameTopK, nearer, referenceRanking, type ReferenceRow } from '../../helpers/reference.js';

const newIndex = (maxVectors = 10_000) => new VectorIndex(loadKernelModule(), maxVectors);

function filled(metric: Metric, vectorType: VectorType, seed: number, count = 300, dim = 8) {
  const rng = seededRng(seed);
  const index = newIndex();
  const rows: (ReferenceRow & { k: number })[] = [];
  const records = Array.from({ length: count }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, dim), metadata: { k: i % 4 } }));
  index.upsert(records, { metric, vectorType });
  records.forEach((r, i) => {
    rows.push({ id: r.id, vector: r.vector, seq: i, k: i % 4 });
  });
  return { index, rows, rng, dim };
}

describe('VectorIndex scoreThreshold and searchByIds', () => {
  for (const metric of ['cosine', 'l2'] as const) {
    for (const vectorType of ['float32', 'int8'] as const) {
      it(`keeps exactly the top-K not worse than the threshold (${metric}, ${vectorType}, filtered too)`, () => {
        const { index, rows, rng, dim } = filled(metric, vectorType, metric === 'l2' ? 3 : 4);
        for (let q = 0; q < 20; q++) {
          const query = randomVector(rng, dim);
          const filter = q % 2 ? { k: { $in: [1, 2] } } : undefined;
          const pool = filter ? rows.filter((r) => r.k === 1 || r.k === 2) : rows;
          const ranking = referenceRanking(metric, query, pool);
          // A threshold between two reference scores, so float32 rounding cannot put a score on its other side.
          const at = 3 + randomInt(rng, 10);
          const threshold = (ranking[at].score + ranking[at + 1].score) / 2;
          const kept = ranking.filter((r) => !nearer(metric, threshold, r.score));
          const out = index.search([query], { topK: 10, filter, scoreThreshold: threshold, candidatePool: 2048 });
          const keptIds = new Set(kept.map((r) => r.id));
          expectSameTopK(
            metric,
            out.results[0],
            query,
            pool.filter((r) => keptIds.has(r.id)),
            10,
          );
          for (const hit of out.results[0]) expect(nearer(metric, threshold, hit.score)).to.equal(false);
        }
      });
    }
  }

  it('keeps a result whose score equals the threshold and may return no results', () => {
    const cosine = newIndex();
    cosine.upsert([
      { id: 'same', vector: [1, 0] },
      { id: 'orth', vector: [0, 1] },
    ]);
    expect(cosine.search([[1, 0]], { scoreThreshold: 0 }).results[0].map((h) => h.id)).to.deep.equal(['same', 'orth']);
    expect(cosine.search([[1, 0]], { scoreThreshold: 0.5 }).results[0].map((h) => h.id)).to.deep.equal(['same']);
    expect(cosine.search([[-1, 0]], { scoreThreshold: 0.5 }).results[0]).to.deep.equal([]);
    const l2 = newIndex();
    l2.upsert(
      [
        { id: 'a', vector: [3, 4] },
        { id: 'b', vector: [6, 8] },
      ],
      { metric: 'l2' },
    );
    expect(l2.search([[0, 0]], { scoreThreshold: 5 }).results[0]).to.deep.equal([{ id: 'a', score: 5 }]);
  });

  for (const metric of ['cosine', 'l2'] as const) {
    it(`searchByIds ranks the others by the stored vector, leaving the id itself out (${metric})`, () => {
      const { index, rows, rng } = filled(metric, 'float32', 11, 200);
      for (let q = 0; q < 10; q++) {
        const ids = [`v${randomInt(rng, 200)}`, `v${randomInt(rng, 200)}`];
        const out = index.searchByIds(ids, { topK: 7 });
        expect(out.stats.topK).to.equal(7);
        ids.forEach((id, j) => {
          const self = rows.find((r) => r.id === id)!;
          expectSameTopK(
            metric,
            out.results[j],
            self.vector,
            rows.filter((r) => r.id !== id),
            7,
            id,
          );
        });
      }
    });
  }

  it("searchByIds drops the query's own id even when ties put it past topK, and honours filters and thresholds", () => {
    const index = newIndex();
    // Three copies of one vector: the query 'c' ties with 'a' and 'b', written before it.
    index.upsert([
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [1, 0] },
      { id: 'c', vector: [1, 0] },
      { id: 'd', vector: [1, 1], metadata: { k: 1 } },
    ]);
    expect(index.searchByIds(['c'], { topK: 2 }).results[0].map((h) => h.id)).to.deep.equal(['a', 'b']);
    expect(index.searchByIds(['a'], { topK: 2 }).results[0].map((h) => h.id)).to.deep.equal(['b', 'c']);
    expect(index.searchByIds(['a'], { topK: 5, filter: { k: 1 } }).results[0].map((h) => h.id)).to.deep.equal(['d']);
    expect(index.searchByIds(['a'], { topK: 5, scoreThreshold: 0.99 }).results[0].map((h) => h.id)).to.deep.equal(['b', 'c']);
  });

  it('searchByIds answers VECTOR_NOT_FOUND with the pointer of the first missing id', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0] }]);
    expect(expectApiError(() => index.searchByIds(['a', 'zz']), 'VECTOR_NOT_FOUND').details).to.deep.equal({ path: '/queryIds/1', id: 'zz' });
    expect(expectApiError(() => newIndex().searchByIds(['a']), 'VECTOR_NOT_FOUND').details).to.deep.equal({ path: '/queryIds/0', id: 'a' });
  });
});
