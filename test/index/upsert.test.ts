// VectorIndex.upsert: counts, configuration locking and all-or-nothing batches.
import { expect } from 'chai';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { expectApiError } from '../helpers/errors.js';

const newIndex = (maxVectors = 1000) => new VectorIndex(loadKernelModule(), maxVectors);
/** get(id) with its metadata as an object. */
const stored = (index: VectorIndex, id: string) => {
  const vector = index.get(id)!;
  return { ...vector, metadata: vector.metadata.value() };
};

describe('VectorIndex upsert', () => {
  it('counts added and replaced ids, and the replacement is what get returns', () => {
    const index = newIndex();
    expect(
      index.upsert([
        { id: 'a', vector: [1, 2] },
        { id: 'b', vector: [3, 4] },
      ]),
    ).to.deep.equal({ added: 2, replaced: 0 });
    expect(
      index.upsert([
        { id: 'b', vector: [5, 6], metadata: { k: 1 } },
        { id: 'c', vector: [7, 8] },
      ]),
    ).to.deep.equal({ added: 1, replaced: 1 });
    expect(index.size).to.equal(3);
    expect(stored(index, 'b')).to.deep.equal({ id: 'b', vector: [5, 6], metadata: { k: 1 } });
    expect(stored(index, 'a')).to.deep.equal({ id: 'a', vector: [1, 2], metadata: {} });
  });

  it('keeps the last record when one batch repeats an id', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0] },
      { id: 'a', vector: [0, 1], metadata: { last: true } },
    ]);
    expect(index.size).to.equal(1);
    expect(stored(index, 'a')).to.deep.equal({ id: 'a', vector: [0, 1], metadata: { last: true } });
  });

  it('is new until the first add fixes the dimension and cosine metric', () => {
    const index = newIndex();
    expect(index.initialized).to.equal(false);
    expect(index.getConfig()).to.deep.equal({ dimensions: null, metric: null, vectorType: 'float32', analyzer: null, embedding: null });
    expect(index.stats().memoryBytes, 'no memory before the first add').to.equal(0);
    index.upsert([{ id: 'a', vector: [1, 2, 3] }]);
    expect(index.initialized).to.equal(true);
    expect(index.getConfig()).to.deep.equal({ dimensions: 3, metric: 'cosine', vectorType: 'float32', analyzer: null, embedding: null });
    expect(index.stats().memoryBytes).to.be.greaterThan(0);
  });

  it('takes dimensions and metric from the options of the first add', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [0, 0] }], { dimensions: 2, metric: 'l2' });
    expect(index.getConfig()).to.include({ dimensions: 2, metric: 'l2' });
  });

  it('refuses dimensions that disagree with the vector, pointing at the vector', () => {
    const index = newIndex();
    const err = expectApiError(() => index.upsert([{ id: 'a', vector: [1, 2] }], { dimensions: 3 }), 'DIMENSION_MISMATCH');
    expect(err.details).to.deep.equal({ path: '/vectors/0/vector', expected: 3, actual: 2 });
    expect(index.initialized).to.equal(false);
  });

  it('locks the dimension: another length is DIMENSION_MISMATCH', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 2, 3] }]);
    const err = expectApiError(
      () =>
        index.upsert([
          { id: 'b', vector: [1, 2, 3] },
          { id: 'c', vector: [1, 2] },
        ]),
      'DIMENSION_MISMATCH',
    );
    expect(err.details).to.deep.equal({ path: '/vectors/1/vector', expected: 3, actual: 2 });
    const dims = expectApiError(() => index.upsert([{ id: 'b', vector: [1, 2, 3] }], { dimensions: 4 }), 'DIMENSION_MISMATCH');
    expect(dims.details).to.deep.include({ path: '/dimensions', expected: 3, actual: 4 });
    expect(index.size).to.equal(1);
    expect(index.has('b')).to.equal(false);
  });

  it('locks the metric: another metric is METRIC_LOCKED, the same one is fine', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 2] }], { metric: 'l2' });
    const err = expectApiError(() => index.upsert([{ id: 'b', vector: [1, 2] }], { metric: 'cosine' }), 'METRIC_LOCKED');
    expect(err.status).to.equal(409);
    expect(err.details).to.deep.include({ path: '/metric', expected: 'l2', actual: 'cosine' });
    expect(index.upsert([{ id: 'b', vector: [1, 2] }], { metric: 'l2' })).to.deep.equal({ added: 1, replaced: 0 });
  });

  it('refuses a zero vector under cosine (ZERO_VECTOR) and accepts it under l2', () => {
    const cosine = newIndex();
    const err = expectApiError(
      () =>
        cosine.upsert([
          { id: 'a', vector: [1, 1] },
          { id: 'z', vector: [0, 0] },
        ]),
      'ZERO_VECTOR',
    );
    expect(err.details).to.deep.equal({ path: '/vectors/1/vector' });
    expect(cosine.initialized, 'a failed first add leaves the session new').to.equal(false);
    const l2 = newIndex();
    l2.upsert([{ id: 'z', vector: [0, 0] }], { metric: 'l2' });
    expect(l2.get('z')!.vector).to.deep.equal([0, 0]);
  });

  it('stores nothing of a batch past maxVectors; takes replacements when full', () => {
    const index = newIndex(5);
    index.upsert([1, 2, 3, 4].map((i) => ({ id: `v${i}`, vector: [i, 1] })));
    const err = expectApiError(
      () =>
        index.upsert([
          { id: 'v1', vector: [9, 9] },
          { id: 'n1', vector: [1, 1] },
          { id: 'n2', vector: [1, 1] },
        ]),
      'CAPACITY_EXCEEDED',
    );
    expect(err.status).to.equal(409);
    expect(err.details).to.deep.equal({ maxVectors: 5, vectorCount: 4, adding: 2 });
    expect(index.size).to.equal(4);
    expect(index.get('v1')!.vector, 'the replacement in the failed batch was not written').to.deep.equal([1, 1]);
    expect(index.has('n1')).to.equal(false);
    index.upsert([{ id: 'n1', vector: [1, 1] }]);
    expect(
      index.upsert([
        { id: 'v1', vector: [9, 9] },
        { id: 'n1', vector: [2, 2] },
      ]),
    ).to.deep.equal({ added: 0, replaced: 2 });
    expectApiError(() => index.upsert([{ id: 'n2', vector: [1, 1] }]), 'CAPACITY_EXCEEDED');
  });

  it('counts a repeated new id once against the capacity', () => {
    const index = newIndex(2);
    index.upsert([{ id: 'a', vector: [1] }]);
    expect(
      index.upsert([
        { id: 'b', vector: [1] },
        { id: 'b', vector: [2] },
      ]),
    ).to.deep.equal({ added: 1, replaced: 1 });
    expect(index.size).to.equal(2);
  });

  it('refuses an empty batch on a new index', () => {
    expectApiError(() => newIndex().upsert([]), 'VALIDATION_ERROR');
  });

  it('refuses a plan prepared before another change', () => {
    const index = newIndex();
    const plan = index.prepareUpsert([{ id: 'a', vector: [1, 2] }]);
    index.upsert([{ id: 'b', vector: [1, 2] }]);
    expect(() => index.applyUpsert(plan)).to.throw(/changed/);
    expect(index.has('a')).to.equal(false);
  });
});

