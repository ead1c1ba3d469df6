// scoreThreshold, queryId and queryIds on POST /search and /search-many.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionWith } from './fixtures.js';

describe('search with scoreThreshold and by stored id', () => {
  const api = useServer();
  const hits = (body: any) => body.results.map((h: { id: string }) => h.id);

  it('cuts results at scoreThreshold: cosine keeps >=, l2 keeps <=', async () => {
    const cosine = await sessionWith(api, [
      { id: 'same', vector: [1, 0] },
      { id: 'near', vector: [1, 0.2] },
      { id: 'orth', vector: [0, 1] },
    ]);
    expect(hits(expectOk(await api.post('/search', { token: cosine, body: { queryVector: [1, 0], scoreThreshold: 0.9 } })))).to.deep.equal(['same', 'near']);
    expect(hits(expectOk(await api.post('/search', { token: cosine, body: { queryVector: [-1, 0], scoreThreshold: 0.5 } })))).to.deep.equal([]);
    const l2 = await sessionWith(
      api,
      [
        { id: 'a', vector: [3, 4] },
        { id: 'b', vector: [6, 8] },
      ],
      { metric: 'l2' },
    );
    const many = expectOk(
      await api.post('/search-many', {
        token: l2,
        body: {
          queryVectors: [
            [0, 0],
            [6, 8],
          ],
          scoreThreshold: 5,
        },
      }),
    );
    expect(many.results).to.deep.equal([
      [{ id: 'a', score: 5 }],
      [
        { id: 'b', score: 0 },
        { id: 'a', score: 5 },
      ],
    ]);
  });

  it('searches by a stored id, leaving the id out, with filters and thresholds', async () => {
    const token = await sessionWith(api, [
      { id: 'a', vector: [1, 0], metadata: { g: 1 } },
      { id: 'b', vector: [1, 0.1], metadata: { g: 1 } },
      { id: 'c', vector: [0, 1], metadata: { g: 2 } },
      { id: 'd', vector: [1, 0.05], metadata: { g: 2 } },
    ]);
    const one = expectOk(await api.post('/search', { token, body: { queryId: 'a', topK: 2 } }));
    expect(hits(one)).to.deep.equal(['d', 'b']);
    expect(one.stats.topK).to.equal(2);
    expect(hits(expectOk(await api.post('/search', { token, body: { queryId: 'a', filter: { g: 2 }, scoreThreshold: 0.5 } })))).to.deep.equal(['d']);
    const many = expectOk(await api.post('/search-many', { token, body: { queryIds: ['c', 'b'], topK: 1 } }));
    expect(many.results.map((list: { id: string }[]) => list.map((h) => h.id))).to.deep.equal([['b'], ['d']]);
    expect(many.metrics.queryCount).to.equal(2);
  });

  it('answers 404 VECTOR_NOT_FOUND with the pointer of a missing query id', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 0] }]);
    expect(expectError(await api.post('/search', { token, body: { queryId: 'zz' } }), 404, 'VECTOR_NOT_FOUND').details).to.deep.equal({
      path: '/queryId',
      id: 'zz',
    });
    expect(expectError(await api.post('/search-many', { token, body: { queryIds: ['a', 'zz'] } }), 404, 'VECTOR_NOT_FOUND').details).to.deep.equal({
      path: '/queryIds/1',
      id: 'zz',
    });
  });

  it('takes exactly one of queryVector and queryId (queryVectors and queryIds)', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 0] }]);
    const both = expectError(await api.post('/search', { token, body: { queryVector: [1, 0], queryId: 'a' } }), 400, 'VALIDATION_ERROR');
    expect(both.details.issues[0].path).to.equal('/queryId');
    const neither = expectError(await api.post('/search-many', { token, body: { topK: 1 } }), 400, 'VALIDATION_ERROR');
    expect(neither.details.issues[0].path).to.equal('/queryVectors');
    expectError(await api.post('/search', { token, body: { queryId: 'a', scoreThreshold: 'high' } }), 400, 'VALIDATION_ERROR');
    expectError(await api.post('/search-many', { token, body: { queryIds: [] } }), 400, 'VALIDATION_ERROR');
  });
});
