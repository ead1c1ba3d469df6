// A session created with vectorType int8, over HTTP.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';

describe('int8 sessions over HTTP', () => {
  const api = useServer();

  it('creates an int8 session, searches with exact scores, reports code bytes', async () => {
    const token = await api.token();
    const vectors = [
      { id: 'a', vector: [1, 0, 0] },
      { id: 'b', vector: [0.6, 0.8, 0] },
      { id: 'c', vector: [0, 0, 1] },
    ];
    const added = expectOk(await api.post('/vectors/add-many', { token, body: { vectors, vectorType: 'int8' } }));
    expect(added.session.config.vectorType).to.equal('int8');
    const found = expectOk(await api.post('/search', { token, body: { queryVector: [1, 0, 0], topK: 2 } }));
    expect(found.results.map((r: { id: string }) => r.id)).to.deep.equal(['a', 'b']);
    expect(found.results[0].score).to.equal(1);
    expect(found.results[1].score).to.be.closeTo(0.6, 1e-6); // exact cosine, not a code approximation
    expect(found.stats.exact).to.equal(false);
    const session = expectOk(await api.get('/session', { token }));
    expect(session.stats).to.deep.include({ vectorType: 'int8', vectorBytes: 36, codeBytes: 96 });
    expectError(await api.post('/vectors/add', { token, body: { id: 'd', vector: [1, 1, 1], vectorType: 'float32' } }), 409, 'VECTOR_TYPE_LOCKED');
    expectOk(await api.post('/index/reset', { token }));
    const fresh = expectOk(await api.post('/vectors/add', { token, body: { id: 'd', vector: [1, 1, 1], vectorType: 'float32' } }));
    expect(fresh.session.config.vectorType).to.equal('float32');
  });
});
