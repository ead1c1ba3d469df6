// Per-record TTL in the index, by an injected clock (no sleeping): a record
// is gone from every read at the instant it expires (get, has, count, list,
// search, search by id, keyword search, export, delete, metadata), before
// and after the sweep frees it, against a plain float64 reference over the
// records live at that instant; touch renews; a replace without ttlMs clears it.
import { expect } from 'chai';
import { touchChange, applyToIndex } from '../../src/index/changes.js';
import type { ExportedVector, VectorInput } from '../../src/index/types.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { runSteps } from '../../src/limits/steps.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomInt, randomVector, seededRng } from '../helpers/random.js';
import { expectSameTopK, type ReferenceRow } from '../helpers/reference.js';

const T0 = 1_700_000_000_000;

function newIndex(maxVectors = 10_000) {
  const clock = { now: T0 };
  const index = new VectorIndex(loadKernelModule(), maxVectors);
  index.clock = () => clock.now;
  return { index, clock };
}

function exportAll(index: VectorIndex): { count: number; rows: ExportedVector[] } {
  const exp = index.openExport();
  const rows: ExportedVector[] = [];
  for (let batch = exp.next(7); batch.length > 0; batch = exp.next(7)) rows.push(...batch);
  return { count: exp.count, rows };
}

function listAll(index: VectorIndex, filter?: Record<string, unknown>): string[] {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = index.list({ limit: 13, cursor, filter });
    ids.push(...page.vectors.map((v) => v.id));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return ids;
}

