// POST /vectors/has, /vectors/get, /vectors/get-many.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { randomInt, seededRng } from '../helpers/random.js';
import { sessionWith } from './fixtures.js';

describe('reading vectors', () => {
  const api = useServer();
  let token: string;

  before(async () => {
    token = await sessionWith(api, [
      { id: 'a', vector: [0.1, 0.2, 0.3], metadata: { color: 'red', tags: ['x', 'y'] } },
      { id: 'b', vector: [1, -2, 3e-8] },
      { id: 'ü/~ id', vector: [1, 1, 1], metadata: { n: 1 } },
    ]);
  });

  describe('POST /vectors/has', () => {
    it('answers has true for a stored id and false otherwise, with the id', async () => {
      expect(expectOk(await api.post('/vectors/has', { token, body: { id: 'a' } }))).to.deep.include({ id: 'a', has: true });
      expect(expectOk(await api.post('/vectors/has', { token, body: { id: 'zzz' } }))).to.deep.include({ id: 'zzz', has: false });
    });

    it('answers has false on a new session', async () => {
      const fresh = await api.token();
      expect(expectOk(await api.post('/vectors/has', { token: fresh, body: { id: 'a' } })).has).to.equal(false);
    });
  });

  describe('POST /vectors/get', () => {
    it('returns what was added: id, float32 values as shortest decimals, metadata', async () => {
      const body = expectOk(await api.post('/vectors/get', { token, body: { id: 'a' } }));
      expect(body.vector).to.deep.equal({ id: 'a', vector: [0.1, 0.2, 0.3], metadata: { color: 'red', tags: ['x', 'y'] } });
      expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'b' } })).vector.vector).to.deep.equal([1, -2, 3e-8]);
    });

    it('returns {} as the metadata of a vector added without any', async () => {
      expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'b' } })).vector.metadata).to.deep.equal({});
    });

    it('handles ids with any characters', async () => {
      expect(expectOk(await api.post('/vectors/get', { token, body: { id: 'ü/~ id' } })).vector.metadata).to.deep.equal({ n: 1 });
    });

    it('answers 404 VECTOR_NOT_FOUND for a missing id, pointing at /id', async () => {
      const err = expectError(await api.post('/vectors/get', { token, body: { id: 'nope' } }), 404, 'VECTOR_NOT_FOUND');
      expect(err.details).to.deep.include({ path: '/id', id: 'nope' });
    });
  });

  describe('POST /vectors/get-many', () => {
    it('returns the found vectors in request order and lists the ids not found', async () => {
      const body = expectOk(await api.post('/vectors/get-many', { token, body: { ids: ['b', 'nope', 'a', 'other'] } }));
      expect(body.vectors.map((v: { id: string }) => v.id)).to.deep.equal(['b', 'a']);
      expect(body.vectors[1]).to.deep.equal({ id: 'a', vector: [0.1, 0.2, 0.3], metadata: { color: 'red', tags: ['x', 'y'] } });
      expect(body.notFound).to.deep.equal(['nope', 'other']);
    });

    it('returns a repeated id once', async () => {
      const body = expectOk(await api.post('/vectors/get-many', { token, body: { ids: ['a', 'a', 'x', 'x'] } }));
      expect(body.vectors).to.have.length(1);
      expect(body.notFound).to.deep.equal(['x']);
    });

    it('reads many ids (read in slices, in the session turn) as one get each would, a write sent meanwhile landing before or after all of them', async () => {
      const rng = seededRng(41);
      const own = await api.token();
      const record = (i: number, round: number) => ({
        id: `r${i}`,
        vector: [rng(), rng(), 1],
        metadata: rng() < 0.7 ? { round, n: i, s: 'é'.repeat(randomInt(rng, 50)) } : undefined,
        text: rng() < 0.7 ? `text ${round} ${i} ${'word '.repeat(randomInt(rng, 200))}` : undefined,
      });
      expectOk(await api.post('/vectors/add-many', { token: own, body: { vectors: Array.from({ length: 600 }, (_, i) => record(i, 0)) } }));
      const ids = Array.from({ length: 1000 }, () => `r${randomInt(rng, 700)}`);
      const getAll = async () => {
        const found = [];
        for (const id of new Set(ids)) {
          const res = await api.post('/vectors/get', { token: own, body: { id, includeText: true } });
          if (res.status === 200) found.push(res.body.vector);
        }
        return found;
      };
      const before = await getAll();
      const [many, write] = await Promise.all([
        api.post('/vectors/get-many', { token: own, body: { ids, includeText: true } }),
        api.post('/vectors/add-many', { token: own, body: { vectors: Array.from({ length: 300 }, (_, i) => record(2 * i, 1)) } }),
      ]);
      expectOk(write);
      const after = await getAll();
      const body = expectOk(many);
      expect(body.notFound).to.deep.equal([...new Set(ids)].filter((id) => Number(id.slice(1)) >= 600));
      expect([before, after]).to.deep.include(body.vectors);
    });

    it('answers 200 with every id not found on a new session', async () => {
      const fresh = await api.token();
      expect(expectOk(await api.post('/vectors/get-many', { token: fresh, body: { ids: ['a'] } }))).to.deep.include({ vectors: [], notFound: ['a'] });
    });
  });
});
