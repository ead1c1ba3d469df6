// POST /search and POST /search-many.
import { expect } from 'chai';
import type { Metric } from '../../src/config.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { randomInt, randomVector, seededRng } from '../helpers/random.js';
import { expectSameTopK, type ReferenceRow } from '../helpers/reference.js';
import { sessionWith } from './fixtures.js';

const DIM = 24;

/** A session of 150 random vectors with metadata; returns its token and the reference rows. */
async function randomSession(api: ReturnType<typeof useServer>, metric: Metric, seed: number) {
  const rng = seededRng(seed);
  const records = Array.from({ length: 150 }, (_, i) => ({
    id: `v${i}`,
    vector: randomVector(rng, DIM),
    metadata: { group: i % 3, tags: i % 5 === 0 ? ['five'] : [] },
  }));
  const token = await sessionWith(api, records, { metric });
  const rows: (ReferenceRow & { metadata: any })[] = records.map((r, seq) => ({ ...r, seq }));
  return { token, rows, rng };
}

describe('POST /search', () => {
  const api = useServer();

  for (const metric of ['cosine', 'l2'] as Metric[]) {
    it(`${metric}: returns the exact nearest vectors, nearest first, 10 by default`, async () => {
      const { token, rows, rng } = await randomSession(api, metric, metric === 'cosine' ? 1 : 2);
      for (let i = 0; i < 5; i++) {
        const queryVector = randomVector(rng, DIM);
        const body = expectOk(await api.post('/search', { token, body: { queryVector } }));
        expect(body.results).to.have.length(10);
        expectSameTopK(metric, body.results, queryVector, rows, 10);
        for (const hit of body.results) expect(hit).to.have.all.keys('id', 'score');
        expect(body.stats).to.deep.equal({ exact: true, metric, topK: 10, candidatePool: 100, matched: 150, scanned: 150 });
        const scores = body.results.map((r: { score: number }) => r.score);
        const sorted = [...scores].sort((a, b) => (metric === 'cosine' ? b - a : a - b));
        expect(scores).to.deep.equal(sorted);
      }
    });

    it(`${metric}: filters before ranking: min(topK, matching) exact results`, async () => {
      const { token, rows, rng } = await randomSession(api, metric, 3);
      for (const [filter, topK] of [
        [{ group: 1 }, 20],
        [{ tags: 'five' }, 100],
        [{ group: 2, tags: 'five' }, 5],
        [{ group: 7 }, 10],
      ] as const) {
        const queryVector = randomVector(rng, DIM);
        const body = expectOk(await api.post('/search', { token, body: { queryVector, topK, filter, includeMetadata: true } }));
        const matching = rows.filter((r) =>
          Object.entries(filter).every(([k, v]) => (Array.isArray(r.metadata[k]) ? r.metadata[k].includes(v) : r.metadata[k] === v)),
        );
        expect(body.results).to.have.length(Math.min(topK, matching.length));
        expect(body.stats.matched).to.equal(matching.length);
        expectSameTopK(metric, body.results, queryVector, matching, topK, JSON.stringify(filter));
        for (const hit of body.results) expect(hit.metadata).to.deep.equal(rows[Number(hit.id.slice(1))].metadata);
      }
    });
  }

  it('honours topK from 1 to 100, and returns every vector when fewer are stored', async () => {
    const { token } = await randomSession(api, 'cosine', 4);
    const q = randomVector(seededRng(9), DIM);
    expect(expectOk(await api.post('/search', { token, body: { queryVector: q, topK: 1 } })).results).to.have.length(1);
    expect(expectOk(await api.post('/search', { token, body: { queryVector: q, topK: 100 } })).results).to.have.length(100);
    const small = await sessionWith(api, [
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0, 1] },
    ]);
    expect(expectOk(await api.post('/search', { token: small, body: { queryVector: [1, 1], topK: 100 } })).results).to.have.length(2);
  });

  it('raises candidatePool to topK and reports both', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 0] }]);
    const body = expectOk(await api.post('/search', { token, body: { queryVector: [1, 0], topK: 50, candidatePool: 3 } }));
    expect(body.stats).to.include({ topK: 50, candidatePool: 50 });
    expect(expectOk(await api.post('/search', { token, body: { queryVector: [1, 0], candidatePool: 2048 } })).stats.candidatePool).to.equal(2048);
  });

  it('scores cosine as similarity and l2 as Euclidean distance (not squared)', async () => {
    const cos = await sessionWith(api, [
      { id: 'x', vector: [1, 0] },
      { id: 'd', vector: [1, 1] },
    ]);
    const c = expectOk(await api.post('/search', { token: cos, body: { queryVector: [3, 0] } })).results;
    expect(c.map((r: any) => r.id)).to.deep.equal(['x', 'd']);
    expect(c[0].score).to.be.closeTo(1, 1e-6);
    expect(c[1].score).to.be.closeTo(Math.SQRT1_2, 1e-6);
    const l2 = await sessionWith(
      api,
      [
        { id: 'far', vector: [6, 8] },
        { id: 'near', vector: [3, 4] },
      ],
      { metric: 'l2' },
    );
    expect(expectOk(await api.post('/search', { token: l2, body: { queryVector: [0, 0] } })).results).to.deep.equal([
      { id: 'near', score: 5 },
      { id: 'far', score: 10 },
    ]);
  });

  it('breaks ties by insertion order', async () => {
    const token = await sessionWith(
      api,
      ['p', 'q', 'r', 's'].map((id) => ({ id, vector: [1, 2, 3] })),
    );
    expectOk(await api.post('/vectors/delete', { token, body: { id: 'p' } }));
    const ids = expectOk(await api.post('/search', { token, body: { queryVector: [1, 2, 3] } })).results.map((r: any) => r.id);
    expect(ids).to.deep.equal(['q', 'r', 's']);
  });

  it('answers an empty list on a new session', async () => {
    const token = await api.token();
    const body = expectOk(await api.post('/search', { token, body: { queryVector: [1, 2, 3] } }));
    expect(body.results).to.deep.equal([]);
    expect(body.session.initialized).to.equal(false);
  });

  it('answers an empty list on a cleared session, and still checks the dimension', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 0] }]);
    expectOk(await api.post('/vectors/clear', { token }));
    expect(expectOk(await api.post('/search', { token, body: { queryVector: [1, 0] } })).results).to.deep.equal([]);
    expectError(await api.post('/search', { token, body: { queryVector: [1, 0, 0] } }), 400, 'DIMENSION_MISMATCH');
  });
});

