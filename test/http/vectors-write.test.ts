// POST /vectors/add, /vectors/add-many, /vectors/delete, /vectors/delete-many, /vectors/clear; batch atomicity.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionOf, sessionWith, snapshot } from './fixtures.js';

describe('POST /vectors/add', () => {
  const api = useServer();

  it('adds one vector and reports the id and the mutation', async () => {
    const token = await api.token();
    const body = expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2], metadata: { k: 'v' } } }));
    expect(body).to.deep.include({ id: 'a', mutation: { added: 1, replaced: 0 } });
    expect(body.session.vectorCount).to.equal(1);
  });

  it('replaces a vector with the same id, vector and metadata both', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 2], metadata: { old: true } }]);
    const body = expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [3, 4] } }));
    expect(body.mutation).to.deep.equal({ added: 0, replaced: 1 });
    expect(body.session.vectorCount).to.equal(1);
    expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'a' } })).vector).to.deep.equal({ id: 'a', vector: [3, 4], metadata: {} });
  });

  it('accepts vectorType float32 and the dimension limit of 1024', async () => {
    const token = await api.token();
    const body = expectOk(
      await api.post('/vectors/add', { token, body: { id: 'a', vector: new Array(1024).fill(0.5), dimensions: 1024, vectorType: 'float32' } }),
    );
    expect(body.session.config.dimensions).to.equal(1024);
  });
});

describe('POST /vectors/add-many', () => {
  const api = useServer({ maxVectorsPerSession: 5 });

  it('adds and replaces in one call, reporting both counts', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 0] }]);
    const body = expectOk(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'a', vector: [0, 1] },
            { id: 'b', vector: [1, 1], metadata: { m: 1 } },
          ],
        },
      }),
    );
    expect(body.mutation).to.deep.equal({ added: 1, replaced: 1 });
    expect(body.session.vectorCount).to.equal(2);
  });

  it('stores nothing of a batch with one bad vector (dimension, zero vector, schema)', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 0], metadata: { keep: true } }]);
    const before = await snapshot(api, token, ['a', 'b', 'c']);
    const good = { id: 'b', vector: [1, 1] };
    const replaceA = { id: 'a', vector: [5, 5], metadata: { keep: false } };
    const err = expectError(
      await api.post('/vectors/add-many', { token, body: { vectors: [replaceA, good, { id: 'c', vector: [1, 2, 3] }] } }),
      400,
      'DIMENSION_MISMATCH',
    );
    expect(err.details).to.deep.equal({ path: '/vectors/2/vector', expected: 2, actual: 3 });
    expectError(await api.post('/vectors/add-many', { token, body: { vectors: [replaceA, good, { id: 'c', vector: [0, 0] }] } }), 400, 'ZERO_VECTOR');
    expectError(await api.post('/vectors/add-many', { token, body: { vectors: [replaceA, good, { id: '', vector: [1, 1] }] } }), 400, 'VALIDATION_ERROR');
    expectError(await api.post('/vectors/add-many', { token, body: { vectors: [replaceA, good], metric: 'l2' } }), 409, 'METRIC_LOCKED');
    expect(await snapshot(api, token, ['a', 'b', 'c'])).to.deep.equal(before);
  });

  it('stores nothing of a batch that would exceed maxVectors (409 CAPACITY_EXCEEDED)', async () => {
    const token = await sessionWith(
      api,
      [1, 2, 3, 4].map((i) => ({ id: `v${i}`, vector: [i, 1] })),
    );
    const before = await snapshot(api, token, ['v1', 'n1', 'n2']);
    const err = expectError(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'v1', vector: [9, 9] },
            { id: 'n1', vector: [1, 1] },
            { id: 'n2', vector: [1, 1] },
          ],
        },
      }),
      409,
      'CAPACITY_EXCEEDED',
    );
    expect(err.details).to.deep.include({ maxVectors: 5, vectorCount: 4, adding: 2 });
    expect(await snapshot(api, token, ['v1', 'n1', 'n2'])).to.deep.equal(before);
    // Exactly filling the index is fine, and replacing when full is fine.
    expect(
      expectOk(
        await api.post('/vectors/add-many', {
          token,
          body: {
            vectors: [
              { id: 'v1', vector: [9, 9] },
              { id: 'n1', vector: [1, 1] },
            ],
          },
        }),
      ).session.vectorCount,
    ).to.equal(5);
    expectOk(await api.post('/vectors/add', { token, body: { id: 'n1', vector: [2, 2] } }));
    expectError(await api.post('/vectors/add', { token, body: { id: 'n2', vector: [2, 2] } }), 409, 'CAPACITY_EXCEEDED');
  });

  it('a failing first add-many leaves the session new', async () => {
    const token = await api.token();
    expectError(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'a', vector: [1, 1] },
            { id: 'b', vector: [1] },
          ],
        },
      }),
      400,
      'DIMENSION_MISMATCH',
    );
    expect((await sessionOf(api, token)).initialized).to.equal(false);
  });
});

describe('POST /vectors/delete and /vectors/delete-many', () => {
  const api = useServer();

  it('delete removes one vector and the others keep their data', async () => {
    const token = await sessionWith(api, [
      { id: 'a', vector: [1, 0], metadata: { n: 'a' } },
      { id: 'b', vector: [0, 1], metadata: { n: 'b' } },
      { id: 'c', vector: [1, 1], metadata: { n: 'c' } },
    ]);
    const body = expectOk(await api.post('/vectors/delete', { token, body: { id: 'a' } }));
    expect(body).to.deep.include({ id: 'a', mutation: { deleted: 1, notFound: [] } });
    expect(body.session.vectorCount).to.equal(2);
    const many = expectOk(await api.post('/vectors/get-many', { token, body: { ids: ['a', 'b', 'c'] } }));
    expect(many.vectors).to.deep.equal([
      { id: 'b', vector: [0, 1], metadata: { n: 'b' } },
      { id: 'c', vector: [1, 1], metadata: { n: 'c' } },
    ]);
    expect(many.notFound).to.deep.equal(['a']);
  });

  it('delete of a missing id succeeds and reports 0 deleted', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 0] }]);
    expect(expectOk(await api.post('/vectors/delete', { token, body: { id: 'x' } })).mutation).to.deep.equal({ deleted: 0, notFound: ['x'] });
    expect((await sessionOf(api, token)).vectorCount).to.equal(1);
  });

  it('delete-many deletes stored ids, reports the rest, counts repeats once', async () => {
    const token = await sessionWith(api, [
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0, 1] },
      { id: 'c', vector: [1, 1] },
    ]);
    const body = expectOk(await api.post('/vectors/delete-many', { token, body: { ids: ['a', 'x', 'c', 'a'] } }));
    expect(body.mutation).to.deep.equal({ deleted: 2, notFound: ['x'] });
    expect(body.session.vectorCount).to.equal(1);
    expect(expectOk(await api.post('/vectors/has', { token, body: { id: 'b' } })).has).to.equal(true);
  });
});
