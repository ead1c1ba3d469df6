// The search stages in LocalIndex (from the built bundle) against the server:
// mmr, groupBy and decay answer the same JSON (deep-equal: ids, scores,
// ranks, groups, stats) for the same data, and refuse the same mistakes.
import { expect } from 'chai';
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { randomInt, randomVector, seededRng } from '../helpers/random.js';

type Sdk = typeof import('../../src/sdk/index.js');
const bundle = new URL('../../build/sdk.js', import.meta.url).href;

describe('SDK LocalIndex search stages (from the bundle)', () => {
  let live: LiveApp;
  let sdk: Sdk;
  before(async () => {
    live = await startApp({ tokenRatePerMin: 0 });
    sdk = await import(bundle);
  });
  after(() => live.close());

  for (const metric of ['cosine', 'l2'] as const) {
    it(`answers what the server answers (${metric})`, async () => {
      const rng = seededRng(metric === 'cosine' ? 3 : 4);
      const day = 86_400_000;
      const points = Array.from({ length: 300 }, (_, i) => ({
        id: `p${i}`,
        vector: randomVector(rng, 12),
        metadata: {
          g: i % 5 === 0 ? [`x${randomInt(rng, 3)}`, randomInt(rng, 6)] : randomInt(rng, 6),
          t: randomInt(rng, 40),
          at: new Date(Date.UTC(2026, 0, 1) + randomInt(rng, 90) * day).toISOString(),
        },
      }));
      // Duplicates, so ties must break the same way.
      for (let i = 9; i < points.length; i += 9) points[i].vector = points[i - 5].vector;
      const client = new sdk.TempvecClient({ baseUrl: live.url });
      await client.addMany(points, { metric });
      const local = await sdk.LocalIndex.load();
      local.addMany(points, { metric });
      const queries = Array.from({ length: 4 }, () => randomVector(rng, 12));
      const decay = { path: 't', origin: 20, scale: 8, curve: 'gauss' as const, weight: 0.4 };
      const dates = { path: 'at', origin: '2026-02-01', scale: 10 * day };
      for (const options of [
        { topK: 7, mmr: { diversity: 0.6, candidates: 80 } },
        { topK: 7, mmr: { diversity: 0.3 }, decay, filter: { t: { $lt: 30 } } },
        { topK: 9, decay, includeMetadata: true },
        { topK: 9, decay: dates, scoreThreshold: 0.1 },
      ]) {
        const remote = await client.searchMany(queries, options);
        const mine = local.searchMany(queries, options);
        expect(mine.results, JSON.stringify(options)).to.deep.equal(remote.results);
        expect(mine.stats).to.deep.equal(remote.stats);
        const one = await client.search(queries[0], options);
        expect(local.search(queries[0], options).results).to.deep.equal(one.results);
      }
      for (const options of [
        { topK: 4, groupBy: { path: 'g', size: 3 } },
        { topK: 6, groupBy: { path: 'g' }, decay: dates, includeMetadata: true },
      ]) {
        const remote = await client.searchMany(queries, options);
        const mine = local.searchMany(queries, options);
        expect(mine.groups, JSON.stringify(options)).to.deep.equal(remote.groups);
        expect(mine).to.not.have.property('results');
        const byId = await client.searchById('p3', options);
        expect(local.searchById('p3', options).groups).to.deep.equal(byId.groups);
      }
    });
  }

  it('refuses the same mistakes with the same code and path', async () => {
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    const local = await sdk.LocalIndex.load();
    await client.add({ id: 'a', vector: [1, 2, 3], metadata: { g: 1 } });
    local.add({ id: 'a', vector: [1, 2, 3], metadata: { g: 1 } });
    const mistakes: object[] = [
      { mmr: { diversity: 2 } },
      { mmr: { diversity: 0.5 }, groupBy: { path: 'g' } },
      { groupBy: { path: 'g', size: 0 } },
      { decay: { path: 'g', origin: 'tomorrow', scale: 1 } },
      { decay: { path: 'g', origin: 0, scale: 1, midpoint: 1 } },
      { text: 'hello', groupBy: { path: 'g' } },
    ];
    for (const options of mistakes) {
      const serverError = await client.search([1, 2, 3], options).then(
        () => null,
        (e) => e,
      );
      let localError: any = null;
      try {
        local.search([1, 2, 3], options);
      } catch (e) {
        localError = e;
      }
      const what = JSON.stringify(options);
      expect(serverError, what).to.be.instanceOf(sdk.TempvecError);
      expect(localError, what).to.be.instanceOf(sdk.TempvecError);
      expect(localError.status, what).to.equal(400);
      expect(localError.code, what).to.equal(serverError.code);
      expect(localError.details, what).to.deep.equal(serverError.details);
    }
  });
});
