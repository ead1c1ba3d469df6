// Listing ordered by a metadata value (ordered-listing.ts) against a plain
// reference on random data: numbers, strings, arrays, ties by insertion order,
// rows without a value last, both directions, filtered; pages that stay
// right while other writes land between them; cursors refused elsewhere.
import { expect } from 'chai';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { expectApiError } from '../helpers/errors.js';
import { referenceMatches } from '../helpers/filter-reference.js';
import { randomInt, type Rng, seededRng } from '../helpers/random.js';

type Meta = Record<string, unknown>;
type Key = { rank: number; value: number | string; seq: number };
type Direction = 'asc' | 'desc';

const pick = <T>(rng: Rng, xs: readonly T[]) => xs[randomInt(rng, xs.length)];
const LONG = 'z'.repeat(300);
const STRINGS = ['a', 'b', 'B', 'é', '😀', '\uffff', '2026-01-02T00:00:00Z', '2025-12-31T23:59:59Z', '', LONG];
const MIXED = [0, 1, -2.5, 7, 1e300, ...STRINGS, true, false, null, { a: 1 }];

function randomMeta(rng: Rng): Meta {
  const meta: Meta = { g: randomInt(rng, 3) };
  if (rng() < 0.8) meta.n = randomInt(rng, 20) - 5;
  if (rng() < 0.7) meta.s = pick(rng, STRINGS);
  if (rng() < 0.8) meta.mix = rng() < 0.3 ? Array.from({ length: randomInt(rng, 4) }, () => pick(rng, MIXED)) : pick(rng, MIXED);
  if (rng() < 0.5) meta.o = { x: rng() < 0.5 ? randomInt(rng, 4) : [randomInt(rng, 4), randomInt(rng, 4)] };
  return meta;
}

function codePointCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!),
    y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}
/** Ascending order of two ordered values: numbers, then strings by code point. */
function valueCompare(a: number | string, b: number | string): number {
  if (typeof a !== typeof b) return typeof a === 'number' ? -1 : 1;
  return typeof a === 'number' ? a - (b as number) : codePointCompare(a, b as string);
}
const orderable = (x: unknown): x is number | string => typeof x === 'number' || (typeof x === 'string' && Buffer.byteLength(x) <= 256);

function valuesAt(meta: unknown, path: string[]): unknown[] {
  if (path.length === 0) return Array.isArray(meta) ? meta : [meta];
  if (Array.isArray(meta)) return meta.flatMap((item) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? valuesAt(item, path) : []));
  if (meta === null || typeof meta !== 'object' || !(path[0] in meta)) return [];
  return valuesAt((meta as Meta)[path[0]], path.slice(1));
}

/** The key of a row in the order: its first orderable value (least asc, greatest desc), or rank 2 for none. */
function keyOf(meta: Meta, seq: number, path: string, direction: Direction): Key {
  const found = valuesAt(meta, path.split('.')).filter(orderable);
  if (found.length === 0) return { rank: 2, value: 0, seq };
  const sorted = found.sort(valueCompare);
  const value = direction === 'asc' ? sorted[0] : sorted[sorted.length - 1];
  return { rank: 1, value, seq };
}
function keyCompare(a: Key, b: Key, direction: Direction): number {
  if (a.rank !== b.rank) return a.rank - b.rank;
  if (a.rank === 1) {
    const c = valueCompare(a.value, b.value);
    if (c !== 0) return direction === 'asc' ? c : -c;
  }
  return a.seq - b.seq;
}

