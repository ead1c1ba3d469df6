// Vectors as base64 little-endian float32 in vector, queryVector and queryVectors.
import { expect } from 'chai';
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { randomVector, seededRng } from '../helpers/random.js';

describe('base64 vectors over HTTP', () => {
  const api = useServer();
  const rng = seededRng(77);
  const rows = Array.from({ length: 20 }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, 8) }));

  it('stores base64 vectors exactly and searches the same as JSON numbers', async () => {
    const asJson = await api.token();
    const asBase64 = await api.token();
    expectOk(await api.post('/vectors/add-many', { token: asJson, body: { vectors: rows } }));
    expectOk(
      await api.post('/vectors/add-many', {
        token: asBase64,
        body: { vectors: rows.map((r) => ({ id: r.id, vector: encodeFloat32Base64(r.vector) })) },
      }),
    );
    expectOk(await api.post('/vectors/add', { token: asBase64, body: { id: 'one', vector: encodeFloat32Base64(rows[0].vector) } }));
    const a = expectOk(await api.post('/vectors/get', { token: asJson, body: { id: 'v3' } }));
    const b = expectOk(await api.post('/vectors/get', { token: asBase64, body: { id: 'v3' } }));
    expect(b.vector.vector).to.deep.equal(a.vector.vector);

    const query = randomVector(rng, 8);
    const json = expectOk(await api.post('/search', { token: asJson, body: { queryVector: query, topK: 5 } }));
    const b64 = expectOk(await api.post('/search', { token: asJson, body: { queryVector: encodeFloat32Base64(query), topK: 5 } }));
    expect(b64.results).to.deep.equal(json.results);
    const many = expectOk(
      await api.post('/search-many', {
        token: asJson,
        body: { queryVectors: [encodeFloat32Base64(query), query], topK: 5 },
      }),
    );
    expect(many.results).to.deep.equal([json.results, json.results]);
  });

  it('answers 400 VALIDATION_ERROR at the vector for bad base64 or bad values', async () => {
    const token = await api.token();
    for (const vector of ['AACAPw', 'AACA', encodeFloat32Base64([1, Infinity]), encodeFloat32Base64([1, 1e30])]) {
      const error = expectError(await api.post('/vectors/add-many', { token, body: { vectors: [{ id: 'a', vector }] } }), 400, 'VALIDATION_ERROR');
      expect(error.details.issues[0].path).to.equal('/vectors/0/vector');
    }
    const error = expectError(await api.post('/search-many', { token, body: { queryVectors: [[1, 2], 'A==='] } }), 400, 'VALIDATION_ERROR');
    expect(error.details.issues[0].path).to.equal('/queryVectors/1');
  });

  it('checks a base64 vector against the session dimension', async () => {
    const token = await api.token();
    expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2, 3] } }));
    const error = expectError(await api.post('/search', { token, body: { queryVector: encodeFloat32Base64([1, 2]) } }), 400, 'DIMENSION_MISMATCH');
    expect(error.details).to.include({ path: '/queryVector', expected: 3, actual: 2 });
  });

  it('still points at the bad component of a number array', async () => {
    const token = await api.token();
    const error = expectError(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 'x'] } }), 400, 'VALIDATION_ERROR');
    expect(error.details.issues[0].path).to.equal('/vector/1');
  });
});
