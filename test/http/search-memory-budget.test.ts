// MEMORY_BUDGET_BYTES and searches: a search's scratch grows the session's
// linear memory (which never shrinks), so a search that would grow it past
// the budget answers 503 SERVER_AT_CAPACITY and grows nothing. The budget
// also counts the JS heap and bodies in flight, so each test sets it, once the
// rows are stored, to leave a known room of linear memory (queries by id keep
// the bodies small).
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { randomVectors, seededRng } from '../helpers/random.js';

const PAGE = 65536;
/** Room for the small bodies of the searches (a few ids or one query) while they are in flight. */
const BODY_ROOM = 32 * 1024;

/** Leave the linear memory `linearRoom` bytes of room past what the sessions hold, whatever else is counted. */
function leaveRoom(app: LiveApp, linearBudget: number): number {
  const { budget } = app.store;
  budget.limitBytes = budget.usedBytes - budget.linearMemoryBytes + linearBudget + BODY_ROOM;
  return budget.limitBytes;
}
const ids = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
const vectors = (n: number, dim: number) =>
  randomVectors(seededRng(n + dim), n, dim).map((vector, i) => ({ id: `v${i}`, vector, metadata: { g: i === 0 ? 0 : 1 } }));

describe('memory budget and searches', () => {
  let live: LiveApp | undefined;
  const open = async (config: Parameters<typeof startApp>[0]) => (live = await startApp(config));
  afterEach(async () => {
    await live?.close();
    live = undefined;
  });

  it('answers a search-many past the budget with 503; smaller ones work', async () => {
    // 64 rows of 1024 float32 take at most 6 pages. 16 queries need 130 KB of
    // scratch (over a page: the memory must grow, and stays under 8 pages);
    // 64 queries with topK 100 need 330 KB more than the rows (past 8 pages).
    const app = await open({ memoryBudgetBytes: 0 });
    const token = await app.newToken();
    expect((await app.send('POST', '/vectors/add-many', { token, body: { vectors: vectors(64, 1024) } })).status).to.equal(200);
    const held = app.store.memoryBytes();
    const limit = leaveRoom(app, 8 * PAGE);
    const small = { queryIds: ids(16), topK: 10 };

    const first = await app.send('POST', '/search-many', { token, body: small });
    expect(first.status).to.equal(200);
    const grown = app.store.memoryBytes();
    expect(grown)
      .to.be.greaterThan(held)
      .and.at.most(8 * PAGE);
    // What the search took is in the session's stats and the server's usage.
    expect((await app.send('GET', '/session', { token })).body.stats.linearMemoryBytes).to.equal(grown);
    expect((await app.send('GET', '/limits')).body.usage.linearMemoryBytes).to.equal(grown);

    const big = await app.send('POST', '/search-many', { token, body: { queryIds: ids(64), topK: 99 } });
    expect(big.status).to.equal(503);
    expect(big.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(big.body.error.details).to.include({ memoryBudgetBytes: limit, linearMemoryBytes: grown });
    expect(big.body.error.details.requestedBytes).to.be.greaterThan(limit - big.body.error.details.usedBytes);
    expect(Number(big.headers.get('retry-after'))).to.be.greaterThan(0);
    expect(app.store.memoryBytes()).to.equal(grown);

    const session = await app.send('GET', '/session', { token });
    expect(session.body.session.vectorCount).to.equal(64);
    expect(session.body.stats.linearMemoryBytes).to.equal(grown);
    const again = await app.send('POST', '/search-many', { token, body: small });
    expect(again.status).to.equal(200);
    expect(again.body.results).to.deep.equal(first.body.results);
  });

  it('answers a filtered /search past the budget with 503; unfiltered works', async () => {
    // 50000 rows of one float32: a filter matching all but one needs a row
    // list of 200 KB, more than the budget leaves above the rows (one page
    // over what the rows can take, the static data counted as a whole page).
    const rows = 50_000;
    const app = await open({ memoryBudgetBytes: 0, maxVectorsPerSession: rows, maxAddManyBatch: rows, requestRatePerSec: 0 });
    const token = await app.newToken();
    const add = await app.send('POST', '/vectors/add-many', { token, body: { vectors: vectors(rows, 1), metric: 'l2' } });
    expect(add.status).to.equal(200);
    const held = app.store.memoryBytes();
    leaveRoom(app, KernelInstance.memoryBytesForNew(1, rows, rows) + PAGE);

    const filtered = await app.send('POST', '/search', { token, body: { queryVector: [0.5], topK: 3, filter: { g: 1 } } });
    expect(filtered.status).to.equal(503);
    expect(filtered.body.error.code).to.equal('SERVER_AT_CAPACITY');
    expect(filtered.body.error.message).to.match(/search/);
    expect(app.store.memoryBytes()).to.equal(held);

    const plain = await app.send('POST', '/search', { token, body: { queryVector: [0.5], topK: 3 } });
    expect(plain.status).to.equal(200);
    expect(plain.body.results).to.have.length(3);
    expect(app.store.budget.usedBytes).to.be.at.most(app.store.budget.limitBytes);
    expect((await app.send('GET', '/session', { token })).body.session.vectorCount).to.equal(rows);
  });

  it('budgets the searches of a session reopened from DATA_DIR after a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tempvec-budget-'));
    try {
      const config = { memoryBudgetBytes: 0, dataDir };
      let app = await open(config);
      const token = await app.newToken();
      expect((await app.send('POST', '/vectors/add-many', { token, body: { vectors: vectors(64, 1024) } })).status).to.equal(200);
      await app.close();
      live = undefined;
      app = await open(config);
      // Reopened by its first request, then counted like any session.
      expect((await app.send('GET', '/session', { token })).status).to.equal(200);
      leaveRoom(app, 8 * PAGE);
      const big = await app.send('POST', '/search-many', { token, body: { queryIds: ids(64), topK: 99 } });
      expect(big.status).to.equal(503);
      expect(big.body.error.code).to.equal('SERVER_AT_CAPACITY');
      expect((await app.send('POST', '/search', { token, body: { queryId: 'v3' } })).status).to.equal(200);
    } finally {
      await live?.close();
      live = undefined;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('takes every search with the budget off (0)', async () => {
    const app = await open({ memoryBudgetBytes: 0 });
    const token = await app.newToken();
    await app.send('POST', '/vectors/add-many', { token, body: { vectors: vectors(64, 1024) } });
    const held = app.store.memoryBytes();
    const big = await app.send('POST', '/search-many', { token, body: { queryVectors: randomVectors(seededRng(2), 64, 1024), topK: 100 } });
    expect(big.status).to.equal(200);
    expect(app.store.memoryBytes()).to.be.greaterThan(held);
  });
});
