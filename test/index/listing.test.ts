// VectorIndex count, idsMatching and list: filters, insertion order, and
// cursors that survive writes between pages (checked against a plain model).
import { expect } from 'chai';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { expectApiError } from '../helpers/errors.js';
import { randomInt, randomVector, seededRng } from '../helpers/random.js';

const newIndex = (maxVectors = 10_000) => new VectorIndex(loadKernelModule(), maxVectors);

describe('VectorIndex count, idsMatching and list', () => {
  it('counts all vectors, or those a filter matches', () => {
    const index = newIndex();
    expect(index.count()).to.equal(0);
    expect(index.count({ k: 1 })).to.equal(0);
    index.upsert(Array.from({ length: 50 }, (_, i) => ({ id: `v${i}`, vector: [i + 1, 1], metadata: { k: i % 3 } })));
    expect(index.count()).to.equal(50);
    expect(index.count({})).to.equal(50);
    expect(index.count({ k: 1 })).to.equal(17);
    expect(index.count({ k: { $ne: 1 } })).to.equal(33);
    expect(expectApiError(() => index.count({ k: { $bad: 1 } }), 'VALIDATION_ERROR').details).to.deep.equal({ path: '/filter/k/$bad' });
  });

  it('idsMatching names exactly the matching vectors', () => {
    const index = newIndex();
    index.upsert(Array.from({ length: 20 }, (_, i) => ({ id: `v${i}`, vector: [i + 1, 1], metadata: { even: i % 2 === 0 } })));
    index.delete(['v0', 'v3']);
    expect(index.idsMatching({ even: true }).sort()).to.deep.equal(['v10', 'v12', 'v14', 'v16', 'v18', 'v2', 'v4', 'v6', 'v8']);
  });

  it('lists in insertion order, a replaced vector moving to the end', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0, 1] },
      { id: 'c', vector: [1, 1] },
    ]);
    index.upsert([{ id: 'a', vector: [2, 0] }]);
    index.delete(['b']);
    index.upsert([{ id: 'b', vector: [0, 2] }]);
    expect(index.list({ limit: 10 })).to.deep.equal({ vectors: [{ id: 'c' }, { id: 'a' }, { id: 'b' }], nextCursor: null });
  });

  it('pages with a cursor, with vectors and metadata on request', () => {
    const index = newIndex();
    index.upsert(Array.from({ length: 5 }, (_, i) => ({ id: `v${i}`, vector: [i + 0.1, 1], metadata: { i } })));
    const first = index.list({ limit: 2, includeVectors: true, includeMetadata: true });
    expect(first.vectors.map((v) => v.id)).to.deep.equal(['v0', 'v1']);
    expect(Array.from(first.vectors[1].vector!)).to.deep.equal([Math.fround(1.1), 1]);
    expect(first.vectors[1].metadata!.value()).to.deep.equal({ i: 1 });
    const second = index.list({ limit: 2, cursor: first.nextCursor! });
    expect(second.vectors).to.deep.equal([{ id: 'v2' }, { id: 'v3' }]);
    const third = index.list({ limit: 2, cursor: second.nextCursor! });
    expect(third).to.deep.equal({ vectors: [{ id: 'v4' }], nextCursor: null });
    // A page that ends exactly at the last vector says so.
    expect(index.list({ limit: 5 }).nextCursor).to.equal(null);
  });

  it('lists only vectors matching a filter', () => {
    const index = newIndex();
    index.upsert(Array.from({ length: 30 }, (_, i) => ({ id: `v${i}`, vector: [i + 1, 1], metadata: { k: i % 3 } })));
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = index.list({ limit: 4, cursor, filter: { k: 2 } });
      ids.push(...page.vectors.map((v) => v.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(ids).to.deep.equal(Array.from({ length: 10 }, (_, i) => `v${i * 3 + 2}`));
  });

  it('refuses made-up, damaged and foreign cursors with INVALID_CURSOR', () => {
    const index = newIndex();
    index.upsert(Array.from({ length: 5 }, (_, i) => ({ id: `v${i}`, vector: [i + 1, 1] })));
    const other = newIndex();
    other.upsert(Array.from({ length: 5 }, (_, i) => ({ id: `v${i}`, vector: [i + 1, 1] })));
    const foreign = other.list({ limit: 2 }).nextCursor!;
    const good = index.list({ limit: 2 }).nextCursor!;
    for (const cursor of ['', 'abc', foreign, good.slice(0, -2), good + 'x', '!!!!', 'a'.repeat(500)]) {
      expect(expectApiError(() => index.list({ limit: 2, cursor }), 'INVALID_CURSOR').details).to.deep.equal({ path: '/cursor' });
    }
  });

  it('never repeats or skips a vector left unchanged through a listing with random writes', () => {
    const rng = seededRng(19);
    for (let round = 0; round < 20; round++) {
      const index = newIndex();
      let nextId = 0;
      const add = (n: number) =>
        index.upsert(Array.from({ length: n }, () => ({ id: `v${nextId++}`, vector: randomVector(rng, 3), metadata: { k: randomInt(rng, 2) } })));
      add(40 + randomInt(rng, 60));
      const filter = round % 2 ? { k: 1 } : undefined;
      const matches = (id: string) => !filter || index.getMetadata(id)!.value().k === 1;
      // Vectors stored at the start and never touched since: must be listed exactly once.
      const untouched = new Set(
        index
          .list({ limit: 1000 })
          .vectors.map((v) => v.id)
          .filter(matches),
      );
      const seen = new Map<string, number>();
      let cursor: string | undefined;
      do {
        const page = index.list({ limit: 1 + randomInt(rng, 7), cursor, filter });
        for (const { id } of page.vectors) seen.set(id, (seen.get(id) ?? 0) + 1);
        cursor = page.nextCursor ?? undefined;
        for (let w = randomInt(rng, 4); w > 0; w--) {
          const stored = index.list({ limit: 1000 }).vectors.map((v) => v.id);
          const victim = stored[randomInt(rng, stored.length)];
          const op = randomInt(rng, 4);
          if (op === 0) add(1 + randomInt(rng, 3));
          else if (victim && op === 1) index.delete([victim]);
          else if (victim && op === 2) index.upsert([{ id: victim, vector: randomVector(rng, 3) }]);
          else if (victim) index.setMetadata(victim, { k: randomInt(rng, 2) });
          if (victim && op > 0) untouched.delete(victim);
        }
      } while (cursor);
      for (const id of untouched) expect(seen.get(id), id).to.equal(1);
    }
  });
});