class Model {
  rows = new Map<string, { meta: Meta; seq: number }>();
  seq = 0;
  constructor(readonly index: VectorIndex) {}
  add(records: { id: string; metadata: Meta }[]): void {
    this.index.upsert(records.map((r) => ({ ...r, vector: [1, 1] })));
    for (const r of records) this.rows.set(r.id, { meta: r.metadata, seq: this.seq++ });
  }
  delete(ids: string[]): void {
    this.index.delete(ids);
    for (const id of ids) this.rows.delete(id);
  }
  /** Ids in order after `after` (all from the start without it). */
  ordered(path: string, direction: Direction, filter: Meta | undefined, after: Key | null): { id: string; key: Key }[] {
    return [...this.rows]
      .filter(([, row]) => !filter || referenceMatches(filter, row.meta as never))
      .map(([id, row]) => ({ id, key: keyOf(row.meta, row.seq, path, direction) }))
      .filter(({ key }) => after === null || keyCompare(key, after, direction) > 0)
      .sort((a, b) => keyCompare(a.key, b.key, direction));
  }
}

const newIndex = () => new VectorIndex(loadKernelModule(), 10_000);

describe('listing ordered by a metadata value (orderBy)', () => {
  it('pages in order while other writes land between pages: every row stored throughout listed exactly once', () => {
    const rng = seededRng(5);
    for (const path of ['n', 's', 'mix', 'o.x']) {
      for (const direction of ['asc', 'desc'] as const) {
        for (const filter of [undefined, { g: { $ne: 1 } }]) {
          const model = new Model(newIndex());
          let next = 0;
          const fresh = () => ({ id: `v${next++}`, metadata: randomMeta(rng) });
          model.add(Array.from({ length: 120 }, fresh));
          const untouched = new Set(model.rows.keys());
          const seen = new Map<string, number>();
          let cursor: string | undefined;
          let after: Key | null = null;
          const limit = pick(rng, [1, 7, 25]);
          for (let pages = 0; ; pages++) {
            expect(pages).to.be.below(1000);
            const page = model.index.list({ limit, cursor, filter, orderBy: { path, direction } });
            const expected = model.ordered(path, direction, filter, after);
            const ids = page.vectors.map((v) => v.id);
            expect(ids, `${path} ${direction} page ${pages}`).to.deep.equal(expected.slice(0, limit).map((e) => e.id));
            expect(page.nextCursor === null, 'last page').to.equal(expected.length <= limit);
            for (const id of ids) seen.set(id, (seen.get(id) ?? 0) + 1);
            if (page.nextCursor === null) break;
            after = expected[limit - 1].key;
            cursor = page.nextCursor;
            // Writes between pages (the first 40): new rows, replaced rows (they move), deleted rows.
            if (pages >= 40) continue;
            const replaced = Array.from({ length: randomInt(rng, 3) }, () => `v${randomInt(rng, next)}`).filter((id) => model.rows.has(id));
            model.add([...Array.from({ length: randomInt(rng, 4) }, fresh), ...replaced.map((id) => ({ id, metadata: randomMeta(rng) }))]);
            const deleted = Array.from({ length: randomInt(rng, 3) }, () => `v${randomInt(rng, next)}`);
            model.delete(deleted);
            for (const id of [...replaced, ...deleted]) untouched.delete(id);
          }
          for (const id of untouched) {
            const row = model.rows.get(id)!;
            if (!filter || referenceMatches(filter, row.meta as never)) expect(seen.get(id), id).to.equal(1);
          }
        }
      }
    }
  });

  it('pages through more values than one walk keeps (RUN_VALUES), quiet or with writes now and then', () => {
    const rng = seededRng(9);
    for (const direction of ['asc', 'desc'] as const) {
      const model = new Model(newIndex());
      let next = 0;
      const fresh = () => ({ id: `w${next++}`, metadata: { k: rng() < 0.7 ? Math.round(rng() * 1e6) / 8 : `s${randomInt(rng, 1e6)}`, g: randomInt(rng, 4) } });
      model.add(Array.from({ length: 2600 }, fresh));
      let cursor: string | undefined;
      let after: Key | null = null;
      const filter = direction === 'desc' ? { g: { $ne: 0 } } : undefined;
      for (let pages = 0; ; pages++) {
        const page = model.index.list({ limit: 97, cursor, filter, orderBy: { path: 'k', direction } });
        const expected = model.ordered('k', direction, filter, after);
        expect(
          page.vectors.map((v) => v.id),
          `${direction} page ${pages}`,
        ).to.deep.equal(expected.slice(0, 97).map((e) => e.id));
        if (page.nextCursor === null) {
          expect(expected.length).to.be.at.most(97);
          break;
        }
        after = expected[96].key;
        cursor = page.nextCursor;
        if (pages % 13 === 12) {
          model.add([fresh(), { id: `w${randomInt(rng, next)}`, metadata: { k: randomInt(rng, 100), g: 1 } }]);
          model.delete([`w${randomInt(rng, next)}`]);
        }
      }
    }
  });

  it('orders numbers before strings, ties by insertion order, rows without a value last in both directions', () => {
    const model = new Model(newIndex());
    model.add([
      { id: 'none', metadata: { k: true } },
      { id: 's-b', metadata: { k: 'b' } },
      { id: 'n2', metadata: { k: 2 } },
      { id: 'arr', metadata: { k: [5, 'a', -1] } },
      { id: 'n2-later', metadata: { k: 2 } },
      { id: 'missing', metadata: {} },
      { id: 'date', metadata: { k: '2026-01-02T00:00:00Z' } },
    ]);
    const ids = (direction: Direction) => model.index.list({ limit: 100, orderBy: { path: 'k', direction } }).vectors.map((v) => v.id);
    expect(ids('asc')).to.deep.equal(['arr', 'n2', 'n2-later', 'date', 's-b', 'none', 'missing']);
    expect(ids('desc')).to.deep.equal(['s-b', 'arr', 'date', 'n2', 'n2-later', 'none', 'missing']);
  });

  it('lists every row as missing when no row has the path, and an empty index', () => {
    const model = new Model(newIndex());
    expect(model.index.list({ limit: 5, orderBy: { path: 'k', direction: 'asc' } })).to.deep.equal({ vectors: [], nextCursor: null });
    model.add([
      { id: 'a', metadata: {} },
      { id: 'b', metadata: { j: 1 } },
    ]);
    const first = model.index.list({ limit: 1, orderBy: { path: 'k', direction: 'asc' }, includeMetadata: true });
    expect(first.vectors.map((v) => [v.id, v.metadata!.value()])).to.deep.equal([['a', {}]]);
    expect(model.index.list({ limit: 1, cursor: first.nextCursor!, orderBy: { path: 'k', direction: 'asc' } })).to.deep.equal({
      vectors: [{ id: 'b' }],
      nextCursor: null,
    });
  });

  it('refuses a cursor of another order, of insertion order, of another index or made up', () => {
    const model = new Model(newIndex());
    model.add(Array.from({ length: 5 }, (_, i) => ({ id: `v${i}`, metadata: { k: i * 0.5 } })));
    const asc = { path: 'k', direction: 'asc' as const };
    const cursor = model.index.list({ limit: 2, orderBy: asc }).nextCursor!;
    expect(model.index.list({ limit: 2, orderBy: asc, cursor }).vectors.map((v) => v.id)).to.deep.equal(['v2', 'v3']);
    const plain = model.index.list({ limit: 2 }).nextCursor!;
    expectApiError(() => model.index.list({ limit: 2, orderBy: { path: 'k', direction: 'desc' }, cursor }), 'INVALID_CURSOR');
    expectApiError(() => model.index.list({ limit: 2, orderBy: { path: 'j', direction: 'asc' }, cursor }), 'INVALID_CURSOR');
    expectApiError(() => model.index.list({ limit: 2, orderBy: asc, cursor: plain }), 'INVALID_CURSOR');
    expectApiError(() => model.index.list({ limit: 2, cursor }), 'INVALID_CURSOR');
    expectApiError(() => new Model(newIndex()).index.list({ limit: 2, orderBy: asc, cursor }), 'INVALID_CURSOR');
    for (const bad of ['x', 'bzE', btoa('o1.a.b.1.n').replace(/=+$/, ''), btoa('o1.a.b.zzzzzzzzzzzzz.m')]) {
      expectApiError(() => model.index.list({ limit: 2, orderBy: asc, cursor: bad }), 'INVALID_CURSOR');
    }
  });
});
