// GET /limits and GET /session report memory without walking every session
// on each call (23 ms for 10,000): the walk at most once per USAGE_RECOUNT_MS,
// the budget's counters in between, which each request keeps current for its
// own session.
import { expect } from 'chai';
import { USAGE_RECOUNT_MS } from '../../src/sessions/budget-ledger.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('usage reports walk the sessions at most once per USAGE_RECOUNT_MS', () => {
  let live: LiveApp;
  before(async () => {
    live = await startApp({ tokenRatePerMin: 0, requestRatePerSec: 0 });
  });
  after(() => live.close());

  it('answers many GET /limits with one walk, and is current for the changes requests made', async () => {
    for (let i = 0; i < 50; i++) live.store.create();
    const token = await live.newToken();
    await sleep(USAGE_RECOUNT_MS + 20);
    let recounts = 0;
    const store = live.store as unknown as { recount(session: unknown): void };
    const recount = store.recount.bind(store);
    store.recount = (session) => {
      recounts++;
      recount(session);
    };
    try {
      for (let i = 0; i < 10; i++) expect((await live.send('GET', '/limits')).status).to.equal(200);
      // One walk over the 51 sessions, not ten.
      expect(recounts).to.equal(51);
      const before = (await live.send('GET', '/limits')).body.usage.linearMemoryBytes;
      expect((await live.send('POST', '/vectors/add', { token, body: { id: 'a', vector: [1, 2, 3] } })).status).to.equal(200);
      // The add recounted its session: the next report has it, with no walk.
      const after = (await live.send('GET', '/limits')).body.usage.linearMemoryBytes;
      expect(after).to.be.greaterThan(before);
      expect((await live.send('GET', '/session', { token })).body.serverMemory.linearMemoryBytes).to.equal(after);
      await sleep(USAGE_RECOUNT_MS + 20);
      recounts = 0;
      await live.send('GET', '/limits');
      expect(recounts).to.equal(51);
    } finally {
      store.recount = recount;
    }
  });
});
