// The search stages (mmr, groupBy, decay) over HTTP: their answers' shapes on
// /search and /search-many, a 400 for every bad value of every new field, and
// a 400 naming both fields for the combinations the pipeline refuses.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionWith } from './fixtures.js';

describe('search stages over HTTP', () => {
  const api = useServer();
  let token: string;
  before(async () => {
    token = await sessionWith(
      api,
      Array.from({ length: 40 }, (_, i) => ({
        id: `v${i}`,
        vector: [Math.cos(i), Math.sin(i), (i % 5) / 5],
        metadata: { g: i % 4 === 0 ? ['a', 'b'] : `c${i % 3}`, t: i, at: new Date(Date.UTC(2026, 0, 1 + i)).toISOString() },
        text: `text ${i}`,
      })),
    );
  });
  const search = (body: object) => api.post('/search', { token, body: { queryVector: [1, 0, 0.5], ...body } });

  it('groupBy answers groups instead of results, on /search and /search-many', async () => {
    const one = expectOk(await search({ topK: 3, groupBy: { path: 'g', size: 2 }, includeMetadata: true }));
    expect(one).to.not.have.property('results');
    expect(one.groups).to.have.length(3);
    for (const group of one.groups) {
      expect(group.hits.length).to.be.within(1, 2);
      for (const hit of group.hits) {
        const value = hit.metadata.g;
        expect(Array.isArray(value) ? value.includes(group.value) : value === group.value).to.equal(true);
      }
    }
    expect(one.metrics.resultCount).to.equal(3);
    const many = expectOk(
      await api.post('/search-many', {
        token,
        body: {
          queryVectors: [
            [1, 0, 0],
            [0, 1, 0],
          ],
          topK: 2,
          groupBy: { path: 'g' },
        },
      }),
    );
    expect(many).to.not.have.property('results');
    expect(many.groups).to.have.length(2);
    expect(many.groups[0]).to.have.length(2);
    const byIds = expectOk(await api.post('/search-many', { token, body: { queryIds: ['v1', 'v2'], topK: 2, groupBy: { path: 'g', size: 1 } } }));
    for (const [j, groups] of byIds.groups.entries())
      for (const group of groups) expect(group.hits.map((h: { id: string }) => h.id)).to.not.include(`v${j + 1}`);
  });

  it('mmr hits carry their mmrRank; decay replaces the score', async () => {
    const mmr = expectOk(await search({ topK: 5, mmr: { diversity: 0.7, candidates: 30 } }));
    expect(mmr.results.map((h: { mmrRank: number }) => h.mmrRank)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(mmr.stats.candidatePool).to.equal(30);
    const plain = expectOk(await search({ topK: 5 }));
    expect(expectOk(await search({ topK: 5, mmr: { diversity: 0 } })).results).to.deep.equal(
      plain.results.map((h: object, i: number) => ({ ...h, mmrRank: i + 1 })),
    );
    const decayed = expectOk(await search({ topK: 40, decay: { path: 't', origin: 0, scale: 5, weight: 1, curve: 'linear' } }));
    // weight 1: the score is the decay alone, 1 at the origin, 0 from 10 on.
    const score = Object.fromEntries(decayed.results.map((h: { id: string; score: number }) => [h.id, h.score]));
    expect(score.v0).to.equal(1);
    expect(score.v5).to.be.closeTo(0.5, 1e-12);
    expect(score.v12).to.equal(0);
    expectOk(await search({ decay: { path: 'at', origin: 'now', scale: 86_400_000 } }));
    expectOk(await search({ decay: { path: 'at', origin: '2026-01-05T12:00:00+02:00', scale: 86_400_000, curve: 'gauss' }, groupBy: { path: 'g' } }));
    expectOk(await search({ decay: { path: 't', origin: 3, scale: 2 }, mmr: { diversity: 0.5 } }));
  });

  it('a 400 VALIDATION_ERROR at the field for every bad value', async () => {
    const long = 'p'.repeat(1025);
    const bad: [string, object][] = [
      ['/mmr', { mmr: 5 }],
      ['/mmr/diversity', { mmr: {} }],
      ['/mmr/diversity', { mmr: { diversity: -0.1 } }],
      ['/mmr/diversity', { mmr: { diversity: 1.5 } }],
      ['/mmr/diversity', { mmr: { diversity: '0.5' } }],
      ['/mmr/candidates', { mmr: { diversity: 0.5, candidates: 0 } }],
      ['/mmr/candidates', { mmr: { diversity: 0.5, candidates: 2049 } }],
      ['/mmr/candidates', { mmr: { diversity: 0.5, candidates: 2.5 } }],
      ['/mmr/lambda', { mmr: { diversity: 0.5, lambda: 0.5 } }],
      ['/groupBy', { groupBy: 'g' }],
      ['/groupBy/path', { groupBy: {} }],
      ['/groupBy/path', { groupBy: { path: '' } }],
      ['/groupBy/path', { groupBy: { path: 7 } }],
      ['/groupBy/path', { groupBy: { path: long } }],
      ['/groupBy/size', { groupBy: { path: 'g', size: 0 } }],
      ['/groupBy/size', { groupBy: { path: 'g', size: 101 } }],
      ['/groupBy/size', { groupBy: { path: 'g', size: 1.5 } }],
      ['/groupBy/limit', { groupBy: { path: 'g', limit: 3 } }],
      ['/decay/path', { decay: [] }],
      ['/decay', { decay: 'soon' }],
      ['/decay/path', { decay: { origin: 0, scale: 1 } }],
      ['/decay/origin', { decay: { path: 't', scale: 1 } }],
      ['/decay/origin', { decay: { path: 't', origin: 'yesterday', scale: 1 } }],
      ['/decay/origin', { decay: { path: 't', origin: '2026-01-05T12:00', scale: 1 } }],
      ['/decay/origin', { decay: { path: 't', origin: true, scale: 1 } }],
      ['/decay/scale', { decay: { path: 't', origin: 0 } }],
      ['/decay/scale', { decay: { path: 't', origin: 0, scale: 0 } }],
      ['/decay/scale', { decay: { path: 't', origin: 0, scale: -1 } }],
      ['/decay/midpoint', { decay: { path: 't', origin: 0, scale: 1, midpoint: 0 } }],
      ['/decay/midpoint', { decay: { path: 't', origin: 0, scale: 1, midpoint: 1 } }],
      ['/decay/curve', { decay: { path: 't', origin: 0, scale: 1, curve: 'cubic' } }],
      ['/decay/weight', { decay: { path: 't', origin: 0, scale: 1, weight: 1.5 } }],
      ['/decay/weight', { decay: { path: 't', origin: 0, scale: 1, weight: -0.1 } }],
      ['/decay/target', { decay: { path: 't', origin: 0, scale: 1, target: 0 } }],
    ];
    for (const [path, body] of bad) {
      const error = expectError(await search(body), 400, 'VALIDATION_ERROR');
      expect(
        error.details.issues.map((i: { path: string }) => i.path),
        JSON.stringify(body),
      ).to.include(path);
    }
  });

  it('combinations that make no sense are a 400 naming both fields', async () => {
    const both = expectError(await search({ mmr: { diversity: 0.5 }, groupBy: { path: 'g' } }), 400, 'VALIDATION_ERROR');
    expect(both.message).to.include('mmr').and.include('groupBy');
    expect(both.details.fields).to.deep.equal(['mmr', 'groupBy']);
    for (const stage of ['mmr', 'groupBy']) {
      const body = { mmr: { diversity: 0.5 }, groupBy: { path: 'g' } }[stage];
      const hybrid = expectError(await search({ queryText: 'text', [stage]: body }), 400, 'VALIDATION_ERROR');
      expect(hybrid.message, stage).to.include(stage).and.include('query text');
      expect(hybrid.details.fields, stage).to.deep.equal([stage, 'queryText']);
      expectError(await api.post('/search', { token, body: { queryText: 'text', [stage]: body } }), 400, 'VALIDATION_ERROR');
    }
    // decay decays a hybrid search's fused score, but a keyword search alone has no similarity to blend.
    const decay = { path: 't', origin: 0, scale: 1 };
    const keyword = expectError(await api.post('/search', { token, body: { queryText: 'text', decay } }), 400, 'VALIDATION_ERROR');
    expect(keyword.details.fields).to.deep.equal(['decay', 'queryText']);
    const hybrid = expectOk(await search({ queryText: 'text 3', decay, topK: 3 }));
    expect(hybrid.results).to.have.length(3);
  });
});
