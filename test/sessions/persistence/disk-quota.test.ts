// Disk bounded: DATA_DIR_MAX_BYTES over every file in DATA_DIR and
// MAX_SESSION_LOG_BYTES over one log. A change past either is refused with
// 507 and a stable code before any of it is written (nothing acknowledged is
// lost, the refused change is not applied); the bytes are counted in memory,
// and the count is checked here against the directory as measured.
import { expect } from 'chai';
import { existsSync, readdirSync, statfsSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultDataDirMaxBytes, loadConfig, publicLimits } from '../../../src/config.js';
import { ApiError } from '../../../src/errors.js';
import type { Session } from '../../../src/sessions/session.js';
import type { SessionStore } from '../../../src/sessions/session-store.js';
import { hashToken, newToken } from '../../../src/sessions/token.js';
import { useDataDirStores } from '../../helpers/data-dir-stores.js';
import { seededRng } from '../../helpers/random.js';

const DIM = 32;

describe('disk bounded (DATA_DIR_MAX_BYTES, MAX_SESSION_LOG_BYTES)', () => {
  const stores = useDataDirStores('tempvec-quota-');
  const open = stores.open;

  /** Bytes of the logs in DATA_DIR (those set aside and compactions' temporary files included), as the file system has them; not the lock file. */
  const measured = () =>
    readdirSync(stores.dir())
      .filter((name) => name.includes('.log'))
      .reduce((total, name) => total + statSync(join(stores.dir(), name)).size, 0);

  const vector = (random: () => number) => Array.from({ length: DIM }, () => random() * 2 - 1);

  /** An add-many of `n` vectors with ids from `from`, through the store as the routes write; the 507 it was refused with, or null. */
  async function add(store: SessionStore, session: Session, from: number, n: number, random: () => number): Promise<ApiError | null> {
    try {
      await store.writes.inTurn(session, async () => {
        const records = Array.from({ length: n }, (_, i) => ({ id: `v${from + i}`, vector: vector(random), metadata: { pad: 'x'.repeat(200) } }));
        await store.writes.upsert(session, store.writes.prepareUpsert(session, records, { metric: 'l2' }));
      });
      await store.durable(session);
      return null;
    } catch (err) {
      expect(err).to.be.instanceOf(ApiError);
      return err as ApiError;
    }
  }

  it('refuses a change past MAX_SESSION_LOG_BYTES with 507 SESSION_LOG_FULL, applies nothing of it, and keeps every acknowledged one', async () => {
    const cap = 64 * 1024;
    const store = open({ maxSessionLogBytes: cap, dataDirMaxBytes: 0 });
    const { token, session } = store.create();
    const random = seededRng(1);
    let stored = 0;
    let refused: ApiError | null = null;
    while (!refused) {
      refused = await add(store, session, stored, 10, random);
      if (!refused) stored += 10;
      const log = statSync(join(stores.dir(), readdirSync(stores.dir()).find((name) => name.endsWith('.log'))!)).size;
      expect(log, 'the log never passes its cap').to.be.at.most(cap);
    }
    expect([refused.status, refused.code]).to.deep.equal([507, 'SESSION_LOG_FULL']);
    expect(refused.details).to.include({ maxSessionLogBytes: cap });
    expect(session.index.size, 'the refused change is not applied').to.equal(stored);
    expect(stored).to.be.greaterThan(100);
    // A clear is never refused, and a compaction then makes room: the session takes changes again.
    await store.writes.inTurn(session, () => store.writes.clear(session));
    await store.compactLog(session);
    expect(await add(store, session, 0, 10, random)).to.equal(null);
    await store.whenIdle();
    const reopened = open({ maxSessionLogBytes: cap });
    expect((await reopened.authenticate(token)).index.size).to.equal(10);
  });

  it('refuses a change past DATA_DIR_MAX_BYTES with 507 DISK_QUOTA_EXCEEDED; counted bytes match the directory; the disk never passes the quota', async () => {
    const quota = 256 * 1024;
    const store = open({ dataDirMaxBytes: quota });
    const sessions = [store.create(), store.create(), store.create()];
    const random = seededRng(2);
    const ids = [0, 0, 0];
    let acknowledged = 0;
    let refusals = 0;
    let largest = 0;
    for (let round = 0; round < 200 && refusals < 20; round++) {
      const n = round % 3;
      const refused = await add(store, sessions[n].session, ids[n], 8, random);
      if (refused) {
        expect([refused.status, refused.code]).to.deep.equal([507, 'DISK_QUOTA_EXCEEDED']);
        expect(refused.details).to.include({ dataDirMaxBytes: quota });
        refusals++;
      } else {
        ids[n] += 8;
        acknowledged++;
      }
      largest = Math.max(largest, measured());
      expect(store.dataDirBytes(), 'counted in memory = measured').to.equal(measured());
    }
    expect(refusals).to.be.greaterThan(0);
    expect(largest, 'the directory never passed the quota').to.be.at.most(quota);
    for (const [n, { session }] of sessions.entries()) expect(session.index.size).to.equal(ids[n]);
    // Every acknowledged change survives a restart.
    await store.whenIdle();
    const reopened = open({ dataDirMaxBytes: quota });
    for (const [n, { token }] of sessions.entries()) expect((await reopened.authenticate(token)).index.size).to.equal(ids[n]);
    expect(reopened.dataDirBytes(), 'counted at start = measured').to.equal(measured());
    stores.log(`      ${acknowledged} add-many acknowledged, ${refusals} refused; the directory at most ${largest} of ${quota} bytes`);
  });

  it('compacts to make room past the quota: replaced vectors free their bytes and the refused change then goes in', async () => {
    const quota = 192 * 1024;
    const store = open({ dataDirMaxBytes: quota });
    const { session } = store.create();
    const random = seededRng(3);
    // The same 8 ids again and again: the log grows, the live data does not.
    let refused: ApiError | null = null;
    for (let i = 0; i < 1000 && !refused; i++) refused = await add(store, session, 0, 8, random);
    expect(refused?.code).to.equal('DISK_QUOTA_EXCEEDED');
    expect(refused?.headers).to.have.property('Retry-After');
    await store.whenIdle();
    expect(measured(), 'compacted to its live data').to.be.below(quota / 4);
    expect(await add(store, session, 0, 8, random)).to.equal(null);
    expect(store.dataDirBytes()).to.equal(measured());
  });

  it("past the quota, compacts the log that appended most to make room for another session's change", async () => {
    const quota = 192 * 1024;
    const store = open({ dataDirMaxBytes: quota });
    const churned = store.create().session;
    const random = seededRng(4);
    // The same 8 ids again and again, up to a few KB short of the quota (a log under 1 MiB is not compacted as it grows).
    while (store.dataDirBytes() + 6000 < quota) expect(await add(store, churned, 0, 8, random)).to.equal(null);
    const fresh = store.create().session;
    let answer = await add(store, fresh, 0, 40, random);
    expect(answer?.code, 'refused past the quota').to.equal('DISK_QUOTA_EXCEEDED');
    await store.whenIdle();
    answer = await add(store, fresh, 0, 40, random);
    expect(answer, 'taken once the churned log was compacted').to.equal(null);
    expect(fresh.index.size).to.equal(40);
    expect(store.dataDirBytes(), 'the churned log holds its live rows only').to.be.below(quota / 2);
    expect(store.dataDirBytes()).to.equal(measured());
  });

  it('derives DATA_DIR_MAX_BYTES at start from the free space: the bytes in DATA_DIR plus 90% of the free space, published in /limits', () => {
    writeFileSync(join(stores.dir(), 'a'.repeat(64) + '.log'), Buffer.alloc(5000));
    const config = loadConfig({}, { dataDir: stores.dir() });
    const { bavail, bsize } = statfsSync(stores.dir());
    const expected = 5000 + 0.9 * bavail * bsize;
    // The free space moves a little while the test runs (other processes write).
    expect(Math.abs(config.dataDirMaxBytes - expected)).to.be.below(64 * 1024 * 1024);
    expect(publicLimits(config).persistence).to.include({ dataDirMaxBytes: config.dataDirMaxBytes, maxSessionLogBytes: 1024 * 1024 * 1024 });
    expect(loadConfig({ DATA_DIR: stores.dir(), DATA_DIR_MAX_BYTES: '123456' }).dataDirMaxBytes).to.equal(123_456);
    expect(loadConfig({}).dataDirMaxBytes, 'no DATA_DIR: no quota').to.equal(0);
    expect(defaultDataDirMaxBytes(join(stores.dir(), 'not', 'made', 'yet'))).to.be.greaterThan(0);
  });

  it('deletes the files set aside (.other-format, .corrupt) once the session TTL has passed, and counts them until then', async () => {
    const ttl = 600_000;
    let clock = 1_700_000_000_000;
    // One set aside before this start, long ago (its mtime), one recently; and a log of another format.
    const old = join(stores.dir(), `${'b'.repeat(64)}.log.corrupt`);
    const recent = join(stores.dir(), `${'c'.repeat(64)}.log.corrupt`);
    writeFileSync(old, Buffer.alloc(300, 1));
    writeFileSync(recent, Buffer.alloc(400, 1));
    utimesSync(old, (clock - ttl - 1) / 1000, (clock - ttl - 1) / 1000);
    utimesSync(recent, (clock - 1000) / 1000, (clock - 1000) / 1000);
    const config = loadConfig({}, { dataDir: stores.dir(), sessionTtlMs: ttl });
    const token = newToken(config.instanceId);
    const other = join(stores.dir(), `${hashToken(token)}.log`);
    writeFileSync(other, Buffer.from('not a tempvec log at all, 500 bytes of it'.padEnd(500, '.')));
    utimesSync(other, clock / 1000, clock / 1000);
    const store = open({ sessionTtlMs: ttl }, () => clock);
    expect(store.dataDirBytes()).to.equal(1200);
    let code = '';
    try {
      await store.authenticate(token);
    } catch (err) {
      code = (err as ApiError).code;
    }
    expect(code).to.equal('SESSION_EXPIRED');
    expect(existsSync(`${other}.other-format`)).to.equal(true);
    expect(store.dataDirBytes(), 'a file set aside is still counted').to.equal(measured());
    store.sweep();
    expect(existsSync(old), 'set aside more than a TTL ago').to.equal(false);
    expect(existsSync(recent)).to.equal(true);
    clock += ttl - 1001;
    store.sweep();
    expect(existsSync(recent)).to.equal(true);
    clock += 1000;
    store.sweep();
    expect(existsSync(recent)).to.equal(false);
    expect(existsSync(`${other}.other-format`), 'set aside at this start, kept a TTL').to.equal(true);
    clock += 1;
    store.sweep();
    expect(existsSync(`${other}.other-format`)).to.equal(false);
    expect(store.dataDirBytes()).to.equal(0);
    expect(measured()).to.equal(0);
  });
});