describe('POST /search-many', () => {
  const api = useServer();

  it('answers one result list per query, in order, each equal to the single search', async () => {
    const rng = seededRng(77);
    const token = await sessionWith(
      api,
      Array.from({ length: 60 }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, 8), metadata: { odd: i % 2 } })),
    );
    for (const nq of [1, 3, 4, 9]) {
      const queryVectors = Array.from({ length: nq }, () => randomVector(rng, 8));
      const options = { topK: 1 + randomInt(rng, 12), filter: { odd: 1 }, includeMetadata: true };
      const body = expectOk(await api.post('/search-many', { token, body: { queryVectors, ...options } }));
      expect(body.results).to.have.length(nq);
      for (let j = 0; j < nq; j++) {
        const single = expectOk(await api.post('/search', { token, body: { queryVector: queryVectors[j], ...options } }));
        expect(body.results[j].map((r: any) => r.id)).to.deep.equal(single.results.map((r: any) => r.id));
        body.results[j].forEach((r: any, i: number) => {
          expect(r.score).to.be.closeTo(single.results[i].score, 1e-6);
        });
      }
    }
  });

  it('answers one empty list per query on a new session', async () => {
    const token = await api.token();
    expect(
      expectOk(
        await api.post('/search-many', {
          token,
          body: {
            queryVectors: [
              [1, 2],
              [3, 4],
            ],
          },
        }),
      ).results,
    ).to.deep.equal([[], []]);
  });

  it('refuses query vectors of different lengths, pointing at the first that differs', async () => {
    const token = await api.token();
    const err = expectError(await api.post('/search-many', { token, body: { queryVectors: [[1, 2], [3, 4], [5]] } }), 400, 'DIMENSION_MISMATCH');
    expect(err.details).to.deep.equal({ path: '/queryVectors/2', expected: 2, actual: 1 });
    const init = await sessionWith(api, [{ id: 'a', vector: [1, 2, 3] }]);
    const mismatch = expectError(
      await api.post('/search-many', {
        token: init,
        body: {
          queryVectors: [
            [1, 2, 3],
            [1, 2],
          ],
        },
      }),
      400,
      'DIMENSION_MISMATCH',
    );
    expect(mismatch.details).to.deep.equal({ path: '/queryVectors/1', expected: 3, actual: 2 });
  });
});
