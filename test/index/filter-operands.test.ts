// Filters whose operands the index keys by canonical text or by hash (arrays,
// objects, strings longer than the indexed length, values reached through
// arrays of objects) on random data, through every kind of write: every
// answer equals the reference reading (test/helpers/filter-reference.ts),
// and a filter reads each row's metadata at most once, whatever the number
// of operands.
import { expect } from 'chai';
import { parseFilter } from '../../src/index/filter.js';
import { jsonText } from '../../src/index/json-size.js';
import { MetadataStore } from '../../src/index/metadata/metadata-store.js';
import type { Metadata } from '../../src/index/filter.js';
import { referenceMatches } from '../helpers/filter-reference.js';
import { randomInt, seededRng, type Rng } from '../helpers/random.js';
import { pick } from '../helpers/random-metadata.js';

/** A small indexed length, so that many arrays and objects are keyed by hash. */
const CUT = 12;
const LONG = ['L'.repeat(CUT + 1), 'L'.repeat(CUT + 5), `${'é'.repeat(7)}`, 'x'.repeat(40), '\ud800'.repeat(3)];
const SCALARS: readonly unknown[] = [0, 1, 2, -0, 0.5, 'a', 'b', '', true, false, null, ...LONG];
const KEYS = ['a', 's', 'o', 'a.b', 'b'];

function randomValue(rng: Rng, depth: number): unknown {
  const r = rng();
  if (r < 0.45 || depth >= 3) return pick(rng, SCALARS);
  if (r < 0.75) return Array.from({ length: randomInt(rng, 4) }, () => randomValue(rng, depth + 1));
  return randomObject(rng, depth + 1);
}

function randomObject(rng: Rng, depth: number): Metadata {
  const out: Metadata = {};
  // Keys in a random order: equality must not depend on it.
  for (const key of [...KEYS].sort(() => rng() - 0.5)) if (rng() < 0.5) out[key] = randomValue(rng, depth);
  return out;
}

/** Every value at every path of `value` (as filter-match.ts defines paths), array elements included. */
function valuesOf(value: unknown, prefix: string, out: [string, unknown][]): [string, unknown][] {
  if (value === null || typeof value !== 'object') return out;
  if (Array.isArray(value)) {
    for (const item of value) {
      out.push([prefix, item]);
      if (item !== null && typeof item === 'object' && !Array.isArray(item)) valuesOf(item, prefix, out);
    }
    return out;
  }
  for (const [key, v] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    out.push([path, v]);
    valuesOf(v, path, out);
  }
  return out;
}

/** The same value with its objects' keys in another order. */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .reverse()
      .map(([k, v]) => [k, reordered(v)]),
  );
}

/** An operand: mostly a value some row holds (reordered), else a fresh one. */
function operand(rng: Rng, rows: Metadata[]): [string, unknown] {
  if (rows.length > 0 && rng() < 0.8) {
    const found = valuesOf(pick(rng, rows), '', []);
    if (found.length > 0) {
      const [path, value] = pick(rng, found);
      return [path, reordered(value)];
    }
  }
  return [pick(rng, ['a', 's', 'o', 'a.b', 'o.a', 'a.b.s', 'o.o.s']), randomValue(rng, 1)];
}

function randomFilter(rng: Rng, rows: Metadata[], depth = 0): Record<string, unknown> {
  const r = rng();
  if (depth < 2 && r < 0.1) return { $or: [randomFilter(rng, rows, depth + 1), randomFilter(rng, rows, depth + 1)] };
  if (depth < 2 && r < 0.2) return { $and: [randomFilter(rng, rows, depth + 1), randomFilter(rng, rows, depth + 1)] };
  if (depth < 2 && r < 0.25) return { $not: randomFilter(rng, rows, depth + 1) };
  const [path, value] = operand(rng, rows);
  const many = () => [value, ...Array.from({ length: randomInt(rng, 6) }, () => operand(rng, rows)[1])];
  const ops: (() => unknown)[] = [
    () => (value !== null && typeof value === 'object' && !Array.isArray(value) ? { $eq: value } : value),
    () => ({ $eq: value }),
    () => ({ $ne: value }),
    () => ({ $in: many() }),
    () => ({ $nin: many() }),
    () => ({ [pick(rng, ['$gt', '$gte', '$lt', '$lte'])]: pick(rng, ['L', 'Lz', 'b', 'x', LONG[1], 1]) }),
    () => ({ $exists: rng() < 0.5 }),
  ];
  return { [path]: pick(rng, ops)() };
}

