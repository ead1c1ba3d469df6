// VectorIndex delete, clear and reset.
import { expect } from 'chai';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomInt, randomVector, seededRng } from '../helpers/random.js';

const newIndex = (maxVectors = 10_000) => new VectorIndex(loadKernelModule(), maxVectors);

describe('VectorIndex delete', () => {
  it("keeps other ids' vectors and metadata through random deletes and adds", () => {
    const rng = seededRng(42);
    const index = newIndex();
    const model = new Map<string, { vector: number[]; metadata: Record<string, unknown> }>();
    const put = (id: string) => {
      const record = { vector: randomVector(rng, 6).map(Math.fround), metadata: { id, n: randomInt(rng, 100) } };
      index.upsert([{ id, ...record }]);
      model.set(id, record);
    };
    for (let i = 0; i < 200; i++) put(`id${i}`);
    for (let step = 0; step < 400; step++) {
      const ids = [...model.keys()];
      const action = randomInt(rng, 3);
      if (action === 0 && ids.length > 0) {
        const id = ids[randomInt(rng, ids.length)];
        expect(index.delete([id])).to.deep.equal({ deleted: 1, notFound: [] });
        model.delete(id);
      } else if (action === 1 && ids.length > 0) {
        put(ids[randomInt(rng, ids.length)]);
      } else {
        put(`new${step}`);
      }
    }
    expect(index.size).to.equal(model.size);
    for (const [id, record] of model) {
      const stored = index.get(id)!;
      expect(stored.vector.map(Math.fround), id).to.deep.equal(record.vector);
      expect(stored.metadata.value(), id).to.deep.equal(record.metadata);
    }
  });

  it('deleting a missing id deletes nothing and reports it once', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 2] },
      { id: 'b', vector: [2, 1] },
    ]);
    expect(index.delete(['x'])).to.deep.equal({ deleted: 0, notFound: ['x'] });
    expect(index.delete(['a', 'x', 'a', 'x'])).to.deep.equal({ deleted: 1, notFound: ['x'] });
    expect(index.size).to.equal(1);
    expect(index.has('b')).to.equal(true);
  });

  it('deletes on a new index report every id as not found', () => {
    expect(newIndex().delete(['a', 'b'])).to.deep.equal({ deleted: 0, notFound: ['a', 'b'] });
  });

  it('deleting the last row and re-adding it works', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 2] },
      { id: 'b', vector: [2, 1] },
    ]);
    index.delete(['b']);
    index.upsert([{ id: 'b', vector: [3, 3] }]);
    expect(index.get('b')!.vector).to.deep.equal([3, 3]);
    expect(index.get('a')!.vector).to.deep.equal([1, 2]);
  });
});

describe('VectorIndex clear and reset', () => {
  it('clear removes every vector and keeps dimension and metric', () => {
    const index = newIndex();
    index.upsert(
      [
        { id: 'a', vector: [1, 2, 3] },
        { id: 'b', vector: [3, 2, 1] },
      ],
      { metric: 'l2' },
    );
    expect(index.clear()).to.equal(2);
    expect(index.size).to.equal(0);
    expect(index.has('a')).to.equal(false);
    expect(index.initialized).to.equal(true);
    expect(index.getConfig()).to.include({ dimensions: 3, metric: 'l2' });
    expect(index.search([[1, 2, 3]]).results).to.deep.equal([[]]);
    expect(() => index.upsert([{ id: 'a', vector: [1, 2] }])).to.throw(/3/);
    expect(index.upsert([{ id: 'a', vector: [1, 2, 3] }])).to.deep.equal({ added: 1, replaced: 0 });
  });

  it('reset removes the vectors, the configuration and the memory', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 2, 3] }], { metric: 'l2' });
    expect(index.reset()).to.equal(1);
    expect(index.initialized).to.equal(false);
    expect(index.getConfig()).to.deep.equal({ dimensions: null, metric: null, vectorType: 'float32', analyzer: null, embedding: null });
    expect(index.stats().memoryBytes).to.equal(0);
    index.upsert([{ id: 'a', vector: [1, 2] }], { metric: 'cosine' });
    expect(index.getConfig()).to.include({ dimensions: 2, metric: 'cosine' });
  });
});
