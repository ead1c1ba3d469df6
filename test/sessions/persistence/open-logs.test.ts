// Logs stay open between appends, but no more than openLogsMax of them: the
// least recently used is closed, and reopened by its next append.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { nodeFs, type JournalFs } from '../../../src/sessions/persistence/journal-fs.js';
import { SessionJournal } from '../../../src/sessions/persistence/session-journal.js';
import { Session } from '../../../src/sessions/session.js';
import { reopened } from './restore-log.js';
import { Slices } from '../../../src/limits/slices.js';

const kernel = loadKernelModule();

describe('open session logs', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tempvec-open-logs-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps at most openLogsMax logs open between appends, and every append lands', async () => {
    const open = new Set<number>();
    let opens = 0;
    const fs: JournalFs = {
      ...nodeFs,
      openSync: (path, flags, mode) => {
        const fd = nodeFs.openSync(path, flags, mode);
        if (path.endsWith('.log') && flags === 'r+') {
          open.add(fd);
          opens++;
        }
        return fd;
      },
      closeSync: (fd) => {
        open.delete(fd);
        nodeFs.closeSync(fd);
      },
    };
    const journal = new SessionJournal(dir, 60_000, { fs, openLogsMax: 2 });
    const sessions = ['a', 'b', 'c'].map((name) => new Session(name.repeat(64), kernel, 100, 600_000, 1_000));
    for (const session of sessions) journal.create(session);
    let most = 0;
    for (let round = 0; round < 4; round++) {
      for (const [n, session] of sessions.entries()) {
        const plan = session.index.prepareUpsert([{ id: `v${round}`, vector: [n + 1, round + 1] }], { metric: 'l2' });
        session.index.applyUpsertSliced(plan, new Slices(Infinity), () => journal.upsert(session, plan, 2_000 + round));
        most = Math.max(most, open.size);
      }
    }
    expect(most).to.equal(2);
    expect(opens).to.be.above(3); // closed past the cap, opened again by the next append
    journal.close(sessions[0]);
    for (const [n, session] of sessions.entries()) {
      const restored = reopened(
        await new SessionJournal(dir, 60_000).reopen(
          session.tokenHash,
          (id, createdAt) => new Session(session.tokenHash, kernel, 100, 600_000, createdAt, { id, createdAt }),
        ),
      );
      expect(restored!.session.index.size, `session ${n}`).to.equal(4);
    }
  });
});