describe('filters on arrays, objects, long strings and paths through arrays', () => {
  it('answer as the reference does, through writes, reading each row at most once per filter (read ahead in slices or not)', async () => {
    const rng = seededRng(3303);
    const store = new MetadataStore(CUT);
    const rows: Metadata[] = [];
    const reads: number[] = [];
    const object = store.object.bind(store);
    store.object = (row: number) => {
      reads.push(row);
      return object(row);
    };
    let compared = 0;
    for (let step = 0; step < 300; step++) {
      const r = rng();
      if (r < 0.55 || rows.length < 4) {
        // A new row, or new metadata for one.
        const row = rows.length > 0 && rng() < 0.3 ? randomInt(rng, rows.length) : rows.length;
        const metadata = randomObject(rng, 0);
        rows[row] = metadata;
        store.set(row, metadata, Object.keys(metadata).length ? jsonText(metadata) : null, rows.length);
      } else {
        const row = randomInt(rng, rows.length);
        store.remove(row, rows.length - 1);
        rows[row] = rows[rows.length - 1];
        rows.pop();
      }
      for (let f = 0; f < 8; f++) {
        const filter = randomFilter(rng, rows);
        const expected = rows.flatMap((m, row) => (referenceMatches(filter, m) ? [row] : []));
        reads.length = 0;
        // Every other filter as the server runs it: its ranges walked and its rows read ahead, then evaluated.
        if (f % 2 === 1) await store.prepare(parseFilter(filter), rows.length);
        const got = Array.from(store.evaluate(parseFilter(filter), rows.length).rows());
        expect(got, JSON.stringify(filter)).to.deep.equal(expected);
        expect(new Set(reads).size, `rows read twice: ${JSON.stringify(filter)}`).to.equal(reads.length);
        compared++;
      }
    }
    expect(compared).to.equal(2400);
  });

  it('find arrays and objects by value without reading any row, however their keys are ordered', () => {
    const store = new MetadataStore(256);
    const rows: Metadata[] = Array.from({ length: 200 }, (_, i) => ({ a: [i], o: { x: i % 3, y: [i % 2] }, list: [{ k: i % 5, v: 'w' }] }));
    for (const [row, m] of rows.entries()) store.set(row, m, jsonText(m), row + 1);
    let read = 0;
    const object = store.object.bind(store);
    store.object = (row: number) => {
      read++;
      return object(row);
    };
    const count = (filter: Record<string, unknown>) => store.evaluate(parseFilter(filter), rows.length).count();
    expect(count({ a: { $in: Array.from({ length: 1000 }, (_, i) => [i]) } })).to.equal(200);
    expect(count({ o: { y: [1], x: 2 } })).to.equal(rows.filter((_, i) => i % 3 === 2 && i % 2 === 1).length);
    expect(count({ list: { v: 'w', k: 4 } })).to.equal(40);
    expect(count({ 'list.k': 4, a: { $nin: [[1], [199]] } })).to.equal(39);
    expect(
      count({
        o: {
          $in: [
            { x: 0, y: [0] },
            { y: [1], x: 1 },
          ],
        },
      }),
    ).to.equal(rows.filter((_, i) => (i % 3 === 0 && i % 2 === 0) || (i % 3 === 1 && i % 2 === 1)).length);
    expect(read).to.equal(0);
  });

  it('read only the rows under a long value’s hash, each once, however many operands name them', () => {
    const CUT_HERE = 16;
    const store = new MetadataStore(CUT_HERE);
    const long = (i: number) => `${'s'.repeat(CUT_HERE)}-${i % 10}`;
    const rows: Metadata[] = Array.from({ length: 500 }, (_, i) => ({ s: long(i), big: { text: long(i), n: i % 4 } }));
    for (const [row, m] of rows.entries()) store.set(row, m, jsonText(m), row + 1);
    const reads: number[] = [];
    const object = store.object.bind(store);
    store.object = (row: number) => {
      reads.push(row);
      return object(row);
    };
    const rowsOf = (filter: Record<string, unknown>) => Array.from(store.evaluate(parseFilter(filter), rows.length).rows());
    const expected = (filter: Record<string, unknown>) => rows.flatMap((m, row) => (referenceMatches(filter, m) ? [row] : []));
    const filters = [
      { s: { $in: Array.from({ length: 300 }, () => long(3)) } },
      { s: long(3), 'big.n': 1 },
      {
        big: {
          $in: [
            { n: 3, text: long(3) },
            { n: 1, text: long(3) },
            { n: 1, text: long(5) },
          ],
        },
      },
      { $or: [{ s: long(1) }, { big: { text: long(1), n: 1 } }, { 'big.text': { $in: [long(1), long(2)] } }] },
    ];
    for (const filter of filters) {
      reads.length = 0;
      expect(rowsOf(filter), JSON.stringify(filter).slice(0, 80)).to.deep.equal(expected(filter));
      expect(new Set(reads).size).to.equal(reads.length);
    }
    // A clause that reads, under a $not, before another that reads: the second is answered on every row the first leaves.
    const mixed = [{ $not: { s: { $gt: long(0) } } }, { s: long(0) }];
    expect(rowsOf({ $and: mixed }))
      .to.deep.equal(expected({ $and: mixed }))
      .and.to.have.length(50);
    // The 300 equal operands read the 50 rows that hold that string once each.
    reads.length = 0;
    rowsOf(filters[0]);
    expect(reads.length).to.equal(50);
  });
});

