// Disk faults, injected through the journal's file operations: a full disk,
// a short write, a failed cut-back, a failed or lying compaction, a failed
// fdatasync. Whatever fails, the log holds whole records only, every
// acknowledged change survives a restart, and reads keep answering.
import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config } from '../../../src/config.js';
import { ApiError } from '../../../src/errors.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { nodeFs, type JournalFs } from '../../../src/sessions/persistence/journal-fs.js';
import { SessionStore } from '../../../src/sessions/session-store.js';
import type { Session } from '../../../src/sessions/session.js';
import { WRITE_PIECE_BYTES, type EncodedChange } from '../../../src/sessions/persistence/session-journal.js';
import type { UpsertPlan } from '../../../src/index/types.js';
import { hashToken } from '../../../src/sessions/token.js';
import { Slices } from '../../../src/limits/slices.js';

const kernel = loadKernelModule();
const DIM = 64;

function fault(code: string): Error {
  return Object.assign(new Error(`${code}: injected`), { code });
}

/** nodeFs with switchable faults; counts fdatasync calls. */
function faultyFs() {
  const faults = {
    /** Synchronous writes: fail, or write half a buffer and then fail. */
    write: null as null | 'ENOSPC' | 'EIO' | 'short',
    truncate: false,
    utimes: false,
    /** Asynchronous writes (compaction): fail, write half then fail, or report success without writing. */
    asyncWrite: null as null | 'ENOSPC' | 'short' | 'lie',
    fdatasync: false,
    fdatasyncCalls: 0,
    /** Asynchronous fsync (a compaction's or a rewrite's file, the directory). */
    fsync: false,
    /** Asynchronous opens (an fdatasync's, a compaction's): fail as when the process has no file handle free. */
    open: false,
    /** The same, for the directory only (its fsync after a compaction's rename). */
    openDir: false,
    /** Synchronous fsyncs (a new log's, a cut's): fail; and how many were made. */
    fsyncSync: false,
    fsyncSyncCalls: 0,
  };
  const fs: JournalFs = {
    ...nodeFs,
    writeSync(fd, buffer, offset, length, position) {
      if (faults.write === 'short') {
        faults.write = 'ENOSPC';
        return nodeFs.writeSync(fd, buffer, offset, Math.ceil(length / 2), position);
      }
      if (faults.write) throw fault(faults.write);
      return nodeFs.writeSync(fd, buffer, offset, length, position);
    },
    fsyncSync(fd) {
      faults.fsyncSyncCalls++;
      if (faults.fsyncSync) throw fault('EIO');
      nodeFs.fsyncSync(fd);
    },
    ftruncateSync(fd, length) {
      if (faults.truncate) throw fault('EIO');
      nodeFs.ftruncateSync(fd, length);
    },
    utimesSync(path, atime, mtime) {
      if (faults.utimes) throw fault('ENOSPC');
      nodeFs.utimesSync(path, atime, mtime);
    },
    async write(fd, buffer, offset, length, position) {
      if (faults.asyncWrite === 'short') {
        faults.asyncWrite = 'ENOSPC';
        return nodeFs.write(fd, buffer, offset, Math.ceil(length / 2), position);
      }
      if (faults.asyncWrite === 'lie') return length;
      if (faults.asyncWrite) throw fault(faults.asyncWrite);
      return nodeFs.write(fd, buffer, offset, length, position);
    },
    async fdatasync(fd) {
      faults.fdatasyncCalls++;
      if (faults.fdatasync) throw fault('EIO');
      return nodeFs.fdatasync(fd);
    },
    async fsync(fd) {
      if (faults.fsync) throw fault('EIO');
      return nodeFs.fsync(fd);
    },
    async open(path, flags, mode) {
      if (faults.open || (faults.openDir && !/\.log(\.tmp)?$/.test(path))) throw fault('EMFILE');
      return nodeFs.open(path, flags, mode);
    },
  };
  return { fs, faults };
}

/** Vector `i` of a deterministic data set (multiples of 1/8: exact in float32). */
const vectorOf = (i: number) => Array.from({ length: DIM }, (_, j) => ((i * 13 + j * 7) % 41) / 8 - 2);

