// POST /vectors/count and POST /vectors/list over HTTP.
import { expect } from 'chai';
import { decodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionWith } from './fixtures.js';

describe('POST /vectors/count and /vectors/list', () => {
  const api = useServer();
  const vectors = Array.from({ length: 25 }, (_, i) => ({ id: `v${i}`, vector: [i + 0.1, 1, -0.3], metadata: { k: i % 3 } }));
  let token: string;

  beforeEach(async () => {
    token = await sessionWith(api, vectors);
  });

  it('counts every vector, or those a filter matches, with countMs', async () => {
    const all = expectOk(await api.post('/vectors/count', { token }));
    expect(all.count).to.equal(25);
    expect(all.metrics).to.have.property('countMs');
    expect(expectOk(await api.post('/vectors/count', { token, body: { filter: { k: 0 } } })).count).to.equal(9);
    expectError(await api.post('/vectors/count', { token, body: { filter: { k: { $foo: 1 } } } }), 400, 'VALIDATION_ERROR');
  });

  it('lists ids in pages of limit, in insertion order, until nextCursor is null', async () => {
    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = expectOk(await api.post('/vectors/list', { token, body: { limit: 10, cursor } }));
      expect(page.metrics).to.include.keys('listMs', 'resultCount');
      for (const item of page.vectors) expect(item).to.have.all.keys('id');
      ids.push(...page.vectors.map((v: { id: string }) => v.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).to.equal(3);
    expect(ids).to.deep.equal(vectors.map((v) => v.id));
  });

  it('defaults to 100 per page and lists filtered vectors with their vectors and metadata', async () => {
    const page = expectOk(await api.post('/vectors/list', { token, body: { filter: { k: 2 }, includeVectors: true, includeMetadata: true } }));
    expect(page.nextCursor).to.equal(null);
    expect(page.vectors).to.deep.equal(vectors.filter((v) => v.metadata.k === 2).map((v) => ({ ...v, vector: Array.from(Float32Array.from(v.vector)) })));
  });

  it('gives base64 float32 vectors with vectorEncoding base64', async () => {
    const page = expectOk(await api.post('/vectors/list', { token, body: { limit: 2, includeVectors: true, vectorEncoding: 'base64' } }));
    expect(Array.from(decodeFloat32Base64(page.vectors[1].vector)!)).to.deep.equal(Array.from(Float32Array.from(vectors[1].vector)));
  });

  it('keeps its place across writes between pages', async () => {
    const first = expectOk(await api.post('/vectors/list', { token, body: { limit: 10 } }));
    // Delete listed and unlisted vectors, replace one not yet listed (it moves to the end), add new ones.
    expectOk(await api.post('/vectors/delete-many', { token, body: { ids: ['v0', 'v3', 'v12'] } }));
    expectOk(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'v15', vector: [1, 2, 3] },
            { id: 'new', vector: [3, 2, 1] },
          ],
        },
      }),
    );
    const rest: string[] = [];
    let cursor = first.nextCursor;
    while (cursor) {
      const page = expectOk(await api.post('/vectors/list', { token, body: { limit: 4, cursor } }));
      rest.push(...page.vectors.map((v: { id: string }) => v.id));
      cursor = page.nextCursor;
    }
    expect(rest).to.deep.equal(['v10', 'v11', 'v13', 'v14', 'v16', 'v17', 'v18', 'v19', 'v20', 'v21', 'v22', 'v23', 'v24', 'v15', 'new']);
  });

  it("refuses a made-up or another session's cursor with INVALID_CURSOR", async () => {
    const other = await sessionWith(api, vectors);
    const foreign = expectOk(await api.post('/vectors/list', { token: other, body: { limit: 1 } })).nextCursor;
    for (const cursor of [foreign, 'abc', '']) {
      const err = expectError(await api.post('/vectors/list', { token, body: { cursor } }), 400, 'INVALID_CURSOR');
      expect(err.details).to.deep.equal({ path: '/cursor' });
    }
  });

  it('refuses a limit outside 1 to 1000 and an unknown vectorEncoding', async () => {
    for (const body of [{ limit: 0 }, { limit: 1001 }, { limit: 1.5 }, { vectorEncoding: 'hex' }]) {
      expectError(await api.post('/vectors/list', { token, body }), 400, 'VALIDATION_ERROR');
    }
  });
});
