// A snapshot of a session (what compaction and a rewrite after a failed fsync
// write) reopens to the same session as the log it was made from: vectors,
// metadata, configuration, timestamps and the tie-break order of search results.
import { expect } from 'chai';
import fc from 'fast-check';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import type { RecordV2 } from '../../../src/sessions/persistence/records-v2.js';
import { snapshotRecords } from '../../../src/sessions/persistence/snapshot.js';
import { Session } from '../../../src/sessions/session.js';
import { restoreBytes, restoreLog } from './restore-log.js';

const IDS = ['a', 'b', 'c', 'd', 'e', '__proto__'];
const make = (id: string, createdAt: number) => new Session('f'.repeat(64), loadKernelModule(), 1000, 60_000, createdAt, { id, createdAt });
const utf8 = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

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

function snapshotOf(session: Session): Buffer {
  const state = { sessionId: session.id, createdAt: session.createdAt, updatedAt: session.updatedAt, lastAccessedAt: session.lastAccessedAt, sequence: 7 };
  return Buffer.concat([...snapshotRecords(state, session.index.openExport())]);
}

function logs(dim: number, vectorType: 'float32' | 'int8'): fc.Arbitrary<RecordV2[]> {
  const id = fc.constantFrom(...IDS);
  const vector = fc.array(fc.integer({ min: -2, max: 2 }), { minLength: dim, maxLength: dim });
  const metadata = fc.option(fc.record({ g: fc.integer({ min: 0, max: 3 }) }), { nil: null });
  type Change =
    | { t: 'upsert'; records: { id: string; v: number[]; m: { g: number } | null }[] }
    | { t: 'metadata'; id: string; metadata: { g: number } }
    | { t: 'delete'; ids: string[] }
    | { t: 'clear' }
    | { t: 'reset' }
    | { t: 'touch' };
  const change: fc.Arbitrary<Change> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.array(fc.record({ id, v: vector, m: metadata }), { minLength: 1, maxLength: 4 }).map((records) => ({ t: 'upsert' as const, records })),
    },
    { weight: 2, arbitrary: fc.record({ id, metadata: fc.record({ g: fc.integer({ min: 0, max: 3 }) }) }).map((r) => ({ t: 'metadata' as const, ...r })) },
    { weight: 2, arbitrary: fc.array(id, { minLength: 1, maxLength: 3 }).map((ids) => ({ t: 'delete' as const, ids })) },
    { weight: 1, arbitrary: fc.constant({ t: 'clear' as const }) },
    { weight: 1, arbitrary: fc.constant({ t: 'reset' as const }) },
    { weight: 2, arbitrary: fc.constant({ t: 'touch' as const }) },
  );
  return fc.tuple(fc.array(change, { maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 30, maxLength: 30 })).map(([changes, gaps]) => {
    let at = 1_000_000;
    const records: RecordV2[] = [{ t: 'open', sessionId: 'session-1', createdAt: at }];
    changes.forEach((c, i) => {
      at += gaps[i];
      if (c.t === 'upsert') {
        records.push({
          t: 'upsert',
          at,
          dimensions: dim,
          metric: 'l2',
          vectorType,
          ids: c.records.map((r) => r.id),
          rows: Float32Array.from(c.records.flatMap((r) => r.v)),
          metadata: c.records.map((r) => (r.m ? utf8(r.m) : null)),
          text: null,
        });
      } else if (c.t === 'metadata') records.push({ t: 'metadata', at, id: c.id, metadata: utf8(c.metadata) });
      else records.push({ ...c, at } as RecordV2);
    });
    return records;
  });
}

describe('session snapshots', () => {
  it('reopen to the same session as the log they were made from', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom('float32' as const, 'int8' as const)).chain(([dim, type]) => logs(dim, type)),
        async (records) => {
          const session = await restoreLog(records, make);
          expect(observe(await restoreBytes(snapshotOf(session), make))).to.deep.equal(observe(session));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keep an initialized but empty index locked to its dimension and metric', async () => {
    const session = await restoreLog(
      [
        { t: 'open', sessionId: 's', createdAt: 1 },
        {
          t: 'upsert',
          at: 2,
          dimensions: 2,
          metric: 'cosine',
          vectorType: 'float32',
          ids: ['a'],
          rows: Float32Array.from([1, 2]),
          metadata: [null],
          text: null,
        },
        { t: 'clear', at: 3 },
      ],
      make,
    );
    const reopened = await restoreBytes(snapshotOf(session), make);
    expect(reopened.index.getConfig()).to.include({ dimensions: 2, metric: 'cosine' });
    expect(reopened.index.size).to.equal(0);
    expect(reopened.updatedAt).to.equal(3);
  });

  it('keep the embedding model of a session whose texts were embedded', async () => {
    const vector = new Float32Array(512).fill(0.25);
    const session = await restoreLog(
      [
        { t: 'open', sessionId: 's', createdAt: 1 },
        {
          t: 'upsert',
          at: 2,
          dimensions: 512,
          metric: 'cosine',
          vectorType: 'float32',
          embedding: 'use-lite-512',
          ids: ['a'],
          rows: vector,
          metadata: [null],
          text: null,
        },
      ],
      make,
    );
    expect(session.index.getConfig().embedding).to.equal('use-lite-512');
    const reopened = await restoreBytes(snapshotOf(session), make);
    expect(reopened.index.getConfig()).to.include({ dimensions: 512, metric: 'cosine', embedding: 'use-lite-512' });
  });
});
