// Compaction from memory while the session changes under it: the export it
// writes stays the session as it was at the snapshot's moment, the changes
// appended since are copied after it, and a compaction whose export would
// keep too many copies of changed rows gives up and keeps the old log.
import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { nodeFs, type JournalFs } from '../../../src/sessions/persistence/journal-fs.js';
import { SessionJournal } from '../../../src/sessions/persistence/session-journal.js';
import { Session } from '../../../src/sessions/session.js';
import { reopened } from './restore-log.js';
import { Slices } from '../../../src/limits/slices.js';

const kernel = loadKernelModule();
/** 128 rows a snapshot record (rowsPerStep), so the export is read over many turns. */
const DIM = 1024;
const HASH = 'a'.repeat(64);
const vectorOf = (i: number) => Float32Array.from({ length: DIM }, (_, j) => ((i * 13 + j * 7) % 41) / 8 - 2);
const make = (id: string, createdAt: number) => new Session(HASH, kernel, 10_000, 600_000, createdAt, { id, createdAt });

describe('compaction from memory', () => {
  let dir: string;
  const console_ = { error: console.error };
  let logged: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tempvec-compaction-'));
    logged = [];
    console.error = (...args: unknown[]) => logged.push(args.join(' '));
  });
  afterEach(() => {
    Object.assign(console, console_);
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A journal over the real file system whose next compaction calls `during` as it
   * writes its third record (the snapshot's moment is then past, most of the
   * export not yet read), and a session of `rows` rows logged through it.
   */
  async function setUp(rows: number, during: (journal: SessionJournal, session: Session) => void, copiesMaxBytes?: number, now?: () => number) {
    let temp = -1;
    let writes = 0;
    let armed = false;
    const fs: JournalFs = {
      ...nodeFs,
      open: async (path, flags, mode) => {
        const fd = await nodeFs.open(path, flags, mode);
        if (path.endsWith('.tmp')) temp = fd;
        return fd;
      },
      write: async (fd, buffer, offset, length, position) => {
        if (armed && fd === temp && ++writes === 3) during(journal, session);
        return nodeFs.write(fd, buffer, offset, length, position);
      },
    };
    const journal = new SessionJournal(dir, 60_000, { fs, compactionCopiesMaxBytes: copiesMaxBytes, now });
    const session = make('s', 1_000);
    journal.create(session);
    for (let from = 0; from < rows; from += 500) {
      const plan = session.index.prepareUpsert(
        Array.from({ length: 500 }, (_, i) => ({ id: `v${from + i}`, vector: vectorOf(from + i), metadata: { i: from + i } })),
        { metric: 'l2' },
      );
      // 2 MB a batch: written in pieces.
      await session.index.applyUpsertSliced(plan, new Slices(Infinity), () => journal.upsert(session, plan, 2_000));
    }
    // The compactions the log's growth started end first: `during` comes in the one the test runs.
    await journal.whenIdle();
    armed = true;
    return { journal, session };
  }

  /** Delete v1000 to v2999, logged then applied as a route does. */
  function deleteRows(journal: SessionJournal, session: Session) {
    const ids = Array.from({ length: 2000 }, (_, i) => `v${1000 + i}`);
    journal.delete(session, ids, 3_000);
    session.index.delete(ids);
  }

  async function reopen(): Promise<Session> {
    const restored = reopened(await new SessionJournal(dir, 60_000).reopen(HASH, make));
    return restored!.session;
  }

  it('writes the session as it was at its moment, then the changes made while it ran', async () => {
    const { journal, session } = await setUp(3000, deleteRows);
    await journal.compactNow(session);
    expect(logged.join('\n')).to.equal('');
    const reopened = await reopen();
    expect(reopened.index.size).to.equal(1000);
    expect(Array.from(reopened.index.get('v999')!.vector)).to.deep.equal(Array.from(vectorOf(999)));
    expect(reopened.index.has('v1000')).to.equal(false);
    expect(reopened.index.getMetadata('v5')!.value()).to.deep.equal({ i: 5 });
  });

  it('gives up, keeping the old log, once its export would keep too many copies of rows changed under it', async () => {
    const { journal, session } = await setUp(3000, deleteRows, 1024 * 1024);
    await journal.compactNow(session);
    expect(logged.join('\n')).to.match(/could not compact.*old log is kept.*changed too much/);
    expect(existsSync(join(dir, `${HASH}.log.tmp`))).to.equal(false);
    const reopened = await reopen();
    expect(reopened.index.size).to.equal(1000);
    expect(reopened.index.has('v2999')).to.equal(false);
  });

  const logBytes = () => statSync(join(dir, `${HASH}.log`)).size;

  /** Add one row, logged then applied as a route does. */
  async function addOne(journal: SessionJournal, session: Session, i: number) {
    const plan = session.index.prepareUpsert([{ id: `n${i}`, vector: vectorOf(i) }], { metric: 'l2' });
    await session.index.applyUpsertSliced(plan, new Slices(Infinity), () => journal.upsert(session, plan, 4_000));
  }

  it('after giving up (a clear under it), is tried again after a pause, not once the log has grown as much again', async () => {
    let clock = 10_000;
    const clear = (journal: SessionJournal, session: Session) => {
      journal.clear(session, 3_000);
      session.index.clear();
    };
    const { journal, session } = await setUp(3000, clear, 1024 * 1024, () => clock);
    // The same rows again until the log comes due: that compaction meets the clear and gives up.
    const gaveUp = () => logged.some((line) => /could not compact.*changed too much/.test(line));
    for (let round = 0; round < 10 && !gaveUp(); round++) {
      const plan = session.index.prepareUpsert(
        Array.from({ length: 500 }, (_, i) => ({ id: `v${i}`, vector: vectorOf(i) })),
        { metric: 'l2' },
      );
      await session.index.applyUpsertSliced(plan, new Slices(Infinity), () => journal.upsert(session, plan, 2_500));
      await journal.whenIdle();
    }
    expect(gaveUp()).to.equal(true);
    const before = logBytes();
    // Within the pause an append starts none; after it, the next append does.
    await addOne(journal, session, 1);
    await journal.whenIdle();
    expect(logBytes()).to.be.at.least(before);
    clock += 1000;
    await addOne(journal, session, 2);
    await journal.whenIdle();
    expect(logBytes(), `compacted from ${before} bytes`).to.be.below(64 * 1024);
    const reopened = await reopen();
    expect(reopened.index.size).to.equal(2);
  });

  it('compacts a reopened log by what it holds: live data against its size, not once it has doubled again', async () => {
    const { journal, session } = await setUp(3000, () => {});
    deleteRows(journal, session);
    await journal.whenIdle();
    const before = logBytes();
    const second = new SessionJournal(dir, 60_000);
    const restored = reopened(await second.reopen(HASH, make));
    expect(restored!.session.index.size).to.equal(1000);
    // The reopen started its compaction: the log holds about a third of what it did (1,000 of 3,000 rows live).
    await second.whenIdle();
    expect(logBytes(), `from ${before} bytes`).to.be.below(before / 2);
    expect((await reopen()).index.size).to.equal(1000);
  });
});
