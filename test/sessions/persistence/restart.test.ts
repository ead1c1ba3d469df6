// DATA_DIR: a restart within the TTL brings every session back under its
// token; expired sessions' files are deleted; a torn or damaged log is
// reported and handled without touching other sessions.
import { expect } from 'chai';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { hashToken } from '../../../src/sessions/token.js';
import { startApp, type LiveApp } from '../../helpers/live-app.js';

describe('persistence with DATA_DIR', () => {
  let dir: string;
  let live: LiveApp | undefined;
  let clock: number;
  const now = () => clock;
  const TTL = 60_000;
  const start = () => startApp({ dataDir: dir, sessionTtlMs: TTL, tokenRatePerMin: 0, requestRatePerSec: 0 }, { now });
  const restart = async () => {
    await live!.close();
    live = await start();
    return live;
  };
  const logOf = (token: string) => join(dir, `${hashToken(token)}.log`);

  /** Everything a caller can read about a session. */
  async function readAll(token: string) {
    const session = await live!.send('GET', '/session', { token });
    const many = await live!.send('POST', '/vectors/get-many', { token, body: { ids: ['a', 'b', 'c', 'd', 'e'] } });
    const search = await live!.send('POST', '/search', { token, body: { queryVector: [1, 0, 0.5], topK: 10, includeMetadata: true } });
    const { ttlMsRemaining, lastAccessedAt, expiresAt, ...fields } = session.body.session;
    return { session: fields, vectors: many.body.vectors, notFound: many.body.notFound, results: search.body.results };
  }

  async function populate(token: string) {
    const post = (path: string, body?: unknown) => live!.send('POST', path, { token, body });
    expect(
      (
        await post('/vectors/add-many', {
          metric: 'l2',
          vectors: [
            { id: 'a', vector: [0.1, 0.2, 0.3], metadata: { k: 1, __proto__: 'x' } },
            { id: 'b', vector: [1, 0, 0] },
            { id: 'c', vector: [0, 1, 0], metadata: { tags: ['x', 'y'] } },
          ],
        })
      ).status,
    ).to.equal(200);
    await post('/vectors/add', { id: 'b', vector: [2, 0, 0], metadata: { replaced: true } });
    await post('/vectors/metadata/set', { id: 'c', metadata: { n: 2 } });
    await post('/vectors/add', { id: 'd', vector: [0, 0, 1] });
    await post('/vectors/delete', { id: 'a' });
    await post('/vectors/metadata/delete', { id: 'd' });
  }

  /** Run `fn` with console.warn and console.error silenced (expected reports). */
  async function quietly<T>(fn: () => Promise<T>): Promise<T> {
    const { warn, error } = console;
    console.warn = console.error = () => {};
    try {
      return await fn();
    } finally {
      Object.assign(console, { warn, error });
    }
  }

  beforeEach(async () => {
    clock = 1_700_000_000_000;
    dir = mkdtempSync(join(tmpdir(), 'tempvec-data-'));
    live = await start();
  });
  afterEach(async () => {
    await live?.close();
    live = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it('brings every session back under its token, dbOpenMs timing the reopen', async () => {
    const one = await live!.newToken();
    const two = await live!.newToken();
    const empty = await live!.newToken();
    await populate(one);
    await live!.send('POST', '/vectors/add', { token: two, body: { id: 'e', vector: [3, 3, 3] } });
    await live!.send('POST', '/vectors/clear', { token: two });
    await live!.send('POST', '/vectors/add', { token: two, body: { id: 'a', vector: [5, 4, 3] } });
    const before = [await readAll(one), await readAll(two), await readAll(empty)];

    clock += 1000;
    await restart();
    expect(live!.store.size).to.equal(3);
    const first = await live!.send('GET', '/session', { token: one });
    expect(first.status).to.equal(200);
    expect(first.body.metrics.dbOpenMs).to.be.a('number');
    expect([await readAll(one), await readAll(two), await readAll(empty)]).to.deep.equal(before);
  });

  it('keeps working after the restart and survives a second one', async () => {
    const token = await live!.newToken();
    await populate(token);
    await restart();
    await live!.send('POST', '/vectors/add', { token, body: { id: 'e', vector: [9, 9, 9] } });
    await live!.send('POST', '/index/reset', { token });
    await live!.send('POST', '/vectors/add', { token, body: { id: 'a', vector: [1, 2], metric: 'cosine' } });
    const snapshot = await live!.send('POST', '/vectors/get', { token, body: { id: 'a' } });
    await restart();
    expect((await live!.send('POST', '/vectors/get', { token, body: { id: 'a' } })).body.vector).to.deep.equal(snapshot.body.vector);
    const session = (await live!.send('GET', '/session', { token })).body.session;
    expect(session.config).to.include({ dimensions: 2, metric: 'cosine' });
    expect(session.vectorCount).to.equal(1);
  });

  it('deletes the files of sessions that expired, on reopen and on the sweep', async () => {
    const idle = await live!.newToken();
    const other = await live!.newToken();
    await live!.send('POST', '/vectors/add', { token: idle, body: { id: 'a', vector: [1, 2] } });
    await restart();
    clock += TTL + 1;
    expect(existsSync(logOf(idle))).to.equal(true);
    const res = await live!.send('GET', '/session', { token: idle });
    expect(res.status).to.equal(401);
    expect(res.body.error.code).to.equal('SESSION_EXPIRED');
    expect(existsSync(logOf(idle))).to.equal(false);
    live!.store.sweep();
    expect(existsSync(logOf(other))).to.equal(false);
    expect(readdirSync(dir), 'only the DATA_DIR lock').to.deep.equal(['tempvec.lock']);
  });

  it('deletes the file of a live session when it expires', async () => {
    const token = await live!.newToken();
    expect(existsSync(logOf(token))).to.equal(true);
    clock += TTL;
    live!.store.sweep();
    expect(existsSync(logOf(token))).to.equal(false);
  });

  it('restores the last access, so a session read before a restart lives on', async () => {
    const token = await live!.newToken();
    await live!.send('POST', '/vectors/add', { token, body: { id: 'a', vector: [1, 2] } });
    clock += TTL - 1000;
    await live!.send('POST', '/vectors/has', { token, body: { id: 'a' } }); // a read: logged as a touch
    await restart();
    clock += 5000; // past the TTL counted from the add, within it counted from the read
    expect((await live!.send('GET', '/session', { token })).status).to.equal(200);
  });

  it('cuts a torn last record, reports it and keeps every acknowledged change', async () => {
    const token = await live!.newToken();
    await populate(token);
    const before = await readAll(token);
    await live!.close();
    // A crash in the middle of appending an add-many: half a record at the end.
    const record = readFileSync(logOf(token)).subarray(0, 60);
    appendFileSync(logOf(token), Buffer.concat([Buffer.from([200, 0, 0, 0, 1, 2, 3, 4]), record]));
    const sizeTorn = statSync(logOf(token)).size;
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (message: string) => warnings.push(message);
    try {
      live = await start();
      expect(await readAll(token)).to.deep.equal(before);
    } finally {
      console.warn = warn;
    }
    expect(warnings.join('\n')).to.match(/torn/);
    expect(live!.store.journalCounts()).to.deep.equal({ tailsCut: 1, recordsCut: 0, setAside: 0, otherFormat: 0 });
    expect(statSync(logOf(token)).size).to.be.below(sizeTorn);
    // Appends after the cut are whole records again.
    await live!.send('POST', '/vectors/add', { token, body: { id: 'e', vector: [7, 7, 7] } });
    await restart();
    expect((await live!.send('POST', '/vectors/has', { token, body: { id: 'e' } })).body.has).to.equal(true);
  });

  it('cuts 4,096 zero bytes after the last record (a power-loss tail) and keeps everything', async () => {
    const token = await live!.newToken();
    await populate(token);
    const before = await readAll(token);
    await live!.close();
    const size = statSync(logOf(token)).size;
    appendFileSync(logOf(token), Buffer.alloc(4096));
    live = await start();
    expect(await quietly(() => readAll(token))).to.deep.equal(before);
    expect(statSync(logOf(token)).size).to.equal(size);
  });

  /** Flip a bit inside the payload of record `n` (0: the open record) of a session's log (records-v2.ts: a 16-byte file header, 24-byte record headers). */
  function damageRecord(token: string, n: number) {
    const bytes = readFileSync(logOf(token));
    let at = 16;
    for (let i = 0; i < n; i++) at += 24 + bytes.readUInt32LE(at + 8);
    bytes[at + 24 + 5] ^= 0x04;
    writeFileSync(logOf(token), bytes);
  }

  it('FSYNC=never: keeps the longest valid prefix of a damaged log, reports the cut, touches no other session', async () => {
    const damaged = await live!.newToken();
    const healthy = await live!.newToken();
    await populate(damaged);
    await populate(healthy);
    const healthyBefore = await readAll(healthy);
    await live!.close();
    damageRecord(damaged, 2); // the add of b after the first add-many: what follows it is cut too

    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (message: string) => warnings.push(message);
    try {
      live = await start();
      const res = await live.send('POST', '/vectors/get-many', { token: damaged, body: { ids: ['a', 'b', 'c', 'd'] } });
      expect(res.status).to.equal(200);
      expect(res.body.vectors.map((v: { id: string; vector: number[] }) => [v.id, v.vector])).to.deep.equal([
        ['a', [0.1, 0.2, 0.3]],
        ['b', [1, 0, 0]],
        ['c', [0, 1, 0]],
      ]);
    } finally {
      console.warn = warn;
    }
    expect(warnings.join('\n')).to.match(/cut the log at its first torn or damaged record .* 4 whole records after the damage were cut too/);
    expect(existsSync(logOf(damaged) + '.corrupt')).to.equal(false);
    expect(live!.store.journalCounts()).to.deep.equal({ tailsCut: 1, recordsCut: 4, setAside: 0, otherFormat: 0 });
    const metrics = await live!.send('GET', '/metrics');
    expect(metrics.text).to.match(/^tempvec_log_records_cut_total 4$/m);
    expect(await readAll(healthy)).to.deep.equal(healthyBefore);
  });

  it('FSYNC=always: sets aside a log whose acknowledged record is damaged, reports it, touches no other session', async () => {
    await live!.close();
    const always = () => startApp({ dataDir: dir, sessionTtlMs: TTL, tokenRatePerMin: 0, requestRatePerSec: 0, fsync: 'always' }, { now });
    live = await always();
    const damaged = await live.newToken();
    const healthy = await live.newToken();
    await populate(damaged);
    await populate(healthy);
    const healthyBefore = await readAll(healthy);
    await live.close();
    damageRecord(damaged, 3); // the add of b (after the add-many and its sync record): a later sync record says it was fsynced

    const errors: string[] = [];
    const error = console.error;
    console.error = (message: string) => errors.push(message);
    try {
      live = await always();
      const res = await live.send('GET', '/session', { token: damaged });
      expect(res.status).to.equal(401);
      expect(res.body.error.code).to.equal('SESSION_EXPIRED');
      expect(res.body.error.message).to.match(/damaged/);
    } finally {
      console.error = error;
    }
    expect(errors.join('\n')).to.match(/damaged.*stable storage/);
    expect(existsSync(logOf(damaged) + '.corrupt')).to.equal(true);
    expect(live.store.journalCounts()).to.deep.equal({ tailsCut: 0, recordsCut: 0, setAside: 1, otherFormat: 0 });
    expect((await live.send('GET', '/metrics')).text).to.match(/^tempvec_logs_set_aside_total 1$/m);
    expect(await readAll(healthy)).to.deep.equal(healthyBefore);
  });

  it('sets aside a log of another format (another version, or not a tempvec log), reports and counts it, touches no other session', async () => {
    const other = await live!.newToken();
    const version3 = await live!.newToken();
    const healthy = await live!.newToken();
    for (const token of [other, version3, healthy]) await populate(token);
    const healthyBefore = await readAll(healthy);
    await live!.close();
    // A log of the earlier JSON format (u32 length, u32 CRC, JSON), and one whose header names version 3.
    writeFileSync(logOf(other), Buffer.concat([Buffer.from([40, 0, 0, 0, 1, 2, 3, 4]), Buffer.from('{"t":"open","v":1,"sessionId":"s","createdAt":1}')]));
    const bytes = readFileSync(logOf(version3));
    bytes.writeUInt32LE(3, 8);
    bytes.writeUInt32LE(crc32(bytes.subarray(0, 12)), 12);
    writeFileSync(logOf(version3), bytes);

    const errors: string[] = [];
    const error = console.error;
    console.error = (message: string) => errors.push(message);
    try {
      live = await start();
      for (const token of [other, version3]) {
        const res = await live.send('GET', '/session', { token });
        expect(res.status).to.equal(401);
        expect(res.body.error.code).to.equal('SESSION_EXPIRED');
        expect(res.body.error.message).to.match(/format/);
        expect(existsSync(`${logOf(token)}.other-format`)).to.equal(true);
      }
    } finally {
      console.error = error;
    }
    expect(errors.join('\n')).to.match(/not a tempvec log of the version this server reads.*header/);
    expect(errors.join('\n')).to.match(/format version 3; this server reads version 2/);
    expect(live!.store.journalCounts()).to.deep.equal({ tailsCut: 0, recordsCut: 0, setAside: 0, otherFormat: 2 });
    expect((await live!.send('GET', '/metrics')).text).to.match(/^tempvec_logs_other_format_total 2$/m);
    expect(await readAll(healthy)).to.deep.equal(healthyBefore);
  });

  it('reopens sessions PERSISTENCE_JOBS at a time, their buffers counted in the memory budget and given back', async () => {
    const tokens = [await live!.newToken(), await live!.newToken(), await live!.newToken()];
    for (const token of tokens) await populate(token);
    const before = await Promise.all(tokens.map((token) => readAll(token)));
    await live!.close();
    live = await startApp({ dataDir: dir, sessionTtlMs: TTL, tokenRatePerMin: 0, requestRatePerSec: 0, persistenceJobs: 1 }, { now });
    const largest = Math.max(...tokens.map((token) => statSync(logOf(token)).size));
    let most = 0;
    let watching = true;
    const watch = (async () => {
      while (watching) {
        most = Math.max(most, live!.store.budget.persistenceBytes);
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const sessions = await Promise.all(tokens.map((token) => live!.send('GET', '/session', { token })));
    watching = false;
    await watch;
    expect(sessions.map((res) => res.status)).to.deep.equal([200, 200, 200]);
    // One reopen at a time: its window (the log, read whole when it is this small) and one record; three at once would hold three logs.
    expect(most)
      .to.be.above(0)
      .and.at.most(2 * largest);
    expect(live!.store.budget.persistenceBytes).to.equal(0);
    expect((await live!.send('GET', '/metrics')).text).to.match(/^tempvec_persistence_buffer_bytes 0$/m);
    expect(await Promise.all(tokens.map((token) => readAll(token)))).to.deep.equal(before);
  });

  it('keeps texts and the analyzer through a restart and through a compaction', async () => {
    const token = await live!.newToken();
    const post = (path: string, body?: unknown) => live!.send('POST', path, { token, body });
    expect(
      (
        await post('/vectors/add-many', {
          metric: 'l2',
          analyzer: 'english',
          vectors: [
            { id: 'a', vector: [1, 0, 0], text: 'Running dogs chase the cats', metadata: { k: 1 } },
            { id: 'b', vector: [0, 1, 0] },
            { id: 'c', vector: [0, 0, 1], text: 'Un café “naïve” ✓ "quoted"\n' },
          ],
        })
      ).status,
    ).to.equal(200);
    await post('/vectors/add', { id: 'd', vector: [1, 1, 0], text: 'a dog runs' });
    await post('/vectors/delete', { id: 'a' });
    const texts = async () => {
      const many = await live!.send('POST', '/vectors/get-many', { token, body: { ids: ['a', 'b', 'c', 'd'], includeText: true } });
      const keyword = await live!.send('POST', '/search', { token, body: { queryText: 'run dog', topK: 10, includeText: true } });
      const session = await live!.send('GET', '/session', { token });
      return { vectors: many.body.vectors, keyword: keyword.body.results, analyzer: session.body.session.config.analyzer };
    };
    const before = await texts();
    expect(before.analyzer).to.equal('english');
    expect(before.vectors.map((v: { text: string | null }) => v.text)).to.deep.equal([null, 'Un café “naïve” ✓ "quoted"\n', 'a dog runs']);
    expect(before.keyword.map((r: { id: string }) => r.id)).to.deep.equal(['d']);
    await restart();
    expect(await texts()).to.deep.equal(before);
    // Compacted: the log is rewritten from memory, texts as the index stores them.
    const session = await live!.store.authenticate(token);
    await live!.store.compactLog(session);
    await restart();
    expect(await texts()).to.deep.equal(before);
    // Every text deleted: the analyzer stays fixed, through a restart and a compaction too.
    await live!.send('POST', '/vectors/delete-many', { token, body: { ids: ['c', 'd'] } });
    await restart();
    expect((await texts()).analyzer).to.equal('english');
    await live!.store.compactLog(await live!.store.authenticate(token));
    await restart();
    expect((await texts()).analyzer).to.equal('english');
  });

  it('compacts a log that keeps growing, and restores from the compacted log', async () => {
    const token = await live!.newToken();
    const ids = Array.from({ length: 100 }, (_, i) => `v${i}`);
    for (let round = 0; round < 40; round++) {
      const vectors = ids.map((id, i) => ({ id, vector: Array.from({ length: 256 }, (_, j) => Math.sin(round * 1000 + i * 256 + j)), metadata: { round } }));
      const res = await live!.send('POST', '/vectors/add-many', { token, body: { vectors } });
      expect(res.status).to.equal(200);
    }
    // 40 rounds of ~140 KB records (5.6 MB uncompacted); compacted, the log holds one round, the
    // rounds appended while the last compaction ran (more under load), and at most 1 MiB since.
    await live!.store.whenIdle();
    expect(statSync(logOf(token)).size).to.be.below(5.6e6 / 2);
    const before = (await live!.send('POST', '/vectors/get-many', { token, body: { ids } })).body.vectors;
    await restart();
    expect((await live!.send('POST', '/vectors/get-many', { token, body: { ids } })).body.vectors).to.deep.equal(before);
    expect(before[0].metadata).to.deep.equal({ round: 39 });
    // A reopened log holding more than its live data is compacted at once: no temporary file stays once that is done.
    await live!.store.whenIdle();
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).to.deep.equal([]);
  });

  it('keeps the logs readable by this user only', async () => {
    const token = await live!.newToken();
    expect(statSync(logOf(token)).mode & 0o077).to.equal(0);
  });

  it('writes no file without DATA_DIR', async () => {
    await live!.close();
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    live = await startApp({ tokenRatePerMin: 0 }, { now });
    const token = await live.newToken();
    await live.send('POST', '/vectors/add', { token, body: { id: 'a', vector: [1, 2] } });
    expect(readdirSync(dir)).to.deep.equal([]);
  });
});
