// SessionStore: authentication, sliding expiry, the sweeper, MAX_SESSIONS,
// and reopening sessions from DATA_DIR within MAX_WASM_MEMORIES.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../src/config.js';
import { ApiError } from '../../src/errors.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { WASM_MEMORIES_OUTSIDE_SESSIONS } from '../../src/limits/wasm-memories.js';
import { SessionStore } from '../../src/sessions/session-store.js';
import type { Session } from '../../src/sessions/session.js';
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
    expect(idle.session.index.stats().memoryBytes).to.be.greaterThan(0);
    clock.advance(TTL / 2);
    store.authenticate(busy.token);
    clock.advance(TTL / 2);
    store.sweep();
    expect(store.size).to.equal(1);
    expect(idle.session.index.stats().memoryBytes, 'the expired index dropped its memory').to.equal(0);
    expect(idle.session.index.size).to.equal(0);
    expect(store.memoryBytes()).to.equal(busy.session.index.stats().memoryBytes);
    expect(store.memoryBytes()).to.be.lessThan(both);
    expectApiError(() => store.authenticate(idle.token), 'SESSION_EXPIRED');
    expect((store.authenticate(busy.token) as Session).index.size).to.equal(1);
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

describe('SessionStore reopening sessions from DATA_DIR', () => {
  const DIM = 64;
  const vectorOf = (i: number) => Array.from({ length: DIM }, (_, j) => ((i * 13 + j * 7) % 41) / 8 - 2);
  const ONE_SESSION = WASM_MEMORIES_OUTSIDE_SESSIONS + 1;
  let dir: string;
  let clock: ManualClock;
  const open = (overrides: Partial<Config> = {}) =>
    new SessionStore(loadConfig({}, { dataDir: dir, sessionTtlMs: TTL, ...overrides }), loadKernelModule(), clock.now);

  /** A session on disk holding v0..v(count-1); its token. */
  async function stored(store: SessionStore, count: number): Promise<string> {
    const { token, session } = store.create();
    const records = Array.from({ length: count }, (_, i) => ({ id: `v${i}`, vector: vectorOf(i) }));
    await store.writes.inTurn(session, () => store.writes.upsert(session, store.writes.prepareUpsert(session, records, { metric: 'l2' })));
    return token;
  }

  async function refusal(pending: Session | Promise<Session>): Promise<ApiError> {
    const err = await Promise.resolve(pending).then(
      () => null,
      (caught) => caught,
    );
    expect(err).to.be.instanceOf(ApiError);
    return err as ApiError;
  }

  const expectVectors = (session: Session, count: number) => {
    expect(session.index.size).to.equal(count);
    expect(session.index.get(`v${count - 1}`)?.vector).to.deep.equal(vectorOf(count - 1));
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tempvec-reopen-'));
    clock = new ManualClock();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a reopen past MAX_WASM_MEMORIES with 503 and keeps it on disk', async () => {
    const first = open();
    const [a, b] = [await stored(first, 10), await stored(first, 20)];
    const store = open({ maxWasmMemories: ONE_SESSION });
    const sessionA = await store.authenticate(a);
    const err = await refusal(store.authenticate(b));
    expect([err.status, err.code]).to.deep.equal([503, 'SERVER_AT_CAPACITY']);
    expect(Number(err.headers?.['Retry-After'])).to.be.greaterThan(0);
    expect(readdirSync(dir)).to.include(`${hashToken(b)}.log`);
    // A refused caller keeps its session alive; once a memory is free it reopens whole.
    clock.advance(TTL - 1);
    await refusal(store.authenticate(b));
    await store.authenticate(a);
    clock.advance(TTL - 1);
    const sessionOfA = await store.authenticate(a);
    await store.writes.inTurn(sessionOfA, () => store.writes.reset(sessionOfA));
    expectVectors(await store.authenticate(b), 20);
    expect(sessionA.index.size).to.equal(0);
  });

  it('counts reopens in flight: two at once past the cap, one is refused', async () => {
    const first = open();
    const tokens = [await stored(first, 10), await stored(first, 10)];
    const store = open({ maxWasmMemories: ONE_SESSION });
    const outcomes = await Promise.allSettled(tokens.map((token) => store.authenticate(token)));
    expect(outcomes.map((o) => o.status).sort()).to.deep.equal(['fulfilled', 'rejected']);
    expect(store.wasmMemories()).to.equal(ONE_SESSION);
  });

  it('keeps a session on disk, not set aside, when its reopen finds no memory', async () => {
    const token = await stored(open(), 2000);
    const store = open();
    const grow = WebAssembly.Memory.prototype.grow;
    let grows = 0;
    WebAssembly.Memory.prototype.grow = () => {
      grows++;
      throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
    };
    const { error } = console;
    console.error = () => {};
    let err: ApiError;
    try {
      err = await refusal(store.authenticate(token));
    } finally {
      WebAssembly.Memory.prototype.grow = grow;
      console.error = error;
    }
    expect(grows).to.be.above(0);
    expect([err.status, err.code]).to.deep.equal([503, 'SERVER_AT_CAPACITY']);
    expect(readdirSync(dir).filter((name) => name !== 'tempvec.lock')).to.deep.equal([`${hashToken(token)}.log`]);
    expectVectors(await store.authenticate(token), 2000);
  });
});