describe('rows a filter reads, read ahead in slices (MetadataStore.prepare)', () => {
  const CUT_HERE = 16;
  const long = (i: number) => `${'p'.repeat(CUT_HERE)}-${i % 4}`;
  function filled(n: number) {
    const store = new MetadataStore(CUT_HERE);
    const rows: Metadata[] = Array.from({ length: n }, (_, i) => ({ s: long(i), n: i % 3 }));
    for (const [row, m] of rows.entries()) store.set(row, m, jsonText(m), row + 1);
    const reads: number[] = [];
    const object = store.object.bind(store);
    store.object = (row: number) => {
      reads.push(row);
      const until = performance.now() + 0.05; // a slow row, so that slices show
      while (performance.now() < until);
      return object(row);
    };
    return { store, rows, reads };
  }
  const expected = (rows: Metadata[], filter: Record<string, unknown>) => rows.flatMap((m, row) => (referenceMatches(filter, m) ? [row] : []));

  it('gives the event loop back while it reads, and evaluate then reads nothing', async () => {
    const { store, rows, reads } = filled(400);
    const filter = { $or: [{ s: long(1) }, { s: { $gte: long(2) } }], n: { $ne: 0 } };
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    await store.prepare(parseFilter(filter), rows.length);
    clearInterval(ticker);
    expect(turns, 'timer turns during the reads').to.be.greaterThan(0);
    expect(new Set(reads).size).to.equal(reads.length);
    reads.length = 0;
    expect(Array.from(store.evaluate(parseFilter(filter), rows.length).rows())).to.deep.equal(expected(rows, filter));
    expect(reads).to.deep.equal([]);
  });

  it('reads again at once when the rows changed after prepare, or for another filter', async () => {
    const { store, rows, reads } = filled(100);
    const filter = { s: long(3) };
    await store.prepare(parseFilter(filter), rows.length);
    rows[3] = { s: long(2) };
    store.set(3, rows[3], jsonText(rows[3]), rows.length);
    reads.length = 0;
    expect(Array.from(store.evaluate(parseFilter(filter), rows.length).rows())).to.deep.equal(expected(rows, filter));
    expect(reads.length).to.be.greaterThan(0);
    await store.prepare(parseFilter(filter), rows.length);
    const other = { s: long(1) };
    expect(Array.from(store.evaluate(parseFilter(other), rows.length).rows())).to.deep.equal(expected(rows, other));
    expect(store.prepare(parseFilter({ n: 1 }), rows.length), 'nothing to read').to.equal(null);
  });
});
