// The stored share of MEMORY_BUDGET_BYTES (memoryStoredMaxBytes, config.ts):
// writers filling what they may are refused there, and stored data never
// passes it, while another session's reads (bodies, answers) still fit in
// the rest of the budget.
import { expect } from 'chai';
import { memoryStoredMaxBytes, SPEC_LIMITS } from '../../src/config.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const MiB = 1024 * 1024;
/** 10 vectors with 256 unique metadata values each (the abuse bench's metadata attack, scaled down). */
const batch = (tag: string) =>
  Array.from({ length: 10 }, (_, i) => ({
    id: `${tag}-${i}`,
    vector: [1, 2, 3, 4],
    metadata: Object.fromEntries(Array.from({ length: 256 }, (_, k) => [`k${k}`, `${tag}_${i}_${k}`])),
  }));

describe('memory budget: the stored share', () => {
  let live: LiveApp;
  afterEach(() => live.close());

  it('publishes memoryStoredMaxBytes in GET /limits, the share of the budget', async () => {
    live = await startApp({ memoryBudgetBytes: 10 * MiB });
    const { body } = await live.send('GET', '/limits');
    expect(body.limits.memoryStoredMaxBytes).to.equal(Math.floor(10 * MiB * SPEC_LIMITS.storedShareOfBudget));
    expect(body.limits.memoryStoredMaxBytes).to.equal(memoryStoredMaxBytes(10 * MiB));
    expect(body.limits.memoryStoredMaxBytes).to.be.lessThan(body.limits.memoryBudgetBytes);
  });

  it('refuses writes past the share with 503, never stores past it, and still answers another session’s reads', async () => {
    const budget = 6 * MiB;
    live = await startApp({ memoryBudgetBytes: budget, requestRatePerSec: 0 });
    const neighbour = await live.newToken();
    const small = Array.from({ length: 100 }, (_, i) => ({ id: `p${i}`, vector: Array.from({ length: 16 }, (_, j) => Math.sin(i + j)), metadata: { n: i } }));
    expect((await live.send('POST', '/vectors/add-many', { token: neighbour, body: { vectors: small } })).status).to.equal(200);
    expect((await live.send('POST', '/search', { token: neighbour, body: { queryVector: small[0].vector, topK: 5 } })).status).to.equal(200);

    const writers = [await live.newToken(), await live.newToken()];
    const refusals: Array<{ status: number; code: string; details: Record<string, number> }> = [];
    for (let b = 0; b < 400 && refusals.length < 10; b++) {
      const res = await live.send('POST', '/vectors/add-many', { token: writers[b % 2], body: { vectors: batch(`w${b}`) } });
      if (res.status !== 200) refusals.push({ status: res.status, code: res.body.error.code, details: res.body.error.details });
      expect(live.store.budget.storedBytes, `batch ${b}`).to.be.at.most(memoryStoredMaxBytes(budget));
    }
    expect(refusals.length, 'no write was refused').to.equal(10);
    for (const refusal of refusals) {
      expect(refusal.status).to.equal(503);
      expect(refusal.code).to.equal('SERVER_AT_CAPACITY');
    }
    // Refused at the share, not at the whole budget: room was left for requests in flight.
    expect(refusals[0].details.memoryStoredMaxBytes).to.equal(memoryStoredMaxBytes(budget));
    const usage = live.store.memoryUsage();
    expect(usage.memoryUsedBytes).to.be.at.most(budget);
    // Not refused far below it either (the next doubling of the store's arrays must fit: up to half of it).
    expect(live.store.budget.storedBytes).to.be.greaterThan(0.5 * memoryStoredMaxBytes(budget));

    // The neighbour's reads answer: searches, a filtered one, a fetch of its rows with their metadata.
    for (let i = 0; i < 20; i++) {
      const res = await live.send('POST', '/search', { token: neighbour, body: { queryVector: small[i].vector, topK: 5, includeMetadata: true } });
      expect(res.status, JSON.stringify(res.body.error)).to.equal(200);
      expect(res.body.results[0].id).to.equal(`p${i}`);
    }
    expect((await live.send('POST', '/vectors/count', { token: neighbour, body: { filter: { n: { $lt: 10 } } } })).body.count).to.equal(10);
    const got = await live.send('POST', '/vectors/get-many', { token: neighbour, body: { ids: small.map((v) => v.id) } });
    expect(got.status).to.equal(200);
    expect(live.store.budget.storedBytes).to.be.at.most(memoryStoredMaxBytes(budget));
  });
});
