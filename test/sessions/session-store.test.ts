// SessionStore: authentication, sliding expiry, the sweeper, MAX_SESSIONS.
import { expect } from 'chai';
import { loadConfig, type Config } from '../../src/config.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { SessionStore } from '../../src/sessions/session-store.js';
import { hashToken, newToken } from '../../src/sessions/token.js';
import { ManualClock } from '../helpers/clock.js';
import { expectApiError } from '../helpers/errors.js';

const TTL = 60_000;

function newStore(overrides: Partial<Config> = {}) {
  const clock = new ManualClock();
  const store = new SessionStore(loadConfig({}, { sessionTtlMs: TTL, ...overrides }), loadKernelModule(), clock.now);
  return { store, clock };
}

describe('SessionStore', () => {
  it('keeps only the token hash and finds the session by the token', () => {
    const { store } = newStore();
    const { token, session } = store.create();
    expect(session.tokenHash).to.equal(hashToken(token));
    expect(JSON.stringify(session.view(0))).to.not.include(token);
    expect(session.id).to.not.equal(token);
    expect(store.authenticate(token)).to.equal(session);
  });

  it('answers INVALID_TOKEN for an unknown token and for a malformed one', () => {
    const { store } = newStore();
    store.create();
    expect(expectApiError(() => store.authenticate(newToken()), 'INVALID_TOKEN').status).to.equal(401);
    expectApiError(() => store.authenticate('not-a-token'), 'INVALID_TOKEN');
    expectApiError(() => store.authenticate(''), 'INVALID_TOKEN');
  });

  it('expires a session after TTL of inactivity: SESSION_EXPIRED, never INVALID_TOKEN', () => {
    const { store, clock } = newStore();
    const { token } = store.create();
    clock.advance(TTL - 1);
    store.authenticate(token);
    clock.advance(TTL);
    expect(expectApiError(() => store.authenticate(token), 'SESSION_EXPIRED').status).to.equal(401);
    expectApiError(() => store.authenticate(token), 'SESSION_EXPIRED');
    expect(store.size).to.equal(0);
  });

  it('slides the expiry: each authentication moves lastAccessedAt and expiresAt', () => {
    const { store, clock } = newStore();
    const { token, session } = store.create();
    const created = clock.time;
    expect(session.expiresAt).to.equal(created + TTL);
    for (let i = 0; i < 5; i++) {
      clock.advance(TTL / 2);
      store.authenticate(token);
      expect(session.lastAccessedAt).to.equal(clock.time);
      expect(session.expiresAt).to.equal(clock.time + TTL);
    }
    expect(clock.time - created, 'alive long past one TTL from creation').to.be.greaterThan(2 * TTL);
  });

  it('counts a change as an access: lastAccessedAt is never earlier than updatedAt', () => {
    const { store, clock } = newStore();
    const { token, session } = store.create();
    clock.advance(1000);
    store.authenticate(token);
    clock.advance(7); // the time a request takes between its lookup and its write
    session.markUpdated(clock.time);
    expect(session.updatedAt).to.equal(clock.time);
    expect(session.lastAccessedAt).to.equal(clock.time);
    expect(session.expiresAt).to.equal(clock.time + TTL);
    const view = session.view(clock.time);
    expect(Date.parse(view.lastAccessedAt)).to.be.at.least(Date.parse(view.updatedAt));
  });

  it('the sweeper expires idle sessions and frees their linear memory', () => {
    const { store, clock } = newStore();
    const idle = store.create();
    const busy = store.create();
    idle.session.index.upsert([{ id: 'a', vector: new Array(256).fill(1) }]);
    busy.session.index.upsert([{ id: 'a', vector: new Array(256).fill(1) }]);
    const both = store.memoryBytes();
    expect(idle.session.index.memoryBytes).to.be.greaterThan(0);
    clock.advance(TTL / 2);
    store.authenticate(busy.token);
    clock.advance(TTL / 2);
    store.sweep();
    expect(store.size).to.equal(1);
    expect(idle.session.index.memoryBytes, 'the expired index dropped its memory').to.equal(0);
    expect(idle.session.index.size).to.equal(0);
    expect(store.memoryBytes()).to.equal(busy.session.index.memoryBytes);
    expect(store.memoryBytes()).to.be.lessThan(both);
    expectApiError(() => store.authenticate(idle.token), 'SESSION_EXPIRED');
    expect(store.authenticate(busy.token).index.size).to.equal(1);
  });

  it('the sweeper runs on its interval once started', async () => {
    const clock = new ManualClock();
    const store = new SessionStore(loadConfig({}, { sessionTtlMs: TTL, sweepIntervalMs: 5 }), loadKernelModule(), clock.now);
    store.create();
    store.startSweeper();
    try {
      clock.advance(TTL);
      // Poll rather than sleep a fixed time: the machine may be busy.
      for (let waited = 0; store.size > 0 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(store.size).to.equal(0);
    } finally {
      store.stopSweeper();
    }
  });

  it('forgets expired tokens after expiredTokenMemoryMs (then INVALID_TOKEN)', () => {
    const { store, clock } = newStore({ expiredTokenMemoryMs: 10 * TTL });
    const { token } = store.create();
    clock.advance(TTL);
    store.sweep();
    expectApiError(() => store.authenticate(token), 'SESSION_EXPIRED');
    clock.advance(10 * TTL);
    store.sweep();
    expectApiError(() => store.authenticate(token), 'INVALID_TOKEN');
  });

  it('refuses a session past MAX_SESSIONS (503, Retry-After), counting live ones', () => {
    const { store, clock } = newStore({ maxSessions: 2 });
    store.create();
    clock.advance(TTL / 2);
    store.create();
    const err = expectApiError(() => store.create(), 'SERVER_AT_CAPACITY');
    expect(err.status).to.equal(503);
    expect(Number(err.headers?.['Retry-After'])).to.be.greaterThan(0);
    clock.advance(TTL / 2); // the first session is now idle for a whole TTL
    expect(() => store.create()).to.not.throw();
    expect(store.size).to.equal(2);
  });
});
