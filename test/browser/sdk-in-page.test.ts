// import('/sdk.js') in a real page (Chromium): the client runs the whole
// add/search/delete cycle against the server, and the page's own WASM kernel
// (LocalIndex, instantiated with instantiateStreaming from /kernel.wasm)
// returns the server's ids and scores for the same data and queries.
import { expect } from 'chai';
import { withDemoPage } from '../helpers/browser.js';

describe('SDK in the browser (Chromium)', function () {
  this.timeout(60_000);
  // Any page of the origin will do; each test imports the SDK itself.
  const demo = withDemoPage();

  it('runs the add, search, metadata and delete cycle against the server', async () => {
    const out = await demo.page.evaluate(async () => {
      const { TempvecClient, TempvecError } = await import('/sdk.js' as string);
      const client = new TempvecClient();
      const log: Record<string, unknown> = {};
      log.added = (
        await client.addMany(
          [
            { id: 'a', vector: new Float32Array([1, 0, 0, 0]), metadata: { tag: 'x' } },
            { id: 'b', vector: [0, 1, 0, 0], metadata: { tag: 'y' } },
            { id: 'c', vector: [0.9, 0.1, 0, 0], metadata: { tag: 'x' } },
          ],
          { metric: 'l2' },
        )
      ).mutation;
      log.baseUrl = client.baseUrl;
      log.search = (await client.search(new Float32Array([1, 0, 0, 0]), { topK: 3 })).results.map((h: { id: string }) => h.id);
      log.filtered = (await client.search([0, 1, 0, 0], { topK: 3, filter: { tag: 'x' } })).results.map((h: { id: string }) => h.id);
      await client.setMetadata('b', { tag: 'x' });
      log.metadata = (await client.getMetadata('b')).metadata;
      log.deleted = (await client.deleteMany(['a', 'zz'])).mutation;
      log.after = (await client.searchMany([[1, 0, 0, 0]], { topK: 3 })).results[0].map((h: { id: string }) => h.id);
      try {
        await client.search([1, 0]);
      } catch (e) {
        log.error = e instanceof TempvecError ? (e as InstanceType<typeof TempvecError>).code : String(e);
      }
      log.count = (await client.getSession()).session.vectorCount;
      return log;
    });
    expect(out).to.deep.equal({
      added: { added: 3, replaced: 0 },
      baseUrl: demo.live.url,
      search: ['a', 'c', 'b'],
      filtered: ['c', 'a'],
      metadata: { tag: 'x' },
      deleted: { deleted: 1, notFound: ['zz'] },
      after: ['c', 'b'],
      error: 'DIMENSION_MISMATCH',
      count: 2,
    });
  });

  it("facets and orderBy pages in the page equal the server's", async () => {
    const out = await demo.page.evaluate(async () => {
      const { TempvecClient, LocalIndex } = await import('/sdk.js' as string);
      const tags = ['red', 'é', '😀', '2026-01-01', 'b'];
      const records = Array.from({ length: 400 }, (_, i) => ({
        id: `f${i}`,
        vector: [1 + (i % 3), 1],
        metadata: { n: (i * 31) % 17, tags: [tags[i % 5], tags[(i * 3) % 5]], g: i % 3 },
      }));
      const client = new TempvecClient();
      await client.addMany(records);
      const local = await LocalIndex.load();
      local.addMany(records);
      const differ: string[] = [];
      const same = (what: string, a: unknown, b: unknown) => {
        if (JSON.stringify(a) !== JSON.stringify(b)) differ.push(what);
      };
      for (const [path, options] of [
        ['tags', {}],
        ['n', { filter: { g: 1 }, ranges: [{ lt: 8 }, { gte: 8 }] }],
      ] as const) {
        const { values, distinctValues, longStrings, ranges } = await client.facet(path, options);
        same(`facet ${path}`, local.facet(path, options), { values, distinctValues, longStrings, ...(ranges ? { ranges } : {}) });
      }
      let pages = 0;
      for (const orderBy of [{ path: 'n', direction: 'desc' }, { path: 'tags' }]) {
        let remoteCursor: string | undefined, localCursor: string | undefined;
        do {
          const remote = await client.list({ limit: 53, orderBy, cursor: remoteCursor });
          const mine = local.list({ limit: 53, orderBy, cursor: localCursor });
          same(`${orderBy.path} page ${pages++}`, mine.vectors, remote.vectors);
          remoteCursor = remote.nextCursor ?? undefined;
          localCursor = mine.nextCursor ?? undefined;
        } while (remoteCursor && localCursor);
      }
      return { differ, pages };
    });
    expect(out).to.deep.equal({ differ: [], pages: 16 });
  });

  for (const metric of ['cosine', 'l2']) {
    it(`the in-page kernel returns the server's ids and scores within 1e-5 (${metric})`, async () => {
      const out = await demo.page.evaluate(async (metric) => {
        const { TempvecClient, LocalIndex } = await import('/sdk.js' as string);
        let seed = metric === 'l2' ? 5 : 3;
        const rand = () => {
          seed = (seed * 1664525 + 1013904223) >>> 0;
          return seed / 2 ** 32 - 0.5;
        };
        const points = Array.from({ length: 1500 }, (_, i) => ({
          id: `p${i}`,
          vector: Float32Array.from({ length: 48 }, () => rand() + (i % 5)),
          metadata: { cluster: i % 5 },
        }));
        const queries = Array.from({ length: 8 }, () => Float32Array.from({ length: 48 }, () => rand() + 2));
        const client = new TempvecClient();
        for (let i = 0; i < points.length; i += 500) await client.addMany(points.slice(i, i + 500), { metric });
        await client.deleteMany(['p3', 'p10', 'p11']);
        const local = await LocalIndex.load();
        for (let i = 0; i < points.length; i += 500) local.addMany(points.slice(i, i + 500), { metric });
        local.delete(['p3', 'p10', 'p11']);
        const runs = [];
        for (const options of [{ topK: 20 }, { topK: 50, filter: { cluster: 3 } }]) {
          const server = (await client.searchMany(queries, options)).results;
          const t0 = performance.now();
          const mine = local.searchMany(queries, options).results;
          runs.push({ server, mine, localMs: performance.now() - t0 });
        }
        return { runs, kernelSource: local.kernelSource };
      }, metric);
      expect(out.kernelSource).to.equal('instantiateStreaming');
      for (const { server, mine } of out.runs) {
        expect(mine).to.have.length(server.length);
        mine.forEach((hits: { id: string; score: number }[], j: number) => {
          expect(
            hits.map((h) => h.id),
            `query ${j}`,
          ).to.deep.equal(server[j].map((h: { id: string }) => h.id));
          hits.forEach((h, i) => {
            expect(Math.abs(h.score - server[j][i].score)).to.be.at.most(1e-5);
          });
        });
      }
    });
  }

  it('serves the kernel as application/wasm; the only console error is the deliberate 400 above', async () => {
    const res = await fetch(`${demo.live.url}/kernel.wasm`);
    expect(res.headers.get('content-type')).to.equal('application/wasm');
    expect(demo.errors).to.deep.equal(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});
