// Facets (facet.ts) against a plain reference on random data: filtered,
// arrays (each distinct element once per row), ranges, ties in counts,
// limits, long strings, and the order across types; after deletes and replaces.
import { expect } from 'chai';
import type { FacetRange, FacetResult } from '../../src/index/facet.js';
import { runSteps } from '../../src/limits/steps.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { referenceMatches } from '../helpers/filter-reference.js';
import { randomInt, type Rng, seededRng } from '../helpers/random.js';

type Scalar = number | string | boolean | null;
type Meta = Record<string, unknown>;

const LONG = 'x'.repeat(300);
const POOL: Scalar[] = [0, 1, 2, -3.5, 1e300, 'a', 'b', 'B', 'é', '😀', '\uffff', '2026-01-02T00:00:00Z', true, false, null, LONG, `${LONG}y`];

const pick = <T>(rng: Rng, xs: readonly T[]) => xs[randomInt(rng, xs.length)];

function randomMeta(rng: Rng): Meta {
  const meta: Meta = {};
  if (rng() < 0.8) meta.cat = pick(rng, POOL);
  if (rng() < 0.6) meta.tags = Array.from({ length: randomInt(rng, 5) }, () => pick(rng, POOL.slice(0, 12)));
  if (rng() < 0.5) meta.o = { x: randomInt(rng, 6), y: [{ z: pick(rng, ['p', 'q']) }] };
  meta.g = randomInt(rng, 3);
  return meta;
}

/** Values at `path` of a row as the facet counts them (scalars; an array's scalar elements; through objects and arrays of objects). */
function scalarsAt(meta: unknown, path: string[]): unknown[] {
  if (path.length === 0) return Array.isArray(meta) ? meta.filter((x) => x === null || typeof x !== 'object') : [meta];
  if (Array.isArray(meta)) return meta.flatMap((item) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? scalarsAt(item, path) : []));
  if (meta === null || typeof meta !== 'object' || !(path[0] in meta)) return [];
  return scalarsAt((meta as Meta)[path[0]], path.slice(1));
}

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');
const rank = (x: Scalar) => (typeof x === 'number' ? 0 : typeof x === 'string' ? 1 : x === false ? 2 : x === true ? 3 : 4);
function codePointCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!),
    y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}
function valueCompare(a: Scalar, b: Scalar): number {
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === 'number') return a - (b as number);
  if (typeof a === 'string') return codePointCompare(a, b as string);
  return 0;
}

function referenceFacet(metas: Meta[], path: string, filter: Meta | undefined, limit: number, ranges?: FacetRange[]): FacetResult {
  const counts = new Map<string, { value: Scalar; count: number }>();
  let longStrings = 0;
  const rangeCounts = (ranges ?? []).map(() => 0);
  for (const meta of metas) {
    if (filter && !referenceMatches(filter, meta as never)) continue;
    const found = scalarsAt(meta, path.split('.')) as Scalar[];
    const distinct = new Map<string, Scalar>();
    let long = false;
    for (const x of found) {
      if (typeof x === 'string' && utf8Length(x) > 256) long = true;
      else if (x !== undefined) distinct.set(JSON.stringify(x), x);
    }
    if (long) longStrings++;
    for (const [key, value] of distinct) {
      const entry = counts.get(key) ?? { value, count: 0 };
      entry.count++;
      counts.set(key, entry);
    }
    (ranges ?? []).forEach((r, i) => {
      const hit = [...distinct.values()].some((x) => typeof x === 'number' && (r.gte === undefined || x >= r.gte) && (r.lt === undefined || x < r.lt));
      if (hit) rangeCounts[i]++;
    });
  }
  const all = [...counts.values()].sort((a, b) => b.count - a.count || valueCompare(a.value, b.value));
  const result: FacetResult = { values: all.slice(0, limit), distinctValues: all.length, longStrings };
  if (ranges) result.ranges = ranges.map((r, i) => ({ ...r, count: rangeCounts[i] }));
  return result;
}

describe('facets (POST /vectors/facet in the index)', () => {
  const facet = (index: VectorIndex, options: Parameters<VectorIndex['facetSteps']>[0]) => runSteps(index.facetSteps(options));

  it('match a plain reference on random data, filtered, with arrays, ranges, ties and limits', () => {
    const rng = seededRng(36);
    const index = new VectorIndex(loadKernelModule(), 10_000);
    const metas = new Map<string, Meta>();
    for (let round = 0; round < 6; round++) {
      const batch = Array.from({ length: 150 }, () => {
        const id = `v${randomInt(rng, 400)}`;
        const metadata = randomMeta(rng);
        metas.set(id, metadata);
        return { id, vector: [rng() + 0.1, 1], metadata };
      });
      // A batch may name an id twice: the last record wins, as in the reference.
      index.upsert(batch);
      const gone = Array.from({ length: 20 }, () => `v${randomInt(rng, 400)}`);
      index.delete(gone);
      for (const id of gone) metas.delete(id);
      const rows = [...metas.values()];
      for (const path of ['cat', 'tags', 'o.x', 'o.y.z', 'g', 'nothing']) {
        for (const filter of [undefined, { g: 1 }, { cat: { $in: ['a', 1, true] } }, { g: { $ne: 2 }, 'o.x': { $gte: 2 } }]) {
          const limit = pick(rng, [1, 3, 10, 1000]);
          const ranges = rng() < 0.5 ? [{ gte: 0, lt: 2 }, { lt: 0 }, { gte: 1 }, { gte: -10, lt: 1e301 }] : undefined;
          const got = facet(index, { path, filter, limit, ranges });
          expect(got, `${path} ${JSON.stringify(filter)} ${limit}`).to.deep.equal(referenceFacet(rows, path, filter, limit, ranges));
        }
      }
    }
  });

  it('orders ties by value across types: numbers, strings by code point, false, true, null', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    const values: Scalar[] = [null, true, false, '😀', '\uffff', 'b', 'a', 10, -1, 2];
    index.upsert(values.map((value, i) => ({ id: `v${i}`, vector: [i + 1, 1], metadata: { k: value } })));
    const got = facet(index, { path: 'k', limit: 100 });
    expect(got.values.map((v) => v.value)).to.deep.equal([-1, 2, 10, 'a', 'b', '\uffff', '😀', false, true, null]);
    expect(got.values.every((v) => v.count === 1)).to.equal(true);
    expect(facet(index, { path: 'k', limit: 2 }).values).to.deep.equal([
      { value: -1, count: 1 },
      { value: 2, count: 1 },
    ]);
  });

  it('answers nothing for an empty index or a path no row has', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    const empty = { values: [], distinctValues: 0, longStrings: 0, ranges: [{ gte: 1, count: 0 }] };
    expect(facet(index, { path: 'k', limit: 10, ranges: [{ gte: 1 }] })).to.deep.equal(empty);
    index.upsert([{ id: 'a', vector: [1, 1], metadata: { j: 1 } }]);
    expect(facet(index, { path: 'k', limit: 10, ranges: [{ gte: 1 }] })).to.deep.equal(empty);
    expect(facet(index, { path: 'j', limit: 10, filter: { j: 2 } })).to.deep.equal({ values: [], distinctValues: 0, longStrings: 0 });
  });
});