describe('VectorIndex upsert: batch write details', () => {
  it('keeps the metadata index right when rows go between empty and non-empty metadata', () => {
    const index = newIndex();
    const ids = (hits: { id: string }[]) => hits.map((h) => h.id).sort();
    index.upsert([
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0, 1], metadata: { k: 1 } },
    ]);
    expect(ids(index.search([[1, 0]], { topK: 5, filter: { k: 1 } }).results[0])).to.deep.equal(['b']);
    index.upsert([
      { id: 'a', vector: [1, 0], metadata: { k: 1 } },
      { id: 'b', vector: [0, 1] },
    ]);
    expect(ids(index.search([[1, 0]], { topK: 5, filter: { k: 1 } }).results[0])).to.deep.equal(['a']);
    index.upsert([
      { id: 'a', vector: [1, 1], metadata: {} },
      { id: 'b', vector: [0, 1], metadata: {} },
    ]);
    expect(index.search([[1, 0]], { topK: 5, filter: { k: 1 } }).results[0]).to.deep.equal([]);
    expect(index.getMetadata('a')!.value()).to.deep.equal({});
  });

  it('copies Float32Array vectors: changing one after the add changes nothing', () => {
    const index = newIndex();
    const vector = Float32Array.of(1, 2, 3);
    index.upsert([
      { id: 'a', vector },
      { id: 'b', vector: [4, 5, 6] },
    ]);
    vector.fill(9);
    expect(index.get('a')!.vector).to.deep.equal([1, 2, 3]);
    expect(index.get('b')!.vector).to.deep.equal([4, 5, 6]);
  });
});