describe('disk faults with DATA_DIR', () => {
  let dir: string;
  let clock: number;
  let logged: string[];
  const console_ = { warn: console.warn, error: console.error };
  const config = (overrides: Partial<Config> = {}) => loadConfig({}, { dataDir: dir, sessionTtlMs: 600_000, ...overrides });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tempvec-faults-'));
    clock = 1_700_000_000_000;
    logged = [];
    console.warn = console.error = (...args: unknown[]) => logged.push(args.join(' '));
  });
  /** The stores a test opened: their compactions end before its directory is removed. */
  let stores: SessionStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.map((store) => store.whenIdle()));
    stores = [];
    Object.assign(console, console_);
    rmSync(dir, { recursive: true, force: true });
  });

  function open(fs?: JournalFs, overrides: Partial<Config> = {}) {
    const store = new SessionStore(config(overrides), kernel, () => clock, true, { journalFs: fs });
    stores.push(store);
    return store;
  }

  /** An add through the same steps as the route (session-writes.ts): validate, grow, log, apply. */
  function add(store: SessionStore, session: Session, ids: number[]) {
    const plan = session.index.prepareUpsert(
      ids.map((i) => ({ id: `v${i}`, vector: vectorOf(i), metadata: { i } })),
      { metric: 'l2' },
    );
    session.index.applyUpsertSliced(plan, new Slices(Infinity), () => store.journal(session, (log, at) => log.upsert(session, plan, at)));
  }

  /** A session holding v0..v4 whose add of v5..v9 was written short and could not be cut back (503). */
  function fencedSession() {
    const { fs, faults } = faultyFs();
    const store = open(fs);
    const { token, session } = store.create();
    add(store, session, range(0, 5));
    faults.write = 'short';
    faults.truncate = true;
    expect(refused(() => add(store, session, range(5, 10))).status).to.equal(503);
    faults.write = null;
    return { store, token, session, faults };
  }

  function refused(fn: () => void): ApiError {
    try {
      fn();
    } catch (err) {
      expect(err).to.be.instanceOf(ApiError);
      return err as ApiError;
    }
    throw new Error('expected the change to be refused');
  }

  /** Every vector of `ids` is in the session, exactly, and nothing else. */
  function expectExactly(session: Session, ids: number[]) {
    expect(session.index.size).to.equal(ids.length);
    for (const i of ids) expect(session.index.get(`v${i}`)?.vector, `v${i}`).to.deep.equal(vectorOf(i));
  }

  const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

  for (const kind of ['ENOSPC', 'EIO', 'short'] as const) {
    it(`answers 503 on a failed append (${kind}) and leaves the log as it was`, async () => {
      const { fs, faults } = faultyFs();
      const store = open(fs);
      const { token, session } = store.create();
      add(store, session, range(0, 10));
      const path = join(dir, `${hashToken(token)}.log`);
      const before = readFileSync(path);
      faults.write = kind;
      const err = refused(() => add(store, session, range(10, 20)));
      expect(err.status).to.equal(503);
      expect(err.code).to.equal('SERVER_AT_CAPACITY');
      expect(err.headers).to.have.property('Retry-After');
      expect(readFileSync(path).equals(before)).to.equal(true);
      expectExactly(session, range(0, 10));
      faults.write = null;
      add(store, session, range(20, 30));
      const restored = await open().authenticate(token);
      expectExactly(restored, [...range(0, 10), ...range(20, 30)]);
      expect(logged.join('\n')).not.to.match(/torn/);
    });
  }

  it('fsyncs the cut of a failed append before the log takes another record (FSYNC=never too)', async () => {
    const { fs, faults } = faultyFs();
    const store = open(fs);
    const { token, session } = store.create();
    add(store, session, range(0, 10));
    const calls = faults.fsyncSyncCalls;
    faults.write = 'short';
    expect(refused(() => add(store, session, range(10, 20))).status).to.equal(503);
    expect(faults.fsyncSyncCalls, 'the cut was fsynced').to.equal(calls + 1);
    faults.write = null;
    add(store, session, range(20, 30));
    expectExactly(await open().authenticate(token), [...range(0, 10), ...range(20, 30)]);
  });

  it('rewrites the log from memory when the fsync of a cut fails, refusing changes until then', async () => {
    const { fs, faults } = faultyFs();
    const store = open(fs);
    const { token, session } = store.create();
    add(store, session, range(0, 10));
    faults.write = 'short';
    faults.fsyncSync = true;
    expect(refused(() => add(store, session, range(10, 20))).status).to.equal(503);
    faults.write = null;
    faults.fsyncSync = false;
    expect(refused(() => add(store, session, [99])).status, 'refused while the rewrite runs').to.equal(503);
    await store.whenIdle();
    expect(logged.join('\n')).to.match(/fsync failed .* after a cut/);
    add(store, session, range(20, 30));
    expectExactly(await open().authenticate(token), [...range(0, 10), ...range(20, 30)]);
  });

  it('refuses changes while a failed append cannot be cut back, and recovers when it can', async () => {
    const { store, token, session } = fencedSession();
    // The half record is still on disk: no change may go after it.
    expect(refused(() => add(store, session, range(10, 15))).status).to.equal(503);
    expect((store.authenticate(token) as Session).index.get('v1')?.vector).to.deep.equal(vectorOf(1));
    // A crash now: the restart cuts the half record as a torn tail.
    const crashed = await open().authenticate(token);
    expectExactly(crashed, range(0, 5));
    expect(logged.join('\n')).to.match(/torn/);
  });

  it('accepts changes again once the cut-back succeeds, with no partial record left', async () => {
    const { store, token, session, faults } = fencedSession();
    faults.truncate = false;
    add(store, session, range(10, 15));
    logged = [];
    expectExactly(await open().authenticate(token), [...range(0, 5), ...range(10, 15)]);
    expect(logged.join('\n')).not.to.match(/torn/);
  });

  it('refuses a new session on a full disk with 503 and leaves no file', async () => {
    const { fs, faults } = faultyFs();
    const store = open(fs);
    faults.write = 'short';
    const err = refused(() => store.create());
    expect(err.status).to.equal(503);
    expect(nodeFs.readdirSync(dir), 'only the DATA_DIR lock').to.deep.equal(['tempvec.lock']);
    expect(store.size).to.equal(0);
    faults.write = null;
    const { token, session } = store.create();
    add(store, session, range(0, 3));
    expectExactly(await open().authenticate(token), range(0, 3));
  });

  it('answers reads on a full disk, whose touch records cannot be written', async () => {
    const { fs, faults } = faultyFs();
    const store = open(fs);
    const { token, session } = store.create();
    add(store, session, range(0, 3));
    faults.write = 'ENOSPC';
    faults.utimes = true;
    for (let n = 0; n < 8; n++) {
      clock += 60_000; // each read is due a touch record (the TTL is 10 minutes)
      const read = store.authenticate(token) as Session;
      expect(read.index.get('v2')?.vector).to.deep.equal(vectorOf(2));
    }
    expect(logged.join('\n')).to.match(/could not record a read/);
    faults.write = null;
    expectExactly(await open().authenticate(token), range(0, 3));
  });

  for (const kind of ['ENOSPC', 'short', 'lie'] as const) {
    it(`keeps the old log when a compaction write fails (${kind})`, async () => {
      const { fs, faults } = faultyFs();
      const store = open(fs);
      const { token, session } = store.create();
      faults.asyncWrite = kind;
      // ~80 KB per round of the same 300 ids: compaction comes due after ~1 MiB.
      for (let round = 0; round < 16; round++)
        add(
          store,
          session,
          range(0, 300).map((i) => i + (round % 2) * 1000),
        );
      await store.whenIdle();
      expect(logged.join('\n')).to.match(/could not compact.*old log is kept/);
      const expected = [...range(0, 300), ...range(1000, 1300)];
      expectExactly(await open().authenticate(token), expected);
      // Once the disk behaves, the next compaction (after the pause a failed one waits, 1 s) goes through.
      faults.asyncWrite = null;
      clock += 1000;
      for (let round = 0; round < 20; round++)
        add(
          store,
          session,
          range(0, 300).map((i) => i + (round % 2) * 1000),
        );
      add(store, session, range(5000, 5010));
      await store.whenIdle();
      expected.push(...range(5000, 5010));
      expectExactly(session, expected);
      expectExactly(await open().authenticate(token), expected);
      expect(statSync(join(dir, `${hashToken(token)}.log`)).size).to.be.below(600 * 1024);
    });
  }

  it('keeps changes appended while a compaction runs', async () => {
    const store = open();
    const { token, session } = store.create();
    for (let round = 0; round < 10; round++)
      add(
        store,
        session,
        range(0, 300).map((i) => i + round * 1000),
      );
    // Compaction is under way in slices; these go to the old log and must reach the new one.
    const during: number[] = [];
    for (let k = 0; k < 20; k++) {
      add(store, session, [90_000 + k]);
      during.push(90_000 + k);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await store.whenIdle();
    const expected = [...range(0, 10).flatMap((round) => range(0, 300).map((i) => i + round * 1000)), ...during];
    expectExactly(await open().authenticate(token), expected);
  });

  it('cuts an import that a crash cut short, whole parts included, and keeps what came before', async () => {
    const store = open();
    const { token, session } = store.create();
    add(store, session, range(0, 10));
    const path = join(dir, `${hashToken(token)}.log`);
    const before = statSync(path).size;
    const plan = session.index.prepareUpsert(
      range(100, 2600).map((i) => ({ id: `v${i}`, vector: vectorOf(i) })),
      { metric: 'l2' },
    );
    store.journal(session, (log, at) => log.import(session, plan, at));
    // The crash: two of the three parts whole on disk, the third cut short.
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 1000));
    const reopened = await open().authenticate(token);
    expectExactly(reopened, range(0, 10));
    expect(statSync(path).size).to.equal(before);
    expect(logged.join('\n')).to.match(/import cut short/);
  });

  describe('an add-many encoded ahead in slices', () => {
    const records = (ids: number[], dims: number) =>
      ids.map((i) => ({
        id: `v${i}`,
        vector: Float32Array.from({ length: dims }, (_, j) => ((i * 13 + j * 7) % 41) / 8 - 2),
        ...(i % 3 === 0 ? {} : { metadata: { i, text: `é${i}`.repeat(i % 5) } }),
      }));

    for (const dims of [3, 200, 1024]) {
      it(`writes the same log record as an add-many encoded in one step (${dims} dimensions)`, async () => {
        const store = open();
        const one = store.create();
        const ahead = store.create();
        const batch = records(range(0, 1000), dims);
        const path = (token: string) => join(dir, `${hashToken(token)}.log`);
        const before = [statSync(path(one.token)).size, statSync(path(ahead.token)).size];
        await store.writes.inTurn(one.session, () => store.writes.upsert(one.session, store.writes.prepareUpsert(one.session, batch, { metric: 'l2' })));
        const encoded = await store.encodeUpsert(ahead.session, batch, { metric: 'l2' });
        // Only a batch of 256 KiB of records or more is encoded ahead (its rows decide it here).
        expect(encoded === undefined).to.equal(dims * 1000 * 4 < 256 * 1024);
        await store.writes.inTurn(ahead.session, () =>
          store.writes.upsert(ahead.session, store.writes.prepareUpsert(ahead.session, batch, { metric: 'l2' }), encoded),
        );
        const logged = (token: string, from: number) => readFileSync(path(token)).subarray(from);
        expect(logged(ahead.token, before[1]).equals(logged(one.token, before[0]))).to.equal(true);
        const reopened = await open().authenticate(ahead.token);
        expect(reopened.index.size).to.equal(1000);
        for (const r of batch.slice(0, 50)) expect(reopened.index.get(r.id)?.vector).to.deep.equal(Array.from(r.vector));
      });
    }

    it('encodes ahead, in steps, a batch of small vectors with large metadata and texts (several MiB), as its turn would have', async () => {
      const store = open();
      const one = store.create();
      const ahead = store.create();
      const batch = records(range(0, 400), 4).map((r, i) => ({ ...r, metadata: { i, body: `ü${i} `.repeat(1200) }, text: `word${i} é `.repeat(900) }));
      const path = (token: string) => join(dir, `${hashToken(token)}.log`);
      const before = [statSync(path(one.token)).size, statSync(path(ahead.token)).size];
      await store.writes.inTurn(one.session, () => store.writes.upsert(one.session, store.writes.prepareUpsert(one.session, batch, { metric: 'l2' })));
      const encoded = await store.encodeUpsert(ahead.session, batch, { metric: 'l2' });
      expect(encoded, 'encoded ahead').to.not.equal(undefined);
      await store.writes.inTurn(ahead.session, () =>
        store.writes.upsert(ahead.session, store.writes.prepareUpsert(ahead.session, batch, { metric: 'l2' }), encoded),
      );
      const logged = (token: string, from: number) => readFileSync(path(token)).subarray(from);
      expect(logged(ahead.token, before[1]).length).to.be.greaterThan(4 * 1024 * 1024);
      expect(logged(ahead.token, before[1]).equals(logged(one.token, before[0]))).to.equal(true);
      const reopened = await open().authenticate(ahead.token);
      expect(reopened.index.size).to.equal(400);
      for (const r of batch.slice(0, 20)) expect(reopened.index.get(r.id)?.metadata?.value()).to.deep.equal(r.metadata);
    });

    it('writes the batch the turn prepared when it differs from the one encoded', async () => {
      const store = open();
      const { token, session } = store.create();
      const encoded = await store.encodeUpsert(session, records(range(0, 1000), 128), { metric: 'l2' });
      expect(encoded).to.not.equal(undefined);
      await store.writes.inTurn(session, () =>
        store.writes.upsert(session, store.writes.prepareUpsert(session, records(range(0, 600), 128), { metric: 'l2' }), encoded),
      );
      expect((await open().authenticate(token)).index.size).to.equal(600);
    });
  });

  describe('an import encoded ahead in slices', () => {
    const importPlan = (session: Session, ids: number[]) =>
      session.index.prepareUpsert(
        ids.map((i) => ({ id: `v${i}`, vector: vectorOf(i), metadata: { i } })),
        { metric: 'l2' },
      );
    /** The bytes the session's log gained while `write` ran. */
    const appended = async (token: string, write: () => Promise<unknown>) => {
      const path = join(dir, `${hashToken(token)}.log`);
      const before = statSync(path).size;
      await write();
      return readFileSync(path).subarray(before);
    };
    /** writes.importPlan in a write turn, as the route runs it. */
    const apply = (store: SessionStore, session: Session, plan: UpsertPlan, encoded?: EncodedChange) =>
      store.writes.inTurn(session, () => store.writes.importPlan(session, plan, encoded));

    it('writes the same log records as an import encoded in one step', async () => {
      const store = open();
      const one = store.create();
      const ahead = store.create();
      const plan = importPlan(one.session, range(0, 2500));
      const inOneStep = await appended(one.token, () => apply(store, one.session, plan));
      const aheadPlan = importPlan(ahead.session, range(0, 2500));
      const encoded = await store.encodeImport(aheadPlan);
      const inSlices = await appended(ahead.token, () => apply(store, ahead.session, aheadPlan, encoded));
      expect(inSlices.equals(inOneStep)).to.equal(true);
      expectExactly(await open().authenticate(ahead.token), range(0, 2500));
    });

    it('writes the records of the plan applied when it differs from the one encoded', async () => {
      const store = open();
      const { token, session } = store.create();
      const encoded = await store.encodeImport(importPlan(session, range(0, 1500)));
      await apply(store, session, importPlan(session, range(5000, 5010)), encoded);
      expectExactly(session, range(5000, 5010));
      expectExactly(await open().authenticate(token), range(5000, 5010));
    });

    it('cuts every part back off when writing a later part fails', async () => {
      let writes = 0;
      let failAt = Infinity;
      const fs: JournalFs = {
        ...nodeFs,
        writeSync(fd, buffer, offset, length, position) {
          if (++writes === failAt) throw fault('ENOSPC');
          return nodeFs.writeSync(fd, buffer, offset, length, position);
        },
      };
      const store = open(fs);
      const { token, session } = store.create();
      add(store, session, range(0, 10));
      const path = join(dir, `${hashToken(token)}.log`);
      const before = statSync(path).size;
      const plan = importPlan(session, range(100, 2600));
      const encoded = await store.encodeImport(plan);
      failAt = writes + 2;
      const failed = await apply(store, session, plan, encoded).then(
        () => null,
        (err: unknown) => err,
      );
      expect(failed).to.be.instanceOf(ApiError);
      expect((failed as ApiError).status).to.equal(503);
      expect(statSync(path).size).to.equal(before);
      expectExactly(session, range(0, 10));
      expectExactly(await open().authenticate(token), range(0, 10));
    });
  });

  describe('a change larger than a write piece (WRITE_PIECE_BYTES)', () => {
    /**
     * nodeFs recording the largest synchronous write, the lengths of the asynchronous writes to
     * the logs themselves (a compaction's to its new file go in larger chunks, off the event loop
     * too), and failing the nth of those (after writing half of it when `short`).
     */
    function recordingFs() {
      const seen = { largestSync: 0, async: [] as number[], failAt: Infinity, short: false };
      const logs = new Set<number>();
      const fs: JournalFs = {
        ...nodeFs,
        openSync(path, flags, mode) {
          const fd = nodeFs.openSync(path, flags, mode);
          if (path.endsWith('.log')) logs.add(fd);
          else logs.delete(fd);
          return fd;
        },
        async open(path, flags, mode) {
          const fd = await nodeFs.open(path, flags, mode);
          if (path.endsWith('.log')) logs.add(fd);
          else logs.delete(fd); // a number a closed log had
          return fd;
        },
        writeSync(fd, buffer, offset, length, position) {
          seen.largestSync = Math.max(seen.largestSync, length);
          return nodeFs.writeSync(fd, buffer, offset, length, position);
        },
        async write(fd, buffer, offset, length, position) {
          if (!logs.has(fd)) return nodeFs.write(fd, buffer, offset, length, position);
          seen.async.push(length);
          if (seen.async.length === seen.failAt) {
            if (seen.short) await nodeFs.write(fd, buffer, offset, Math.ceil(length / 2), position);
            throw fault('ENOSPC');
          }
          return nodeFs.write(fd, buffer, offset, length, position);
        },
      };
      return { fs, seen };
    }
    const rows = (ids: number[]) => ids.map((i) => ({ id: `v${i}`, vector: vectorOf(i), metadata: { i } }));
    /** Turns of the event loop while `job` runs. */
    async function turnsDuring(job: Promise<unknown>) {
      let turns = 0;
      let done = false;
      const tick = () => {
        if (done) return;
        turns++;
        setImmediate(tick);
      };
      setImmediate(tick);
      await job.finally(() => (done = true));
      return turns;
    }

    it('writes an import and an add-many in pieces of at most WRITE_PIECE_BYTES, none in one synchronous write, the event loop turning between them', async () => {
      const { fs, seen } = recordingFs();
      const store = open(fs);
      const { token, session } = store.create();
      // 6000 x 64 float32 rows and their metadata: about 1.7 MB, two pieces.
      const plan = session.index.prepareUpsert(rows(range(0, 6000)), { metric: 'l2' });
      const encoded = await store.encodeImport(plan);
      const importing = store.writes.inTurn(session, () => store.writes.importPlan(session, plan, encoded));
      expect(await turnsDuring(importing)).to.be.greaterThan(1);
      expect(await importing).to.deep.equal({ added: 6000, replaced: 0 });
      const adding = store.writes.inTurn(session, () =>
        store.writes.upsert(session, store.writes.prepareUpsert(session, rows(range(6000, 12_000)), { metric: 'l2' })),
      );
      expect(await turnsDuring(adding)).to.be.greaterThan(1);
      await adding;
      await store.whenIdle();
      expect(seen.largestSync).to.be.at.most(WRITE_PIECE_BYTES);
      // The import's parts (about 280 KB each) go one write each; the add-many's one record is cut into pieces.
      expect(seen.async.filter((length) => length === WRITE_PIECE_BYTES).length, 'whole pieces').to.be.at.least(1);
      expect(Math.max(...seen.async)).to.be.at.most(WRITE_PIECE_BYTES);
      expectExactly(await open().authenticate(token), range(0, 12_000));
    });

    for (const short of [false, true]) {
      it(`cuts every piece back off when a later one fails (${short ? 'short' : 'ENOSPC'}), answers 503, and takes the next change`, async () => {
        const { fs, seen } = recordingFs();
        const store = open(fs);
        const { token, session } = store.create();
        add(store, session, range(0, 10));
        const path = join(dir, `${hashToken(token)}.log`);
        const before = statSync(path).size;
        seen.failAt = seen.async.length + 2;
        seen.short = short;
        const failed = await store.writes
          .inTurn(session, () => store.writes.upsert(session, store.writes.prepareUpsert(session, rows(range(100, 6100)), { metric: 'l2' })))
          .then(
            () => null,
            (err: unknown) => err,
          );
        expect(failed).to.be.instanceOf(ApiError);
        expect((failed as ApiError).status).to.equal(503);
        expect(statSync(path).size).to.equal(before);
        expectExactly(session, range(0, 10));
        await store.writes.inTurn(session, () => store.writes.upsert(session, store.writes.prepareUpsert(session, rows(range(10, 20)), { metric: 'l2' })));
        expectExactly(await open().authenticate(token), range(0, 20));
      });
    }
  });

  it('reopens a session in slices: requests with its token share one reopen', async () => {
    const store = open();
    const { token, session } = store.create();
    for (let round = 0; round < 20; round++) add(store, session, range(round * 100, round * 100 + 100));
    const reopening = open();
    const first = reopening.authenticate(token);
    const second = reopening.authenticate(token);
    expect(first).to.be.instanceOf(Promise);
    const [a, b] = await Promise.all([first, second]);
    expect(a).to.equal(b);
    expectExactly(a, range(0, 2000));
    // Room for the log's rows was made at once (about what it holds), not grown step by step.
    expect(a.index.stats().rowCapacity).to.be.within(2000, 3000);
    expect(reopening.authenticate(token)).to.equal(a);
  });

  describe('FSYNC=always', () => {
    it('answers a change only after fdatasync, one fdatasync per batch of changes in flight', async () => {
      const { fs, faults } = faultyFs();
      const store = open(fs, { fsync: 'always' });
      const { session } = store.create();
      add(store, session, [0]);
      const first = store.durable(session)!;
      expect(first).to.be.instanceOf(Promise);
      // Ten more changes while that fdatasync is in flight: they share the next one.
      const rest = range(1, 11).map((i) => {
        add(store, session, [i]);
        return store.durable(session)!;
      });
      await Promise.all([first, ...rest]);
      expect(faults.fdatasyncCalls).to.equal(2);
      expect(store.durable(session)).to.equal(undefined);
    });

    it('confirms every change made while a compaction renames the log', async () => {
      const { fs, faults } = faultyFs();
      const store = open(fs, { fsync: 'always' });
      const { token, session } = store.create();
      const confirmed: Promise<void>[] = [];
      for (let round = 0; round < 14; round++) {
        add(
          store,
          session,
          range(0, 300).map((i) => i + (round % 2) * 1000),
        );
        confirmed.push(store.durable(session)!);
        await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(confirmed);
      await store.whenIdle();
      expect(logged.join('\n')).not.to.match(/could not/);
      expect(faults.fdatasyncCalls).to.be.at.least(2);
      expect(statSync(join(dir, `${hashToken(token)}.log`)).size, 'compacted').to.be.below(1024 * 1024);
      expectExactly(await open().authenticate(token), [...range(0, 300), ...range(1000, 1300)]);
    });

    it('after a failed fdatasync, refuses changes (503) until the log is rewritten from memory and fsynced', async () => {
      const { fs, faults } = faultyFs();
      const store = open(fs, { fsync: 'always' });
      const { token, session } = store.create();
      add(store, session, range(0, 5));
      await store.durable(session);
      // The fdatasync fails, and so does the fsync of the rewrite: the change is answered 503.
      faults.fdatasync = true;
      faults.fsync = true;
      add(store, session, range(5, 10));
      const err = await store.durable(session)!.then(
        () => null,
        (caught) => caught,
      );
      expect(err).to.be.instanceOf(ApiError);
      expect(err.status).to.equal(503);
      // The page cache may hold what the disk does not: no change is taken until the rewrite succeeds.
      expect(refused(() => add(store, session, [99])).status).to.equal(503);
      await store.whenIdle();
      faults.fdatasync = false;
      faults.fsync = false;
      expect(refused(() => add(store, session, [99])).status, 'the rewrite this refusal started is under way').to.equal(503);
      await store.whenIdle();
      expect(logged.join('\n')).to.match(/fsync failed .* rewritten from memory/);
      // Rewritten: the same session takes changes again, each confirmed by fdatasync.
      expect(await store.authenticate(token)).to.equal(session);
      add(store, session, [10]);
      await store.durable(session);
      expectExactly(session, range(0, 11));
      expectExactly(await open().authenticate(token), range(0, 11));
    });

    it('takes an open() that fails (EMFILE) for no failed fsync: 503 for that change, no rewrite, the next fdatasync confirms it', async () => {
      const { fs, faults } = faultyFs();
      const store = open(fs, { fsync: 'always' });
      const { token, session } = store.create();
      const path = join(dir, `${hashToken(token)}.log`);
      add(store, session, range(0, 5));
      await store.durable(session);
      const inode = statSync(path).ino;
      faults.open = true;
      const calls = faults.fdatasyncCalls;
      add(store, session, range(5, 10));
      const err = await store.durable(session)!.then(
        () => null,
        (caught) => caught,
      );
      expect(err).to.be.instanceOf(ApiError);
      expect([err.status, err.code]).to.deep.equal([503, 'SERVER_AT_CAPACITY']);
      expect(err.message).to.match(/no file handle free/);
      expect(faults.fdatasyncCalls, 'no fdatasync was tried').to.equal(calls);
      faults.open = false;
      // Not broken: the next change is taken at once, and its fdatasync confirms the one before too.
      add(store, session, [10]);
      await store.durable(session);
      await store.whenIdle();
      expect(statSync(path).ino, 'the log was not rewritten').to.equal(inode);
      expect(logged.join('\n')).not.to.match(/rewritten from memory/);
      expectExactly(await open().authenticate(token), range(0, 11));
    });

    it("takes a directory that cannot be opened for a compaction's fsync (EMFILE) for no failed fsync: 503, no rewrite, the next sync tries it again", async () => {
      const { fs, faults } = faultyFs();
      const store = open(fs, { fsync: 'always' });
      const { token, session } = store.create();
      add(store, session, range(0, 5));
      await store.durable(session);
      faults.openDir = true;
      // Renamed over the log; the directory fsync that makes the rename durable could not be tried.
      await store.compactLog(session);
      add(store, session, range(5, 8));
      const err = await store.durable(session)!.then(
        () => null,
        (caught) => caught,
      );
      expect([err?.status, err?.code]).to.deep.equal([503, 'SERVER_AT_CAPACITY']);
      faults.openDir = false;
      add(store, session, [8]);
      await store.durable(session);
      await store.whenIdle();
      expect(logged.join('\n')).not.to.match(/rewritten from memory|fsync failed/);
      expectExactly(await open().authenticate(token), range(0, 9));
    });

    it('confirms the changes a failed fdatasync left waiting once the rewrite from memory is on stable storage', async () => {
      const { fs, faults } = faultyFs();
      const store = open(fs, { fsync: 'always' });
      const { token, session } = store.create();
      add(store, session, range(0, 5));
      faults.fdatasync = true;
      const calls = faults.fdatasyncCalls;
      const confirmed = store.durable(session)!;
      while (faults.fdatasyncCalls === calls) await new Promise((resolve) => setImmediate(resolve));
      faults.fdatasync = false;
      await confirmed;
      expect(readFileSync(join(dir, `${hashToken(token)}.log`)).includes('"t":"synced"'), 'the rewrite holds no sync record').to.equal(false);
      expectExactly(await open().authenticate(token), range(0, 5));
    });
  });

  describe('an unusable DATA_DIR at start-up', () => {
    it('is a configuration error when the directory takes no file', () => {
      const fs: JournalFs = {
        ...nodeFs,
        openSync: () => {
          throw fault('EROFS');
        },
      };
      expect(() => open(fs)).to.throw(/DATA_DIR .* is not writable.*EROFS/);
    });

    it('is a configuration error when the directory cannot be made', () => {
      const file = join(dir, 'a-file');
      nodeFs.writeSync(nodeFs.openSync(file, 'w'), Buffer.from('x'), 0, 1, 0);
      expect(() => new SessionStore(loadConfig({}, { dataDir: join(file, 'sessions') }), kernel)).to.throw(/DATA_DIR .* cannot be created/);
    });
  });
});
