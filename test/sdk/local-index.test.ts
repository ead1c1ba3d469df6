// LocalIndex from the built bundle (build/sdk.js, loading build/kernel.wasm
// beside it) against the server: same ids, same scores, same error codes for
// the same data, queries and mistakes.
import { expect } from 'chai';
import { startApp, type LiveApp } from '../helpers/live-app.js';

type Sdk = typeof import('../../src/sdk/index.js');
const bundle = new URL('../../build/sdk.js', import.meta.url).href;

/** Deterministic clustered points (a small LCG, so failures reproduce). */
function dataset(n: number, dim: number, seed: number) {
  let s = seed;
  const rand = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
  const centers = Array.from({ length: 4 }, () => Array.from({ length: dim }, () => rand() * 4));
  return Array.from({ length: n }, (_, i) => ({
    id: `p${i}`,
    vector: centers[i % 4].map((c) => c + rand()),
    metadata: { cluster: i % 4, even: i % 2 === 0 },
  }));
}

describe('SDK LocalIndex (in Node, from the bundle)', () => {
  let live: LiveApp;
  let sdk: Sdk;

  before(async () => {
    live = await startApp({ tokenRatePerMin: 0 });
    sdk = await import(bundle);
  });
  after(() => live.close());

  const variants = [
    ['cosine', 'float32'],
    ['l2', 'float32'],
    ['cosine', 'int8'],
    ['l2', 'int8'],
  ] as const;
  for (const [metric, vectorType] of variants) {
    it(`returns the server's ids and scores (${metric}, ${vectorType}, with and without a filter)`, async () => {
      const points = dataset(600, 24, metric === 'cosine' ? 7 : 11);
      const client = new sdk.TempvecClient({ baseUrl: live.url });
      for (let i = 0; i < points.length; i += 200) await client.addMany(points.slice(i, i + 200), { metric, vectorType });
      const local = await sdk.LocalIndex.load();
      expect(local.kernelSource).to.equal('bytes');
      local.addMany(points, { metric, vectorType });
      expect(local.config).to.include({ metric, vectorType });
      // Replace and delete some on both sides, so row order (and tie-breaks) must match too.
      await client.addMany(points.slice(0, 20).map((p) => ({ ...p, vector: p.vector.map((x) => -x) })));
      local.addMany(points.slice(0, 20).map((p) => ({ ...p, vector: p.vector.map((x) => -x) })));
      await client.deleteMany(points.slice(30, 60).map((p) => p.id));
      local.delete(points.slice(30, 60).map((p) => p.id));

      const queries = dataset(12, 24, 99).map((q) => q.vector);
      const searches = [
        { topK: 10 },
        { topK: 25, filter: { cluster: 2 }, includeMetadata: true },
        { topK: 100, filter: { even: true } },
        { topK: 5, candidatePool: 7 },
      ];
      for (const options of searches) {
        const remote = await client.searchMany(queries, options);
        const mine = local.searchMany(queries, options);
        expect(mine.stats).to.deep.equal(remote.stats);
        mine.results.forEach((hits, j) => {
          expect(
            hits.map((h) => h.id),
            `query ${j}`,
          ).to.deep.equal(remote.results[j].map((h) => h.id));
          hits.forEach((h, i) => {
            expect(Math.abs(h.score - remote.results[j][i].score)).to.be.at.most(1e-5);
          });
          if (options.includeMetadata) expect(hits.map((h) => h.metadata)).to.deep.equal(remote.results[j].map((h) => h.metadata));
        });
      }
      expect(local.size).to.equal((await client.getSession()).session.vectorCount);
    });
  }

  it("facets and orderBy listings equal the server's, page by page", async () => {
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    const local = await sdk.LocalIndex.load();
    const tags = ['red', 'green', 'blue', 'é', '2026-01-01'];
    const records = Array.from({ length: 300 }, (_, i) => ({
      id: `r${i}`,
      vector: [1 + (i % 7), 1 + (i % 5)],
      metadata: { n: (i * 37) % 23, tags: [tags[i % 5], tags[(i * 3) % 5]], ...(i % 4 ? { s: tags[(i * 7) % 5] } : {}), g: i % 3 },
    }));
    await client.addMany(records);
    local.addMany(records);
    await client.deleteMany(['r3', 'r30', 'r300']);
    local.delete(['r3', 'r30', 'r300']);
    const facets: [string, Parameters<typeof client.facet>[1]][] = [
      ['tags', {}],
      ['n', { limit: 5, filter: { g: { $ne: 1 } }, ranges: [{ lt: 5 }, { gte: 5, lt: 10.5 }, { gte: 20 }] }],
      ['s', { limit: 1000 }],
    ];
    for (const [path, options] of facets) {
      const { success, session, metrics, ...remote } = await client.facet(path, options);
      expect(local.facet(path, options), path).to.deep.equal(remote);
    }
    for (const orderBy of [{ path: 'n' }, { path: 's', direction: 'desc' as const }, { path: 'tags', direction: 'asc' as const }]) {
      let remoteCursor: string | undefined, localCursor: string | undefined;
      for (let page = 0; page < 40; page++) {
        const remote = await client.list({ limit: 17, orderBy, cursor: remoteCursor, filter: { g: { $ne: 2 } }, includeMetadata: true });
        const mine = local.list({ limit: 17, orderBy, cursor: localCursor, filter: { g: { $ne: 2 } }, includeMetadata: true });
        expect(mine.vectors, `${orderBy.path} page ${page}`).to.deep.equal(remote.vectors);
        expect(mine.nextCursor === null).to.equal(remote.nextCursor === null);
        if (remote.nextCursor === null) break;
        remoteCursor = remote.nextCursor;
        localCursor = mine.nextCursor!;
      }
    }
  });

  it('answers the same error codes as the server for the same mistakes', async () => {
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    const local = await sdk.LocalIndex.load();
    await client.add({ id: 'a', vector: [1, 2, 3] }, { metric: 'cosine' });
    local.add({ id: 'a', vector: [1, 2, 3] }, { metric: 'cosine' });
    const mistakes: [string, () => Promise<unknown>, () => unknown][] = [
      ['short vector', () => client.add({ id: 'b', vector: [1, 2] }), () => local.add({ id: 'b', vector: [1, 2] })],
      ['zero vector', () => client.add({ id: 'b', vector: [0, 0, 0] }), () => local.add({ id: 'b', vector: [0, 0, 0] })],
      ['metric change', () => client.add({ id: 'b', vector: [1, 1, 1] }, { metric: 'l2' }), () => local.add({ id: 'b', vector: [1, 1, 1] }, { metric: 'l2' })],
      ['topK 0', () => client.search([1, 2, 3], { topK: 0 }), () => local.search([1, 2, 3], { topK: 0 })],
      ['array filter', () => client.search([1, 2, 3], { filter: [] as never }), () => local.search([1, 2, 3], { filter: [] as never })],
      ['query length', () => client.search([1, 2]), () => local.search([1, 2])],
      ['NaN component', () => client.search([1, 2, NaN]), () => local.search([1, 2, NaN])],
      ['facet without path', () => client.facet(''), () => local.facet('')],
      ['facet limit', () => client.facet('k', { limit: 1001 }), () => local.facet('k', { limit: 1001 })],
      ['facet range', () => client.facet('k', { ranges: [{ gte: 2, lt: 1 }] }), () => local.facet('k', { ranges: [{ gte: 2, lt: 1 }] })],
      [
        'orderBy direction',
        () => client.list({ orderBy: { path: 'k', direction: 'up' as never } }),
        () => local.list({ orderBy: { path: 'k', direction: 'up' as never } }),
      ],
      ['orderBy cursor', () => client.list({ orderBy: { path: 'k' }, cursor: 'abc' }), () => local.list({ orderBy: { path: 'k' }, cursor: 'abc' })],
    ];
    for (const [what, remote, mine] of mistakes) {
      const serverError = await remote().then(
        () => null,
        (e) => e,
      );
      let localError: any = null;
      try {
        mine();
      } catch (e) {
        localError = e;
      }
      expect(serverError, what).to.be.instanceOf(sdk.TempvecError);
      expect(localError, what).to.be.instanceOf(sdk.TempvecError);
      expect(localError.code, what).to.equal(serverError.code);
      expect(localError.details?.path ?? localError.details?.issues?.[0]?.path, what).to.equal(
        serverError.details?.path ?? serverError.details?.issues?.[0]?.path,
      );
    }
    expect(local.size).to.equal(1);
  });
});
