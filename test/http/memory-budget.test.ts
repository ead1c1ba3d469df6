// MEMORY_BUDGET_BYTES over all sessions' linear memories, and MAX_SESSIONS.
import { expect } from 'chai';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const PAGE = 65536;
const vectors = (n: number, dim: number, prefix: string) =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, vector: Array.from({ length: dim }, (_, j) => ((i * 7 + j) % 13) + 1) }));

describe('memory budget', () => {
  let live: LiveApp;
  afterEach(() => live.close());

  it('answers an add past the budget with 503 and Retry-After, storing nothing', async () => {
    // 64 rows of 256 float32 fit in 2 pages; 1000 rows need 16.
    live = await startApp({ memoryBudgetBytes: 12 * PAGE });
    const a = await live.newToken();
    const b = await live.newToken();
    expect((await live.send('POST', '/vectors/add-many', { token: a, body: { vectors: vectors(64, 256, 'a') } })).status).to.equal(200);
    const used = live.store.memoryBytes();
    expect(used)
      .to.be.greaterThan(0)
      .and.at.most(12 * PAGE);

    const refused = await live.send('POST', '/vectors/add-many', { token: b, body: { vectors: vectors(1000, 256, 'b') } });
    expect(refused.status).to.equal(503);
    expect(refused.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(live.store.memoryBytes()).to.equal(used);
    const session = await live.send('GET', '/session', { token: b });
    expect(session.body.session.vectorCount).to.equal(0);
    expect(session.body.session.initialized).to.equal(false);
  });

  it('still takes adds that fit in memory already held', async () => {
    live = await startApp({ memoryBudgetBytes: 3 * PAGE });
    const token = await live.newToken();
    expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors: vectors(10, 16, 'a') } })).status).to.equal(200);
    // The first rows reserve room for 64; filling it up allocates nothing.
    expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors: vectors(54, 16, 'b') } })).status).to.equal(200);
    expect((await live.send('POST', '/vectors/add', { token, body: { id: 'a0', vector: Array(16).fill(2) } })).status).to.equal(200);
  });

  it('counts memory freed by a reset', async () => {
    // 1000 rows of 256 take 16 pages, their body ~0.8 MB in flight, their ids ~0.25 MB of heap.
    live = await startApp({ memoryBudgetBytes: 34 * PAGE });
    const a = await live.newToken();
    const b = await live.newToken();
    expect((await live.send('POST', '/vectors/add-many', { token: a, body: { vectors: vectors(1000, 256, 'a') } })).status).to.equal(200);
    expect((await live.send('POST', '/vectors/add-many', { token: b, body: { vectors: vectors(1000, 256, 'b') } })).status).to.equal(503);
    await live.send('POST', '/index/reset', { token: a });
    expect((await live.send('POST', '/vectors/add-many', { token: b, body: { vectors: vectors(1000, 256, 'b') } })).status).to.equal(200);
  });

  it('publishes the budget and what is in use in GET /limits', async () => {
    live = await startApp({ memoryBudgetBytes: 5 * PAGE });
    const res = await live.send('GET', '/limits');
    expect(res.body.limits.memoryBudgetBytes).to.equal(5 * PAGE);
    expect(res.body.usage).to.deep.include({
      memoryBudgetBytes: 5 * PAGE,
      linearMemoryBytes: 0,
      heapBytes: 0,
      bodiesInFlightBytes: 0,
      answersInFlightBytes: 0,
      memoryUsedBytes: 0,
    });
  });

  it('counts the metadata store and refuses what would pass the budget, storing nothing', async () => {
    // 256 unique values a vector take ~25 KB of metadata store each (the attack of issue 16, scaled down).
    const budget = 4 * 1024 * 1024;
    live = await startApp({ memoryBudgetBytes: budget, requestRatePerSec: 0 });
    const token = await live.newToken();
    const batch = (b: number) =>
      Array.from({ length: 10 }, (_, i) => ({
        id: `m${b}-${i}`,
        vector: [1, 2, 3, 4],
        metadata: Object.fromEntries(Array.from({ length: 256 }, (_, k) => [`k${k}`, `v${b}_${i}_${k}`])),
      }));
    let stored = 0;
    let refused: Awaited<ReturnType<LiveApp['send']>> | undefined;
    for (let b = 0; b < 100 && !refused; b++) {
      const res = await live.send('POST', '/vectors/add-many', { token, body: { vectors: batch(b) } });
      if (res.status === 200) stored += 10;
      else refused = res;
    }
    expect(refused, 'no add was refused').to.not.equal(undefined);
    expect(refused!.status).to.equal(503);
    expect(refused!.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(Number(refused!.headers.get('retry-after'))).to.be.greaterThan(0);
    // Refused before the budget filled with linear memory: the metadata store is what it counted.
    expect(stored).to.be.within(10, 200);
    const { body } = await live.send('GET', '/session', { token });
    expect(body.session.vectorCount).to.equal(stored);
    expect(body.stats.metadataBytes).to.be.greaterThan(stored * 10_000);
    expect(body.stats.metadataJsonBytes).to.be.greaterThan(stored * 4_000);
    expect(body.serverMemory.memoryUsedBytes).to.be.at.most(budget);
    expect(body.serverMemory.metadataBytes).to.be.greaterThan(body.serverMemory.linearMemoryBytes);
    // A metadata change that would pass it is refused too; one that shrinks it is taken.
    const big = Object.fromEntries(Array.from({ length: 200 }, (_, k) => [`k${k}`, 'x'.repeat(20) + k]));
    const setBig = await live.send('POST', '/vectors/metadata/set', { token, body: { id: 'm0-0', metadata: big } });
    if (setBig.status !== 200) expect(setBig.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect((await live.send('POST', '/vectors/metadata/delete', { token, body: { id: 'm0-1' } })).status).to.equal(200);
    // Deleting frees the count.
    const before = live.store.memoryUsage();
    expect((await live.send('POST', '/vectors/clear', { token })).status).to.equal(200);
    expect(live.store.heapBytes()).to.be.lessThan(before.heapBytes);
    expect(live.store.memoryUsage().metadataBytes).to.equal(0);
    expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors: batch(0) } })).status).to.equal(200);
  });

  it('counts a body in flight and refuses one whose length would pass the budget before reading it', async () => {
    live = await startApp({ memoryBudgetBytes: 256 * 1024 });
    const token = await live.newToken();
    const body = { vectors: vectors(500, 256, 'a') };
    const text = JSON.stringify(body);
    expect(text.length).to.be.greaterThan(256 * 1024);
    const refused = await live.send('POST', '/vectors/add-many', { token, body });
    expect(refused.status).to.equal(503);
    expect(refused.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(refused.body.error.details.requestedBytes).to.equal(Buffer.byteLength(text));
    expect(live.store.budget.usage().bodiesInFlightBytes).to.equal(0);
    expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors: vectors(20, 256, 'a') } })).status).to.equal(200);
    expect(live.store.budget.usage().bodiesInFlightBytes).to.equal(0);
  });

  it("defaults to a quarter of the machine's memory", async () => {
    const { loadConfig } = await import('../../src/config.js');
    const { totalmem } = await import('node:os');
    expect(loadConfig({}).memoryBudgetBytes).to.equal(Math.floor(totalmem() / 4));
    live = await startApp();
  });

  it('answers POST /token past MAX_SESSIONS with 503 and Retry-After', async () => {
    live = await startApp({ maxSessions: 2 });
    await live.newToken();
    await live.newToken();
    const refused = await live.send('POST', '/token');
    expect(refused.status).to.equal(503);
    expect(refused.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(live.store.size).to.equal(2);
  });
});
