// VectorIndex with vectorType int8: exact reads, locked like the metric,
// exact scores from the float32 re-ranking, stats that say so.
import { expect } from 'chai';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { expectApiError } from '../helpers/errors.js';
import { randomVector, seededRng } from '../helpers/random.js';

const newIndex = () => new VectorIndex(loadKernelModule(), 5000);

describe('VectorIndex int8 storage', () => {
  const rng = seededRng(31);
  const records = Array.from({ length: 400 }, (_, i) => ({
    id: `v${i}`,
    vector: randomVector(rng, 16),
    metadata: { even: i % 2 === 0 },
  }));

  it('is chosen by the first add and reported in the config', () => {
    const index = newIndex();
    index.upsert(records.slice(0, 2), { vectorType: 'int8' });
    expect(index.getConfig()).to.deep.include({ vectorType: 'int8', dimensions: 16 });
  });

  it('reads vectors back exactly (the float32 originals are kept)', () => {
    const index = newIndex();
    index.upsert(records, { vectorType: 'int8' });
    const float = newIndex();
    float.upsert(records);
    expect(index.get('v7')).to.deep.equal(float.get('v7'));
  });

  it('is locked once initialized (VECTOR_TYPE_LOCKED); reset frees it', () => {
    const index = newIndex();
    index.upsert(records.slice(0, 2), { vectorType: 'int8' });
    const err = expectApiError(() => index.upsert(records.slice(2, 3), { vectorType: 'float32' }), 'VECTOR_TYPE_LOCKED');
    expect(err.status).to.equal(409);
    expect(err.details).to.deep.equal({ path: '/vectorType', expected: 'int8', actual: 'float32' });
    index.upsert(records.slice(2, 3), { vectorType: 'int8' });
    index.upsert(records.slice(3, 4));
    index.clear();
    expectApiError(() => index.upsert(records.slice(0, 1), { vectorType: 'float32' }), 'VECTOR_TYPE_LOCKED');
    index.reset();
    index.upsert(records.slice(0, 1), { vectorType: 'float32' });
    expect(index.getConfig().vectorType).to.equal('float32');
  });

  for (const metric of ['cosine', 'l2'] as const) {
    it(`${metric}: a pool covering every match equals the float32 results`, () => {
      const int8 = newIndex();
      const float = newIndex();
      int8.upsert(records, { vectorType: 'int8', metric });
      float.upsert(records, { metric });
      int8.delete(['v3', 'v10', 'v399']);
      float.delete(['v3', 'v10', 'v399']);
      const queries = [randomVector(rng, 16), randomVector(rng, 16)];
      for (const filter of [undefined, { even: true }]) {
        const a = int8.search(queries, { topK: 10, candidatePool: 2048, filter });
        const b = float.search(queries, { topK: 10, candidatePool: 2048, filter });
        expect(a.results).to.deep.equal(b.results);
        expect(a.stats).to.deep.include({ exact: false, matched: b.stats.matched, candidatePool: 2048 });
        expect(b.stats.exact).to.equal(true);
      }
    });
  }

  it('raises a candidatePool below topK to topK', () => {
    const index = newIndex();
    index.upsert(records, { vectorType: 'int8' });
    const out = index.search([randomVector(rng, 16)], { topK: 20, candidatePool: 5 });
    expect(out.results[0]).to.have.length(20);
    expect(out.stats.candidatePool).to.equal(20);
  });
});
