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
    expect(used).to.be.greaterThan(0).and.at.most(12 * PAGE);

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
    live = await startApp({ memoryBudgetBytes: 20 * PAGE });
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
    expect(res.body.usage.memoryBudgetBytes).to.equal(5 * PAGE);
    expect(res.body.usage.linearMemoryBytes).to.equal(0);
  });

  it('defaults to a quarter of the machine\'s memory', async () => {
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
