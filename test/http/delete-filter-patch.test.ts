// POST /vectors/delete-many with a filter, and POST /vectors/metadata/patch.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionWith } from './fixtures.js';

describe('delete by filter and metadata merge patch', () => {
  const api = useServer({ maxMetadataBytes: 64, maxJsonDepth: 3 });
  let token: string;
  const ids = async () => expectOk(await api.post('/vectors/list', { token })).vectors.map((v: { id: string }) => v.id);

  beforeEach(async () => {
    token = await sessionWith(
      api,
      Array.from({ length: 12 }, (_, i) => ({ id: `v${i}`, vector: [i + 1, 1], metadata: { k: i % 3, tags: i % 2 ? ['odd'] : [] } })),
    );
  });

  it('deletes exactly the vectors a filter matches and says how many', async () => {
    const body = expectOk(await api.post('/vectors/delete-many', { token, body: { filter: { $or: [{ k: 0 }, { tags: 'odd' }] } } }));
    expect(body.mutation).to.deep.equal({ deleted: 8, notFound: [] });
    expect(body.metrics).to.have.property('deleteManyMs');
    expect(await ids()).to.deep.equal(['v2', 'v4', 'v8', 'v10']);
    expect(expectOk(await api.post('/vectors/delete-many', { token, body: { filter: { k: 0 } } })).mutation).to.deep.equal({ deleted: 0, notFound: [] });
  });

  it('refuses an empty filter, both ids and filter, and neither, deleting nothing', async () => {
    expect(expectError(await api.post('/vectors/delete-many', { token, body: { filter: {} } }), 400, 'VALIDATION_ERROR').details.issues[0].path).to.equal(
      '/filter',
    );
    expect(
      expectError(await api.post('/vectors/delete-many', { token, body: { ids: ['v1'], filter: { k: 1 } } }), 400, 'VALIDATION_ERROR').details.issues[0].path,
    ).to.equal('/filter');
    expect(expectError(await api.post('/vectors/delete-many', { token, body: {} }), 400, 'VALIDATION_ERROR').details.issues[0].path).to.equal('/ids');
    expectError(await api.post('/vectors/delete-many', { token, body: { filter: { k: { $bad: 1 } } } }), 400, 'VALIDATION_ERROR');
    expect(await ids()).to.have.length(12);
  });

  it('merges a patch as RFC 7396 says and filters see the result', async () => {
    expectOk(await api.post('/vectors/metadata/set', { token, body: { id: 'v1', metadata: { a: { b: 1, c: 2 }, k: 1, x: [1] } } }));
    const body = expectOk(await api.post('/vectors/metadata/patch', { token, body: { id: 'v1', patch: { a: { c: null, d: 3 }, k: null, x: 'y' } } }));
    expect(body).to.deep.include({ id: 'v1', metadata: { a: { b: 1, d: 3 }, x: 'y' }, mutation: { updated: 1 } });
    expect(body.metrics).to.have.property('patchMetadataMs');
    expect(expectOk(await api.post('/vectors/metadata/get', { token, body: { id: 'v1' } })).metadata).to.deep.equal({ a: { b: 1, d: 3 }, x: 'y' });
    expect(expectOk(await api.post('/vectors/count', { token, body: { filter: { 'a.d': 3 } } })).count).to.equal(1);
    expect(expectOk(await api.post('/vectors/count', { token, body: { filter: { k: 1 } } })).count).to.equal(3);
  });

  it('refuses a patch whose result breaks the metadata limits, changing nothing', async () => {
    const before = expectOk(await api.post('/vectors/metadata/get', { token, body: { id: 'v1' } })).metadata;
    const big = expectError(await api.post('/vectors/metadata/patch', { token, body: { id: 'v1', patch: { s: 'x'.repeat(50) } } }), 400, 'VALIDATION_ERROR');
    expect(big.details.issues[0].path).to.equal('/patch');
    const deep = expectError(await api.post('/vectors/metadata/patch', { token, body: { id: 'v1', patch: { a: { b: { c: {} } } } } }), 400, 'VALIDATION_ERROR');
    expect(deep.details.issues[0].path).to.match(/^\/patch\/a/);
    expect(expectOk(await api.post('/vectors/metadata/get', { token, body: { id: 'v1' } })).metadata).to.deep.equal(before);
  });

  it('answers 404 VECTOR_NOT_FOUND for a patch of a missing id', async () => {
    expect(
      expectError(await api.post('/vectors/metadata/patch', { token, body: { id: 'zz', patch: { a: 1 } } }), 404, 'VECTOR_NOT_FOUND').details,
    ).to.deep.equal({ path: '/id', id: 'zz' });
  });
});
