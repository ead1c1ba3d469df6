// MAX_SESSIONS sessions at once, each with one vector in a shared memory (the
// kernel pool's build): every one is created, holds its vector and answers
// a search; the memory count and budget see each one.
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { loadSharedKernelModule } from '../../src/kernel/load-node.js';
import { SessionStore } from '../../src/sessions/session-store.js';
import type { Session } from '../../src/sessions/session.js';
import { scaled } from '../helpers/scale.js';

describe('MAX_SESSIONS sessions on shared memories', function () {
  this.timeout(300_000);

  it('holds 10,000 sessions with one vector each, and each answers', async () => {
    const config = loadConfig({}, { maxSessions: scaled(10_000, 1000) });
    const store = new SessionStore(config, loadSharedKernelModule());
    const sessions: Session[] = [];
    for (let i = 0; i < config.maxSessions; i++) {
      const { session } = store.create();
      const plan = (s: Session) => store.writes.prepareUpsert(s, [{ id: `only-${i}`, vector: [i + 1, 1, 0.5] }], { metric: 'l2' });
      await store.writes.inTurn(session, () => store.writes.upsert(session, plan(session)));
      sessions.push(session);
    }
    expect(store.size).to.equal(config.maxSessions);
    expect(store.wasmMemories()).to.be.at.least(config.maxSessions);
    expect(store.memoryBytes()).to.be.at.least(config.maxSessions * 65536);
    for (const i of [0, 1, Math.floor(config.maxSessions / 2), config.maxSessions - 1]) {
      const out = await store.searches.search(sessions[i], [[i + 1, 1, 0.5]], { topK: 3 });
      expect(out.results[0]).to.deep.equal([{ id: `only-${i}`, score: 0 }]);
    }
    expect(() => store.create())
      .to.throw()
      .with.property('code', 'SERVER_AT_CAPACITY');
  });
});
