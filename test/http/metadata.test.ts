// POST /vectors/metadata/get, /set, /delete.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionWith } from './fixtures.js';

describe('metadata routes', () => {
  const api = useServer({ maxMetadataBytes: 64 });
  let token: string;

  beforeEach(async () => {
    token = await sessionWith(api, [
      { id: 'a', vector: [1, 0], metadata: { color: 'red', size: 3 } },
      { id: 'b', vector: [0, 1] },
    ]);
  });

  it('metadata/get returns the id and its metadata', async () => {
    expect(expectOk(await api.post('/vectors/metadata/get', { token, body: { id: 'a' } }))).to.deep.include({ id: 'a', metadata: { color: 'red', size: 3 } });
    expect(expectOk(await api.post('/vectors/metadata/get', { token, body: { id: 'b' } })).metadata).to.deep.equal({});
  });

  it('metadata/set replaces the whole object and keeps the vector', async () => {
    const body = expectOk(await api.post('/vectors/metadata/set', { token, body: { id: 'a', metadata: { shape: 'round' } } }));
    expect(body).to.deep.include({ id: 'a', metadata: { shape: 'round' }, mutation: { updated: 1 } });
    expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'a' } })).vector).to.deep.equal({
      id: 'a',
      vector: [1, 0],
      metadata: { shape: 'round' },
    });
  });

  it('metadata/set changes what a filter matches', async () => {
    expectOk(await api.post('/vectors/metadata/set', { token, body: { id: 'b', metadata: { color: 'red' } } }));
    const results = expectOk(await api.post('/search', { token, body: { queryVector: [0, 1], filter: { color: 'red' } } })).results;
    expect(results.map((r: { id: string }) => r.id)).to.deep.equal(['b', 'a']);
  });

  it('metadata/delete leaves {} and keeps the vector', async () => {
    const body = expectOk(await api.post('/vectors/metadata/delete', { token, body: { id: 'a' } }));
    expect(body).to.deep.include({ id: 'a', metadata: {}, mutation: { updated: 1 } });
    expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'a' } })).vector).to.deep.equal({ id: 'a', vector: [1, 0], metadata: {} });
  });

  for (const route of ['/vectors/metadata/get', '/vectors/metadata/set', '/vectors/metadata/delete']) {
    it(`${route} answers 404 VECTOR_NOT_FOUND for a missing id and creates nothing`, async () => {
      const body = route.endsWith('/set') ? { id: 'zz', metadata: { x: 1 } } : { id: 'zz' };
      const err = expectError(await api.post(route, { token, body }), 404, 'VECTOR_NOT_FOUND');
      expect(err.details).to.deep.include({ path: '/id', id: 'zz' });
      expect(expectOk(await api.post('/vectors/has', { token, body: { id: 'zz' } })).has).to.equal(false);
    });
  }

  it('metadata/set refuses a non-object or too large one, keeping the old', async () => {
    for (const metadata of [null, [1, 2], 'red', 3, { big: 'x'.repeat(64) }]) {
      const err = expectError(await api.post('/vectors/metadata/set', { token, body: { id: 'a', metadata } }), 400, 'VALIDATION_ERROR');
      expect(err.details.issues[0].path).to.equal('/metadata');
    }
    expect(expectOk(await api.post('/vectors/metadata/get', { token, body: { id: 'a' } })).metadata).to.deep.equal({ color: 'red', size: 3 });
  });
});
