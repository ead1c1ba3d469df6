// Vector bodies over HTTP: whether the body reader (src/http/body/vector-reader.ts)
// takes a body or declines it, the stored vectors, results and errors are the same.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { randomVector, seededRng } from '../helpers/random.js';

describe('vector bodies over HTTP, by the vector reader or the ordinary path', () => {
  const api = useServer();
  const rng = seededRng(91);
  const rows = Array.from({ length: 12 }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, 6), metadata: { i } }));

  it('stores the same vectors whether the reader takes the body or declines it', async () => {
    const fast = await api.token();
    const ordinary = await api.token();
    expectOk(await api.post('/vectors/add-many', { token: fast, body: { vectors: rows } }));
    // A non-ASCII character anywhere sends the whole body down the ordinary path.
    expectOk(await api.post('/vectors/add-many', { token: ordinary, body: { vectors: [...rows, { id: 'ü', vector: rows[0].vector }] } }));
    expectOk(await api.post('/vectors/add-many', { token: fast, body: { vectors: [{ id: 'u', vector: rows[0].vector }] } }));
    expectOk(await api.post('/vectors/add', { token: ordinary, body: { id: 'é', vector: rows[0].vector } }));
    expectOk(await api.post('/vectors/add', { token: fast, body: { id: 'e', vector: rows[0].vector } }));
    for (const { id } of rows) {
      const a = expectOk(await api.post('/vectors/get', { token: fast, body: { id } }));
      const b = expectOk(await api.post('/vectors/get', { token: ordinary, body: { id } }));
      expect(a.vector).to.deep.equal(b.vector);
    }
    const a = expectOk(await api.post('/vectors/get', { token: fast, body: { id: 'e' } }));
    const b = expectOk(await api.post('/vectors/get', { token: ordinary, body: { id: 'é' } }));
    expect(a.vector.vector).to.deep.equal(b.vector.vector);
  });

  it('searches alike whether the reader takes the body or declines it', async () => {
    const token = await api.token();
    expectOk(await api.post('/vectors/add-many', { token, body: { vectors: rows } }));
    const query = randomVector(rng, 6);
    // The non-ASCII filter value (matching nothing extra) sends the body down the ordinary path.
    const fast = expectOk(await api.post('/search', { token, body: { queryVector: query, topK: 5 } }));
    const ordinary = expectOk(await api.post('/search', { token, body: { queryVector: query, topK: 5, filter: { i: { $ne: 'ü' } } } }));
    expect(fast.results).to.have.length(5);
    expect(fast.results).to.deep.equal(ordinary.results);
    const many = expectOk(await api.post('/search-many', { token, body: { queryVectors: [query, rows[3].vector], topK: 2 } }));
    expect(many.results[0]).to.deep.equal(fast.results.slice(0, 2));
    expect(many.results[1][0].id).to.equal('v3');
    for (const body of ['{"queryVector":[1,2,3,4,5,1e17],"topK":1}', '{"queryVector":[1,2,3,4,5,1e17],"topK":1,"x":"ü"}']) {
      const error = expectError(await api.post('/search', { token, body }), 400, 'VALIDATION_ERROR');
      expect(error.details.issues[0].path).to.equal('/queryVector/5');
    }
    const second = expectError(await api.post('/search-many', { token, body: '{"queryVectors":[[1,2,3,4,5,6],[1,2,"3",4,5,6]]}' }), 400, 'VALIDATION_ERROR');
    expect(second.details.issues[0].path).to.equal('/queryVectors/1/2');
    const short = expectError(await api.post('/search', { token, body: '{"queryVector":[1,2,3]}' }), 400, 'DIMENSION_MISMATCH');
    expect(short.details.path).to.equal('/queryVector');
  });

  it('reports a bad component at its path, as the ordinary path always did', async () => {
    const token = await api.token();
    const body = `{"vectors":[{"id":"a","vector":[1,2,3]},{"id":"b","vector":[1,2,1e17]}]}`;
    const error = expectError(await api.post('/vectors/add-many', { token, body }), 400, 'VALIDATION_ERROR');
    expect(error.details.issues[0].path).to.equal('/vectors/1/vector/2');
    const malformed = expectError(await api.post('/vectors/add-many', { token, body: '{"vectors":[{"id":"a","vector":[1,2,]}]}' }), 400, 'INVALID_JSON');
    expect(malformed.message).to.match(/not valid JSON/);
  });
});
