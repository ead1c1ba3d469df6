// Inactivity TTL over HTTP: expiry, sliding expiry, and the memory it frees.
import { expect } from 'chai';
import { ManualClock } from '../helpers/clock.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionOf, sessionWith } from './fixtures.js';

const TTL = 30_000;

describe('session expiry (injected clock)', () => {
  const clock = new ManualClock();
  const api = useServer({ sessionTtlMs: TTL }, clock.now);

  it('a session idle for the TTL answers SESSION_EXPIRED; a new token works', async () => {
    const token = await sessionWith(api, [{ id: 'a', vector: [1, 2] }]);
    clock.advance(TTL - 1);
    expect((await sessionOf(api, token)).ttlMsRemaining).to.equal(TTL); // that request slid it again
    clock.advance(TTL);
    expectError(await api.get('/session', { token }), 401, 'SESSION_EXPIRED');
    expectError(await api.post('/vectors/get', { token, body: { id: 'a' } }), 401, 'SESSION_EXPIRED');
    expectError(await api.post('/index/reset', { token }), 401, 'SESSION_EXPIRED');
    const fresh = await api.token();
    const session = await sessionOf(api, fresh);
    expect(session).to.deep.include({ initialized: false, vectorCount: 0 });
  });

  it('every authenticated request slides lastAccessedAt and expiresAt forward', async () => {
    const token = await api.token();
    const requests = [
      () => api.get('/session', { token }),
      () => api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2] } }),
      () => api.post('/vectors/has', { token, body: { id: 'a' } }),
      () => api.post('/search', { token, body: { queryVector: [1, 1] } }),
      () => api.post('/vectors/clear', { token }),
    ];
    for (let round = 0; round < 2; round++) {
      for (const request of requests) {
        clock.advance(TTL * 0.75);
        const body = expectOk(await request());
        expect(body.session.lastAccessedAt).to.equal(new Date(clock.time).toISOString());
        expect(body.session.expiresAt).to.equal(new Date(clock.time + TTL).toISOString());
        expect(body.session.ttlMsRemaining).to.equal(TTL);
      }
    }
    // Alive after 7.5 TTLs since it was created.
    expect((await sessionOf(api, token)).vectorCount).to.equal(0);
  });

  it('unauthenticated requests do not keep a session alive', async () => {
    const token = await api.token();
    for (let i = 0; i < 4; i++) {
      clock.advance(TTL / 4);
      await api.get('/limits');
      await api.post('/token');
    }
    expectError(await api.get('/session', { token }), 401, 'SESSION_EXPIRED');
  });

  it('the sweeper expires idle sessions and frees their memory (GET /limits)', async () => {
    const memory = async () => expectOk(await api.get('/limits')).usage.linearMemoryBytes as number;
    api.store.sweep();
    clock.advance(TTL); // every session so far is idle now
    api.store.sweep();
    expect(await memory()).to.equal(0);
    const token = await sessionWith(api, [{ id: 'a', vector: new Array(1024).fill(1) }]);
    expect(await memory()).to.be.above(0);
    const sessions = expectOk(await api.get('/limits')).usage.activeSessions;
    clock.advance(TTL);
    api.store.sweep();
    expect(await memory()).to.equal(0);
    expect(expectOk(await api.get('/limits')).usage.activeSessions).to.equal(sessions - 1);
    expectError(await api.get('/session', { token }), 401, 'SESSION_EXPIRED');
  });
});

describe('session expiry (real clock, short TTL)', () => {
  const api = useServer({ sessionTtlMs: 500 });

  it('expires a session after 500 ms of inactivity, while a used one lives on', async () => {
    const idle = await api.token();
    const busy = await api.token();
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 120));
      expectOk(await api.get('/session', { token: busy }));
    }
    expectError(await api.get('/session', { token: idle }), 401, 'SESSION_EXPIRED');
    expectOk(await api.get('/session', { token: busy }));
  });
});
