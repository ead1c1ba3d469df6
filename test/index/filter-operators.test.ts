// Filter operators, dot paths and validation: each case is checked three
// ways, through the predicate, through the indexed search of a VectorIndex,
// and against the independent reference reading in test/helpers.
import { expect } from 'chai';
import { compileFilter, parseFilter } from '../../src/index/filter.js';
import type { Metadata } from '../../src/index/filter.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { expectApiError } from '../helpers/errors.js';
import { referenceMatches } from '../helpers/filter-reference.js';

const docs: Record<string, Metadata> = {
  a: { color: 'red', price: 5, tags: ['x', 'y'], dims: { w: 2, h: 3 }, ok: true },
  b: { color: 'blue', price: 12.5, tags: ['y'], dims: { w: 4 }, ok: false },
  c: {
    color: 'red',
    price: '7',
    items: [
      { sku: 'k1', qty: 1 },
      { sku: 'k2', qty: 9 },
    ],
  },
  d: { 'dims.w': 2, nothing: null },
  e: {},
};

/** Ids matching `filter`, via the index's search (all rows, in id order). */
function searchIds(filter: Record<string, unknown>): string[] {
  const index = new VectorIndex(loadKernelModule(), 100);
  index.upsert(Object.entries(docs).map(([id, metadata], i) => ({ id, vector: [1, i + 1], metadata })));
  const out = index.search([[1, 1]], { filter, topK: 100 });
  expect(out.stats.matched).to.equal(out.results[0].length);
  return out.results[0].map((h) => h.id).sort();
}

function expectMatches(filter: Record<string, unknown>, ids: string[]): void {
  const label = JSON.stringify(filter);
  const predicate = compileFilter(filter);
  expect(
    Object.keys(docs).filter((id) => predicate(docs[id])),
    `predicate ${label}`,
  ).to.deep.equal(ids);
  expect(
    Object.keys(docs).filter((id) => referenceMatches(filter, docs[id])),
    `reference ${label}`,
  ).to.deep.equal(ids);
  expect(searchIds(filter), `indexed search ${label}`).to.deep.equal(ids);
}

describe('filter operators', () => {
  it('keeps plain equality, array containment and deep equality', () => {
    expectMatches({ color: 'red' }, ['a', 'c']);
    expectMatches({ tags: 'y' }, ['a', 'b']);
    expectMatches({ dims: { w: 4 } }, ['b']);
    expectMatches({ tags: ['x', 'y'] }, ['a']);
    expectMatches({ nothing: null }, ['d']);
    expectMatches({}, ['a', 'b', 'c', 'd', 'e']);
  });

  it('$eq and $ne ($ne also matches where the field is missing)', () => {
    expectMatches({ color: { $eq: 'red' } }, ['a', 'c']);
    expectMatches({ color: { $ne: 'red' } }, ['b', 'd', 'e']);
    expectMatches({ tags: { $ne: 'x' } }, ['b', 'c', 'd', 'e']);
    expectMatches({ dims: { $eq: { h: 3, w: 2 } } }, ['a']);
  });

  it('$gt $gte $lt $lte compare numbers with numbers and strings with strings', () => {
    expectMatches({ price: { $gt: 5 } }, ['b']);
    expectMatches({ price: { $gte: 5 } }, ['a', 'b']);
    expectMatches({ price: { $lt: 12.5 } }, ['a']);
    expectMatches({ price: { $lte: 12.5, $gt: 5 } }, ['b']);
    expectMatches({ price: { $gte: '0' } }, ['c']);
    expectMatches({ color: { $gt: 'blue' } }, ['a', 'c']);
  });

  it('$in and $nin, with array fields matching when they contain a value', () => {
    expectMatches({ color: { $in: ['blue', 'green'] } }, ['b']);
    expectMatches({ tags: { $in: ['x', 'z'] } }, ['a']);
    expectMatches({ color: { $nin: ['red'] } }, ['b', 'd', 'e']);
    expectMatches({ color: { $in: [] } }, []);
  });

  it('$exists, counting null as present', () => {
    expectMatches({ tags: { $exists: true } }, ['a', 'b']);
    expectMatches({ nothing: { $exists: true } }, ['d']);
    expectMatches({ price: { $exists: false } }, ['d', 'e']);
  });

  it('$and $or $not over sub-filters', () => {
    expectMatches({ $or: [{ color: 'blue' }, { price: { $lt: 6 } }] }, ['a', 'b']);
    expectMatches({ $and: [{ color: 'red' }, { ok: true }] }, ['a']);
    expectMatches({ $not: { color: 'red' } }, ['b', 'd', 'e']);
    expectMatches({ color: 'red', $not: { tags: 'x' } }, ['c']);
  });

  it('dot paths reach nested objects, arrays of objects and keys that contain dots', () => {
    expectMatches({ 'dims.w': 2 }, ['a', 'd']);
    expectMatches({ 'dims.h': { $exists: true } }, ['a']);
    expectMatches({ 'items.sku': 'k2' }, ['c']);
    expectMatches({ 'items.qty': { $gt: 5 } }, ['c']);
    expectMatches({ 'dims.w.x': { $exists: true } }, []);
  });
});

describe('filter validation', () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ price: { $foo: 1 } }, '/filter/price/$foo'],
    [{ $nor: [] }, '/filter/$nor'],
    [{ price: { $gt: true } }, '/filter/price/$gt'],
    [{ price: { $lt: null } }, '/filter/price/$lt'],
    [{ tags: { $in: 'x' } }, '/filter/tags/$in'],
    [{ tags: { $exists: 1 } }, '/filter/tags/$exists'],
    [{ $or: [] }, '/filter/$or'],
    [{ $and: [{ a: 1 }, 'b'] }, '/filter/$and/1'],
    [{ $not: [{ a: 1 }] }, '/filter/$not'],
    [{ $or: [{ a: { $gt: 1, x: 2 } }] }, '/filter/$or/0/a/x'],
    [{ 'a/b': { $bad: 1 } }, '/filter/a~1b/$bad'],
    [{ a: { $not: { $gt: 1 } } }, '/filter/a/$not'],
  ];
  for (const [filter, path] of cases) {
    it(`refuses ${JSON.stringify(filter)} with VALIDATION_ERROR at ${path}`, () => {
      expect(expectApiError(() => parseFilter(filter), 'VALIDATION_ERROR').details).to.deep.equal({ path });
    });
  }

  it('refuses filters nested deeper than the limit', () => {
    let filter: Record<string, unknown> = { a: 1 };
    for (let i = 0; i < 40; i++) filter = { $not: filter };
    expectApiError(() => parseFilter(filter), 'VALIDATION_ERROR');
  });

  it('refuses a bad filter even on an empty index', () => {
    const index = new VectorIndex(loadKernelModule(), 10);
    expectApiError(() => index.search([[1, 2]], { filter: { a: { $nope: 1 } } }), 'VALIDATION_ERROR');
  });
});
