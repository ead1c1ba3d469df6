// An import is logged in parts and replayed all or nothing, compaction
// between two parts included.
import { expect } from 'chai';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { compactEntries } from '../../../src/sessions/persistence/compact.js';
import { float32ToBase64 } from '../../../src/sessions/persistence/records.js';
import type { LogEntry } from '../../../src/sessions/persistence/session-journal.js';
import { Session } from '../../../src/sessions/session.js';
import { restoreLog } from './restore-log.js';

const make = (id: string, createdAt: number) => new Session('f'.repeat(64), loadKernelModule(), 1000, 60_000, createdAt, { id, createdAt });
const v = (x: number) => float32ToBase64(Float32Array.from([x, 1]));

const open: LogEntry = { t: 'open', v: 1, sessionId: 's', createdAt: 1000 };
const before: LogEntry = { t: 'upsert', at: 1001, dimensions: 2, metric: 'l2', vectorType: 'float32', records: [{ id: 'old', v: v(9) }] };
const parts: LogEntry[] = [0, 1, 2].map((part) => ({
  t: 'import', at: 1002, part, parts: 3, dimensions: 2, metric: 'l2', vectorType: 'float32',
  records: [{ id: `p${part}a`, v: v(part) }, { id: `p${part}b`, v: v(part + 0.5), m: { part } }],
}));
const ids = (session: Session) => session.index.list({ limit: 100 }).vectors.map((x) => x.id);

describe('import records in a session log', () => {
  it('replays a whole import as one upsert', async () => {
    expect(ids(await restoreLog([open, before, ...parts], make))).to.deep.equal(['old', 'p0a', 'p0b', 'p1a', 'p1b', 'p2a', 'p2b']);
  });

  it('replays none of an import whose last parts a crash cut off', async () => {
    const session = await restoreLog([open, before, parts[0], parts[1]], make);
    expect(ids(session)).to.deep.equal(['old']);
    expect(session.updatedAt).to.equal(1001);
  });

  it('compaction between two parts keeps the parts so far, and the finished log replays whole', async () => {
    const midway = compactEntries([open, before, parts[0], parts[1]]);
    expect(midway.slice(-2)).to.deep.equal([parts[0], parts[1]]);
    expect(ids(await restoreLog([...midway, parts[2]], make))).to.deep.equal(['old', 'p0a', 'p0b', 'p1a', 'p1b', 'p2a', 'p2b']);
    const done = compactEntries([...midway, parts[2]]);
    expect(done.some((e) => e.t === 'import')).to.equal(false);
    expect((await restoreLog(done, make)).index.get('p1b')).to.deep.equal((await restoreLog([open, before, ...parts], make)).index.get('p1b'));
  });
});