describe('per-record TTL (index)', () => {
  it('expires a record at exactly expiresAt: present 1 ms before, gone at it from every read', () => {
    const { index, clock } = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], metadata: { k: 1 }, ttlMs: 1000, text: 'red fox' },
      { id: 'b', vector: [0, 1], metadata: { k: 1 }, text: 'red hen' },
    ]);
    expect(index.get('a')).to.include({ ttlMs: 1000, expiresAt: T0 + 1000 });
    expect(index.get('b')).to.not.have.property('expiresAt');
    clock.now = T0 + 999;
    expect(index.has('a')).to.equal(true);
    expect(index.count({ k: 1 })).to.equal(2);
    clock.now = T0 + 1000;
    expect(index.has('a')).to.equal(false);
    expect(index.get('a')).to.equal(undefined);
    expect(index.getMetadata('a')).to.equal(undefined);
    expect(index.count()).to.equal(1);
    expect(index.count({ k: 1 })).to.equal(1);
    expect(index.liveSize).to.equal(1);
    expect(listAll(index)).to.deep.equal(['b']);
    expect(index.search([[1, 0]], { topK: 5 }).results[0].map((h) => h.id)).to.deep.equal(['b']);
    expect(index.search(null, { queryTexts: ['red'], topK: 5 }).results[0].map((h) => h.id)).to.deep.equal(['b']);
    expect(index.search([[1, 0]], { queryTexts: ['fox'], topK: 5 }).results[0].map((h) => h.id)).to.deep.equal(['b']);
    expect(() => index.searchByIds(['a']))
      .to.throw()
      .with.property('code', 'VECTOR_NOT_FOUND');
    expect(index.idsMatching({ k: 1 })).to.deep.equal(['b']);
    const exported = exportAll(index);
    expect(exported.count).to.equal(1);
    expect(exported.rows.map((r) => r.id)).to.deep.equal(['b']);
    expect(touchChange(index, ['a', 'b'], clock.now)).to.deep.equal({ renew: null, touched: 1, notFound: ['a'] });
    // Physically still there until the sweep; then freed, reads unchanged.
    expect(index.size).to.equal(2);
    expect(index.removeExpired()).to.equal(1);
    expect(index.size).to.equal(1);
    expect(index.search([[1, 0]], { topK: 5 }).results[0].map((h) => h.id)).to.deep.equal(['b']);
  });

  it('treats a write of an expired id as an add, and a delete of one as not found', () => {
    const { index, clock } = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0], ttlMs: 10 }]);
    clock.now = T0 + 10;
    expect(index.delete(['a'])).to.deep.equal({ deleted: 0, notFound: ['a'] });
    index.upsert([{ id: 'b', vector: [1, 0], ttlMs: 10 }]);
    clock.now = T0 + 20;
    expect(index.upsert([{ id: 'b', vector: [0, 1] }])).to.deep.equal({ added: 1, replaced: 0 });
    expect(index.get('b')!.vector).to.deep.equal([0, 1]);
    expect(index.get('b')).to.not.have.property('ttlMs');
  });

  it('clears the ttl on a replace without ttlMs, keeps it through a metadata change, renews it by touch', () => {
    const { index, clock } = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], ttlMs: 100 },
      { id: 'b', vector: [0, 1], ttlMs: 100 },
    ]);
    clock.now = T0 + 50;
    index.upsert([{ id: 'a', vector: [1, 1] }]);
    expect(index.setMetadata('b', { n: 1 })).to.equal(true);
    expect(index.get('b')).to.include({ expiresAt: T0 + 100 });
    clock.now = T0 + 90;
    const touched = touchChange(index, ['b', 'a', 'zz'], clock.now);
    expect(touched).to.deep.equal({ renew: { t: 'renew', ids: ['b'], expiresAt: [T0 + 190] }, touched: 2, notFound: ['zz'] });
    applyToIndex(index, touched.renew!);
    clock.now = T0 + 189;
    expect(index.get('b')).to.include({ ttlMs: 100, expiresAt: T0 + 190 });
    expect(index.has('a')).to.equal(true);
    clock.now = T0 + 190;
    expect(index.has('b')).to.equal(false);
    expect(index.has('a')).to.equal(true);
  });

  it('refuses a bad ttlMs or an expiresAt past ttlMs from the write', () => {
    const { index } = newIndex();
    const bad: VectorInput[][] = [
      [{ id: 'a', vector: [1, 0], ttlMs: 0 }],
      [{ id: 'a', vector: [1, 0], ttlMs: 1.5 }],
      [{ id: 'a', vector: [1, 0], expiresAt: T0 + 5 }],
      [{ id: 'a', vector: [1, 0], ttlMs: 10, expiresAt: T0 + 11 }],
    ];
    for (const records of bad)
      expect(() => index.upsert(records), JSON.stringify(records))
        .to.throw()
        .with.property('code', 'VALIDATION_ERROR');
    expect(index.size).to.equal(0);
    index.upsert([{ id: 'a', vector: [1, 0], ttlMs: 10, expiresAt: T0 + 3 }]);
    expect(index.get('a')).to.include({ expiresAt: T0 + 3 });
  });

  it('answers only the live records, exactly, on random data with random ttls, before and after sweeps', () => {
    const rng = seededRng(36);
    const { index, clock } = newIndex();
    const dim = 8;
    const model = new Map<string, { vector: number[]; expiresAt: number; seq: number; group: number }>();
    let seq = 0;
    for (let step = 0; step < 40; step++) {
      const batch: VectorInput[] = [];
      for (let i = 0; i < 25; i++) {
        const id = `r${randomInt(rng, 400)}`;
        if (batch.some((r) => r.id === id)) continue;
        const vector = randomVector(rng, dim).map(Math.fround);
        // Ties too: a few vectors repeat.
        if (randomInt(rng, 10) === 0 && model.size > 0) vector.splice(0, dim, ...[...model.values()][0].vector);
        const ttlMs = randomInt(rng, 3) === 0 ? undefined : 1 + randomInt(rng, 400);
        const group = randomInt(rng, 3);
        batch.push({ id, vector, metadata: { group }, ...(ttlMs ? { ttlMs } : {}) });
      }
      index.upsert(batch);
      for (const r of batch)
        model.set(r.id, {
          vector: r.vector as number[],
          expiresAt: r.ttlMs ? clock.now + r.ttlMs : Infinity,
          seq: seq++,
          group: (r.metadata as { group: number }).group,
        });
      clock.now += 1 + randomInt(rng, 60);
      if (step % 3 === 0) {
        const ids = Array.from({ length: 8 }, () => `r${randomInt(rng, 400)}`);
        const { renew } = touchChange(index, ids, clock.now);
        if (renew) applyToIndex(index, renew);
        for (const id of new Set(ids)) {
          const m = model.get(id);
          if (m && m.expiresAt > clock.now && m.expiresAt !== Infinity) m.expiresAt = renew!.expiresAt[renew!.ids.indexOf(id)];
        }
      }
      if (step % 7 === 6) {
        // A partial sweep: stopped after a random number of checks (every 16 rows).
        let checks = randomInt(rng, 4);
        index.removeExpired(() => checks-- <= 0);
      }
      const live = [...model.entries()].filter(([, m]) => m.expiresAt > clock.now);
      const rows: ReferenceRow[] = live.map(([id, m]) => ({ id, vector: m.vector, seq: m.seq }));
      expect(index.count(), `step ${step}`).to.equal(live.length);
      expect(index.count({ group: 1 })).to.equal(live.filter(([, m]) => m.group === 1).length);
      const byOrder = [...rows].sort((a, b) => a.seq - b.seq).map((r) => r.id);
      expect(listAll(index)).to.deep.equal(byOrder);
      expect(exportAll(index).rows.map((r) => r.id)).to.deep.equal(byOrder);
      const query = randomVector(rng, dim);
      expectSameTopK('cosine', index.search([query], { topK: 10 }).results[0], query, rows, 10, `step ${step}`);
      const inGroup = live.filter(([, m]) => m.group === 2).map(([id, m]) => ({ id, vector: m.vector, seq: m.seq }));
      expectSameTopK('cosine', index.search([query], { topK: 10, filter: { group: 2 } }).results[0], query, inGroup, 10, `step ${step} filtered`);
      for (const [id, m] of model) expect(index.has(id), id).to.equal(m.expiresAt > clock.now);
    }
    index.removeExpired();
    expect(index.size).to.equal(index.liveSize);
  });

  it('keeps an open export to the records live when it opened, however they expire or are swept meanwhile', () => {
    const { index, clock } = newIndex();
    index.upsert(Array.from({ length: 20 }, (_, i) => ({ id: `v${i}`, vector: [1, i + 1], ttlMs: i < 10 ? 5 : 50 })));
    clock.now = T0 + 5;
    const exp = index.openExport();
    expect(exp.count).to.equal(10);
    clock.now = T0 + 50;
    index.removeExpired();
    expect(index.size).to.equal(0);
    const rows: ExportedVector[] = [];
    for (let batch = exp.next(3); batch.length > 0; batch = exp.next(3)) rows.push(...batch);
    expect(rows.map((r) => r.id)).to.deep.equal(Array.from({ length: 10 }, (_, i) => `v${i + 10}`));
    expect(rows[0]).to.include({ ttlMs: 50, expiresAt: T0 + 50 });
  });
});

