// A compacted log reopens (the replay a restart runs) to the same session: vectors, metadata,
// configuration, timestamps and the tie-break order of search results.
import { expect } from 'chai';
import fc from 'fast-check';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { compactEntries } from '../../../src/sessions/persistence/compact.js';
import { float32ToBase64 } from '../../../src/sessions/persistence/records.js';
import type { LogEntry } from '../../../src/sessions/persistence/session-journal.js';
import { Session } from '../../../src/sessions/session.js';
import { restoreLog } from './restore-log.js';

const IDS = ['a', 'b', 'c', 'd', 'e', '__proto__'];
const make = (id: string, createdAt: number) => new Session('f'.repeat(64), loadKernelModule(), 1000, 60_000, createdAt, { id, createdAt });

/** Everything a caller can observe of a restored session. */
function observe(session: Session) {
  const { index } = session;
  const dim = index.getConfig().dimensions;
  return {
    view: session.view(0),
    vectors: IDS.map((id) => index.get(id) ?? null),
    // All-zero query under l2 with small integer vectors: many exact ties, so the order shows the tie-break.
    ranking: dim ? index.search([new Array(dim).fill(0)], { topK: 100 }).results[0] : [],
  };
}

function logs(dim: number, vectorType: 'float32' | 'int8'): fc.Arbitrary<LogEntry[]> {
  const id = fc.constantFrom(...IDS);
  const vector = fc.array(fc.integer({ min: -2, max: 2 }), { minLength: dim, maxLength: dim }).map((v) => float32ToBase64(Float32Array.from(v)));
  const metadata = fc.option(fc.record({ g: fc.integer({ min: 0, max: 3 }) }), { nil: undefined });
  type Change = { t: 'upsert'; records: { id: string; v: string; m?: { g: number } }[] } | { t: 'metadata'; id: string; metadata: { g: number } }
    | { t: 'delete'; ids: string[] } | { t: 'clear' } | { t: 'reset' } | { t: 'touch' };
  const change: fc.Arbitrary<Change> = fc.oneof(
    { weight: 5, arbitrary: fc.array(fc.record({ id, v: vector, m: metadata }, { requiredKeys: ['id', 'v'] }), { minLength: 1, maxLength: 4 }).map((records) => ({ t: 'upsert' as const, records })) },
    { weight: 2, arbitrary: fc.record({ id, metadata: fc.record({ g: fc.integer({ min: 0, max: 3 }) }) }).map((r) => ({ t: 'metadata' as const, ...r })) },
    { weight: 2, arbitrary: fc.array(id, { minLength: 1, maxLength: 3 }).map((ids) => ({ t: 'delete' as const, ids })) },
    { weight: 1, arbitrary: fc.constant({ t: 'clear' as const }) },
    { weight: 1, arbitrary: fc.constant({ t: 'reset' as const }) },
    { weight: 2, arbitrary: fc.constant({ t: 'touch' as const }) },
  );
  return fc.tuple(fc.array(change, { maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 30, maxLength: 30 }))
    .map(([changes, gaps]) => {
      let at = 1_000_000;
      const entries: LogEntry[] = [{ t: 'open', v: 1, sessionId: 'session-1', createdAt: at }];
      changes.forEach((c, i) => {
        at += gaps[i];
        entries.push(c.t === 'upsert' ? { ...c, at, dimensions: dim, metric: 'l2', vectorType } : { ...c, at } as LogEntry);
      });
      return entries;
    });
}

describe('log compaction', () => {
  it('replays to the same session as the full log', async () => {
    await fc.assert(fc.asyncProperty(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom('float32' as const, 'int8' as const)).chain(([dim, type]) => logs(dim, type)), async (entries) => {
      const compacted = compactEntries(entries);
      expect(compacted.length).to.be.at.most(Math.max(entries.length, 4));
      expect(observe(await restoreLog(compacted, make))).to.deep.equal(observe(await restoreLog(entries, make)));
    }), { numRuns: 150 });
  });

  it('keeps an initialized but empty index locked to its dimension and metric', async () => {
    const v = float32ToBase64(Float32Array.from([1, 2]));
    const entries: LogEntry[] = [
      { t: 'open', v: 1, sessionId: 's', createdAt: 1 },
      { t: 'upsert', at: 2, dimensions: 2, metric: 'cosine', records: [{ id: 'a', v }] },
      { t: 'clear', at: 3 },
    ];
    const session = await restoreLog(compactEntries(entries), make);
    expect(session.index.getConfig()).to.include({ dimensions: 2, metric: 'cosine' });
    expect(session.index.size).to.equal(0);
    expect(session.updatedAt).to.equal(3);
  });
});
