// maxFilterNodes: every node of a filter counts (each field condition, each
// element of $in/$nin, each $and/$or/$not and each of their clauses). A
// filter at the limit is answered on every route that takes one; one node
// past it is 400 VALIDATION_ERROR naming the limit at the part where the
// count passed it, and nothing changes. The SDK's LocalIndex refuses the same.
import { expect } from 'chai';
import { loadConfig, publicLimits } from '../../src/config.js';
import { parseFilter } from '../../src/index/filter.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const LIMIT = 12;
/** A filter of exactly `n` nodes (n >= 2): one $in of n - 1 elements. */
const inOf = (n: number) => ({ g: { $in: Array.from({ length: n - 1 }, (_, i) => i) } });
/** Another shape of `n` nodes (n >= 4, even): an $or (1) of ($not of an equality) clauses (2 each), a $nin of an empty list (2) and an equality (1). */
const clausesOf = (n: number) => ({ $or: [...Array.from({ length: (n - 4) / 2 }, (_, i) => ({ $not: { g: i } })), { g: { $nin: [] } }, { g: 99 }] });

describe('maxFilterNodes: counted on the parsed filter', () => {
  it('counts each field condition, $in/$nin element, logical operator and clause', () => {
    const counts: [Record<string, unknown>, number][] = [
      [{ a: 1 }, 1],
      [{ a: 1, b: 2 }, 3], // the implicit and
      [{ a: { $in: [1, 2, 3] } }, 4],
      [{ a: { $nin: [1, 2, 3] } }, 5], // not, or, 3 elements
      [{ a: { $ne: 1 } }, 2],
      [{ a: { $gt: 1, $lt: 5 } }, 3],
      [{ $and: [{ a: 1 }, { b: 2 }] }, 3],
      [{ $or: [{ a: 1 }, { $not: { b: 2 } }] }, 4],
      [clausesOf(12), 12],
      [{ a: [[0], [1]] }, 1], // an array is one operand
    ];
    for (const [filter, n] of counts) {
      expect(() => parseFilter(filter, '/filter', n), JSON.stringify(filter)).not.to.throw();
      expect(() => parseFilter(filter, '/filter', n - 1), JSON.stringify(filter))
        .to.throw()
        .with.property('details')
        .that.includes({ limit: 'maxFilterNodes', maxFilterNodes: n - 1 });
    }
  });

  it('is published in GET /limits, 1024 by default', () => {
    expect(publicLimits(loadConfig({})).maxFilterNodes).to.equal(1024);
    expect(publicLimits(loadConfig({ MAX_FILTER_NODES: '7' })).maxFilterNodes).to.equal(7);
  });
});

describe('maxFilterNodes over HTTP', () => {
  let live: LiveApp;
  let token: string;

  before(async () => {
    live = await startApp({ maxFilterNodes: LIMIT });
    token = await live.newToken();
    const vectors = Array.from({ length: 30 }, (_, i) => ({ id: `v${i}`, vector: [1, i + 1], metadata: { g: i % 15 } }));
    expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors } })).status).to.equal(200);
  });
  after(() => live.close());

  const routes: [string, (filter: unknown) => unknown][] = [
    ['/search', (filter) => ({ queryVector: [1, 1], topK: 50, filter })],
    ['/search-many', (filter) => ({ queryVectors: [[1, 1]], topK: 50, filter })],
    ['/vectors/count', (filter) => ({ filter })],
    ['/vectors/facet', (filter) => ({ path: 'g', filter })],
    ['/vectors/list', (filter) => ({ filter, limit: 100, orderBy: { path: 'g' } })],
    ['/vectors/list', (filter) => ({ filter, limit: 100 })],
  ];

  it('answers a filter of exactly maxFilterNodes nodes on every route', async () => {
    expect((await live.send('GET', '/limits')).body.limits.maxFilterNodes).to.equal(LIMIT);
    for (const filter of [inOf(LIMIT), clausesOf(LIMIT)]) {
      for (const [path, body] of routes) {
        const res = await live.send('POST', path, { token, body: body(filter) });
        expect(res.status, `${path} ${JSON.stringify(res.body)}`).to.equal(200);
      }
    }
    expect((await live.send('POST', '/vectors/count', { token, body: { filter: inOf(LIMIT) } })).body.count).to.equal(22);
  });

  it('refuses one node more with 400 naming maxFilterNodes and the part, changing nothing', async () => {
    for (const [filter, pointer] of [
      [inOf(LIMIT + 1), `/filter/g/$in/${LIMIT - 1}`],
      [{ ...inOf(LIMIT), h: 1 }, '/filter/g/$in/10'], // the implicit and counts first
    ] as const) {
      for (const [path, body] of [...routes, ['/vectors/delete-many', (f: unknown) => ({ filter: f })] as const]) {
        const res = await live.send('POST', path, { token, body: body(filter) });
        expect(res.status, path).to.equal(400);
        expect(res.body.error.code).to.equal('VALIDATION_ERROR');
        expect(res.body.error.message).to.include('maxFilterNodes');
        const issue = res.body.error.details.issues[0];
        expect(issue.path, path).to.equal(pointer);
        expect(issue.message).to.include(`more than ${LIMIT} nodes`).and.to.include('maxFilterNodes');
      }
    }
    expect((await live.send('POST', '/vectors/count', { token, body: {} })).body.count).to.equal(30);
    // At the limit, delete-many by filter deletes.
    const deleted = await live.send('POST', '/vectors/delete-many', { token, body: { filter: inOf(LIMIT) } });
    expect(deleted.status, JSON.stringify(deleted.body)).to.equal(200);
    expect((await live.send('POST', '/vectors/count', { token, body: {} })).body.count).to.equal(8);
  });
});

describe('maxFilterNodes in the SDK LocalIndex', () => {
  it("applies a server's limit read from GET /limits, and the default without one", async () => {
    const sdk: typeof import('../../src/sdk/index.js') = await import(new URL('../../build/sdk.js', import.meta.url).href);
    const limits = { ...publicLimits(loadConfig({})), maxFilterNodes: LIMIT };
    const local = await sdk.LocalIndex.load({ limits });
    local.addMany(Array.from({ length: 30 }, (_, i) => ({ id: `v${i}`, vector: [1, i + 1], metadata: { g: i % 15 } })));
    expect(local.count(inOf(LIMIT))).to.equal(22);
    for (const call of [() => local.count(inOf(LIMIT + 1)), () => local.deleteByFilter(inOf(LIMIT + 1)), () => local.list({ filter: inOf(LIMIT + 1) })]) {
      let error: any = null;
      try {
        call();
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(sdk.TempvecError);
      expect(error.code).to.equal('VALIDATION_ERROR');
      expect(error.details.issues[0].path).to.equal(`/filter/g/$in/${LIMIT - 1}`);
    }
    expect(local.size).to.equal(30);
    const byDefault = await sdk.LocalIndex.load();
    byDefault.addMany([{ id: 'a', vector: [1, 2], metadata: { g: 1 } }]);
    expect(byDefault.count(inOf(1024))).to.equal(1);
    expect(() => byDefault.count(inOf(1025))).to.throw(/maxFilterNodes/);
  });
});