describe('per-record TTL beside facets and ordered listings', () => {
  it('counts and lists only the live rows, before the sweep frees the expired ones, as a reference over the live records', () => {
    const rng = seededRng(36);
    const { index, clock } = newIndex();
    const records: VectorInput[] = Array.from({ length: 300 }, (_, i) => ({
      id: `r${i}`,
      vector: randomVector(rng, 4),
      metadata: { color: ['red', 'green', 'blue'][randomInt(rng, 3)], n: randomInt(rng, 40), tags: [`t${randomInt(rng, 5)}`, `t${randomInt(rng, 5)}`] },
      ...(randomInt(rng, 2) === 0 ? { ttlMs: 1 + randomInt(rng, 1000) } : {}),
    }));
    index.upsert(records);
    for (const now of [T0, T0 + 250, T0 + 600, T0 + 1000]) {
      clock.now = now;
      const live = records.filter((r) => r.ttlMs === undefined || T0 + r.ttlMs > now);
      // Facets: each value's count over the live rows (an array's distinct elements once a row), count desc then value asc.
      for (const [path, filter] of [
        ['color', undefined],
        ['tags', { n: { $lt: 20 } }],
      ] as const) {
        const counts = new Map<string, number>();
        for (const r of live) {
          const m = r.metadata as { color: string; n: number; tags: string[] };
          if (filter && !(m.n < 20)) continue;
          for (const v of new Set(path === 'color' ? [m.color] : m.tags)) counts.set(v, (counts.get(v) ?? 0) + 1);
        }
        const expected = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([value, count]) => ({ value, count }));
        expect(runSteps(index.facetSteps({ path, filter, limit: 10 })).values, `${path} at +${now - T0}`).to.deep.equal(expected);
      }
      // Ordered by n, ties in insertion order: the live ids only, each once.
      const ids: string[] = [];
      let cursor: string | undefined;
      do {
        const page = index.list({ limit: 17, cursor, orderBy: { path: 'n', direction: 'asc' } });
        ids.push(...page.vectors.map((v) => v.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      const byN = live.map((r, i) => ({ id: r.id, n: (r.metadata as { n: number }).n, i })).sort((a, b) => a.n - b.n || a.i - b.i);
      expect(ids, `orderBy at +${now - T0}`).to.deep.equal(byN.map((r) => r.id));
    }
  });
});

describe('per-record TTL beside the search stages', () => {
  it('groups, diversifies and decays only the live rows: the answers of an index of the live records alone', () => {
    const rng = seededRng(37);
    const { index, clock } = newIndex();
    const records: VectorInput[] = Array.from({ length: 400 }, (_, i) => ({
      id: `r${i}`,
      vector: randomVector(rng, 8),
      metadata: { g: `g${randomInt(rng, 12)}`, n: randomInt(rng, 100) },
      ...(randomInt(rng, 2) === 0 ? { ttlMs: 1 + randomInt(rng, 1000) } : {}),
    }));
    index.upsert(records);
    const query = randomVector(rng, 8);
    const cases = [
      { topK: 5, groupBy: { path: 'g', size: 2 } },
      { topK: 8, mmr: { diversity: 0.6, candidates: 50 } },
      { topK: 8, decay: { path: 'n', origin: 50, scale: 20, curve: 'gauss' as const } },
      { topK: 5, decay: { path: 'n', origin: 10, scale: 30, curve: 'linear' as const }, groupBy: { path: 'g' } },
    ];
    for (const now of [T0 + 300, T0 + 700]) {
      clock.now = now;
      const live = records.filter((r) => r.ttlMs === undefined || T0 + r.ttlMs > now);
      const { index: alone } = newIndex();
      alone.upsert(live.map(({ ttlMs: _, ...r }) => r));
      for (const options of cases) {
        const strip = (out: ReturnType<VectorIndex['search']>) => ({ results: out.results, groups: out.groups });
        expect(strip(index.search([query], options)), `${JSON.stringify(options)} at +${now - T0}`).to.deep.equal(strip(alone.search([query], options)));
      }
    }
  });
});
