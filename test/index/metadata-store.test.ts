// The metadata store (src/index/metadata/): bytes in an arena, a filter index
// of typed arrays. Random metadata of every JSON kind (nested objects, arrays,
// unicode, numbers at the edges of float64, strings around the indexed-length
// cut-off) goes through every kind of write; after each step every filter and
// every answer must equal a plain in-memory reference.
import { expect } from 'chai';
import { SPEC_LIMITS } from '../../src/config.js';
import { mergePatch } from '../../src/index/merge-patch.js';
import { parseFilter } from '../../src/index/filter.js';
import { MetadataArena } from '../../src/index/metadata/metadata-arena.js';
import { MetadataIndex } from '../../src/index/metadata/metadata-index.js';
import type { Metadata } from '../../src/index/filter.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { referenceMatches } from '../helpers/filter-reference.js';
import { randomInt, seededRng, type Rng } from '../helpers/random.js';
import { pick, randomFilter as randomFilterOf, randomMetadata as randomMetadataOf, type MetadataShape } from '../helpers/random-metadata.js';

const CUT = SPEC_LIMITS.maxIndexedValueBytes;

/** Strings of CUT - 1, CUT and CUT + 1 UTF-8 bytes, in ASCII and ending in a 2-byte and a 3-byte character. */
const EDGE_STRINGS = [-1, 0, 1].flatMap((d) => [
  'a'.repeat(CUT + d),
  'b'.repeat(CUT + d - 2) + 'é',
  'c'.repeat(CUT + d - 3) + '中',
  'a'.repeat(CUT + d - 1) + 'z',
]);
const NUMBERS = [0, -0, 1, -1, 0.5, 3, 1e308, -1e308, Number.MAX_VALUE, Number.MIN_VALUE, -Number.MIN_VALUE, 2 ** 53 + 2, -(2 ** 53), 1e-300];
const STRINGS = ['', 'red', 'blue', 'ü', '中文', '😀', 'a.b', '1', 'null', 'true', '\ud800', '\udc00x', 'x\ud83d', ...EDGE_STRINGS];
const SCALARS: readonly unknown[] = [...NUMBERS, ...STRINGS, true, false, null];
const KEYS = ['color', 'n', 'tags', 'meta', 'a.b', 'ключ', '__proto__', 'text'];

/** What a client gets back: the JSON of what it stored. */
const asStored = (metadata: Metadata): Metadata => JSON.parse(JSON.stringify(metadata)) as Metadata;

const PATHS = ['color', 'n', 'tags', 'meta', 'meta.color', 'meta.n', 'tags.color', 'a.b', 'text', 'ключ', 'meta.tags.n'];

const SHAPE: MetadataShape = { scalars: SCALARS, keys: KEYS, paths: PATHS, bounds: [...NUMBERS, ...STRINGS], maxDepth: 3, keyChance: 0.45 };
const randomMetadata = (rng: Rng) => randomMetadataOf(SHAPE, rng);
const randomFilter = (rng: Rng) => randomFilterOf(SHAPE, rng);

describe('metadata store: random metadata through every write, against a reference', () => {
  for (const seed of [1, 2, 3]) {
    it(`keeps every filter and every answer equal to the reference (seed ${seed})`, () => {
      const rng = seededRng(9000 + seed);
      const index = new VectorIndex(loadKernelModule(), 2000);
      const model = new Map<string, Metadata>();
      let nextId = 0;
      const check = (step: string) => {
        for (let f = 0; f < 10; f++) {
          const filter = randomFilter(rng);
          const expected = [...model]
            .filter(([, m]) => referenceMatches(filter, m))
            .map(([id]) => id)
            .sort();
          const label = `${step} ${JSON.stringify(filter)}`;
          expect(index.count(filter), label).to.equal(expected.length);
          expect(index.idsMatching(filter).sort(), label).to.deep.equal(expected);
        }
        for (const id of [...model.keys()].slice(0, 20)) {
          expect(index.getMetadata(id)!.value(), `${step} ${id}`).to.deep.equal(model.get(id));
          expect(index.metadataJsonBytes(id)).to.equal(Buffer.byteLength(JSON.stringify(model.get(id))));
        }
      };
      for (let step = 0; step < 90; step++) {
        const ids = [...model.keys()];
        const r = rng();
        if (r < 0.35 || ids.length < 5) {
          const batch = Array.from({ length: 1 + randomInt(rng, 8) }, () => {
            const id = rng() < 0.3 && ids.length ? pick(rng, ids) : `v${nextId++}`;
            return { id, vector: [rng() + 0.1, rng()], metadata: rng() < 0.1 ? undefined : randomMetadata(rng) };
          });
          index.upsert(batch);
          for (const { id, metadata } of batch) model.set(id, asStored(metadata ?? {}));
        } else if (r < 0.5) {
          const id = pick(rng, ids);
          const metadata = rng() < 0.2 ? {} : randomMetadata(rng);
          index.setMetadata(id, metadata);
          model.set(id, asStored(metadata));
        } else if (r < 0.65) {
          const id = pick(rng, ids);
          // An object merge-patched with an object is an object.
          const patched = mergePatch(index.getMetadata(id)!.value(), randomMetadata(rng)) as Metadata;
          index.setMetadata(id, patched);
          model.set(id, asStored(patched));
        } else if (r < 0.9) {
          const gone = Array.from({ length: 1 + randomInt(rng, 4) }, () => pick(rng, ids));
          index.delete(gone);
          for (const id of gone) model.delete(id);
        } else if (r < 0.95) {
          index.clear();
          model.clear();
        } else {
          index.reset();
          model.clear();
        }
        check(`step ${step}`);
      }
    });
  }

  it('answers filters on strings longer than the indexed length exactly', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    const long = 'x'.repeat(CUT + 10);
    index.upsert(Array.from({ length: 40 }, (_, i) => ({ id: `v${i}`, vector: [1, i + 1], metadata: { text: i % 2 ? long : long + i, group: i % 4 } })));
    expect(index.count({ text: long })).to.equal(20);
    expect(index.count({ text: long, group: 1 })).to.equal(10);
    expect(index.count({ text: { $gt: long } })).to.equal(20);
    expect(index.count({ text: { $ne: long }, group: { $in: [0, 2] } })).to.equal(20);
    expect(index.count({ text: { $exists: true }, group: 3 })).to.equal(10);
  });
});

describe('metadata index: what a filter reads', () => {
  it('reads the metadata of only the rows with long strings that the other clauses leave', () => {
    const index = new MetadataIndex(CUT);
    const long = 'y'.repeat(CUT + 1);
    const rows: Metadata[] = Array.from({ length: 64 }, (_, row) => (row < 8 ? { text: long, group: row % 2 } : { text: 'short', group: row % 2 }));
    rows.forEach((metadata, row) => {
      index.addRow(row, metadata, row + 1);
    });
    const read: number[] = [];
    const reader = (row: number) => {
      read.push(row);
      return rows[row];
    };
    const matched = index.evaluate(parseFilter({ group: 1, text: long }), rows.length, reader).rows();
    expect(Array.from(matched)).to.deep.equal([1, 3, 5, 7]);
    expect(read.sort((a, b) => a - b)).to.deep.equal([1, 3, 5, 7]);
    read.length = 0;
    expect(index.evaluate(parseFilter({ text: 'short' }), rows.length, reader).count()).to.equal(56);
    expect(read).to.deep.equal([]);
  });
});

describe('metadata store: memory', () => {
  it("keeps every row's bytes through compaction under random writes, and stays within a bound of what it holds", () => {
    const rng = seededRng(77);
    const index = new VectorIndex(loadKernelModule(), 3000);
    const model = new Map<string, Metadata>();
    const text = (n: number) => 'w'.repeat(n);
    for (let round = 0; round < 60; round++) {
      const batch = Array.from({ length: 100 }, () => {
        const id = `v${randomInt(rng, 2500)}`;
        return { id, vector: [1, rng() + 0.1], metadata: { text: text(randomInt(rng, 3000)), n: randomInt(rng, 50), tag: `t${randomInt(rng, 1000)}` } };
      });
      index.upsert(batch);
      for (const { id, metadata } of batch) model.set(id, metadata);
      if (round % 5 === 4) {
        const gone = [...model.keys()].filter(() => rng() < 0.3);
        index.delete(gone);
        for (const id of gone) model.delete(id);
      }
    }
    for (const [id, metadata] of model) expect(index.getMetadata(id)!.value(), id).to.deep.equal(metadata);
    const { jsonBytes } = index.stats().metadata;
    // Holes are reclaimed a chunk at a time: what is held stays within a small factor of what is live.
    expect(index.stats().metadataBytes).to.be.at.most(3 * jsonBytes + 4 * 1024 * 1024);
    index.delete([...model.keys()]);
    expect(index.stats().metadata).to.deep.equal({ jsonBytes: 0, indexEntries: 0 });
    // With no metadata left, the store lets go of its arrays, however large they grew.
    expect(index.stats().metadataBytes).to.equal(0);
  });

  it('hands out metadata that stays as it was when read, whatever the index does after (replace, delete, compaction, reset)', () => {
    const index = new VectorIndex(loadKernelModule(), 1000);
    const meta = (i: number, round: number) => ({ text: `r${round} `.repeat(200) + i, i });
    index.upsert(Array.from({ length: 300 }, (_, i) => ({ id: `v${i}`, vector: [1, i + 1], metadata: meta(i, 0) })));
    const held = Array.from({ length: 300 }, (_, i) => index.getMetadata(`v${i}`)!);
    const hits = index.search([[1, 2]], { topK: 50, includeMetadata: true }).results[0];
    for (let round = 1; round <= 6; round++) {
      index.upsert(Array.from({ length: 300 }, (_, i) => ({ id: `v${i}`, vector: [1, i + 1], metadata: meta(i, round) })));
    }
    index.delete(Array.from({ length: 150 }, (_, i) => `v${i}`));
    held.forEach((metadata, i) => {
      expect(metadata.value()).to.deep.equal(meta(i, 0));
    });
    for (const hit of hits) expect(hit.metadata!.value()).to.deep.equal(meta(Number(hit.id.slice(1)), 0));
    index.reset();
    expect(held[7].json).to.equal(JSON.stringify(meta(7, 0)));
  });

  it('plans at least what each write then allocates, through every doubling of its arrays (small writes, unique values, replaces)', () => {
    const rng = seededRng(33);
    const index = new VectorIndex(loadKernelModule(), 100_000);
    const stored = () => index.stats().metadataBytes + index.stats().heapBytes;
    let doublings = 0;
    for (let step = 0; step < 400; step++) {
      // Mostly new rows of many unique values (the abuse bench's shape), some replaces and random shapes.
      const rows = 1 + randomInt(rng, 12);
      const records = Array.from({ length: rows }, (_, i) => {
        const id = rng() < 0.2 && step > 0 ? `s${randomInt(rng, step)}r${i}` : `s${step}r${i}`;
        const metadata = rng() < 0.7 ? Object.fromEntries(Array.from({ length: 64 }, (_, k) => [`k${k}`, `${step}.${i}.${k}`])) : randomMetadata(rng);
        return { id, vector: [1, 2], metadata };
      });
      const plan = index.prepareUpsert(records);
      const before = stored();
      index.applyUpsert(plan);
      const grew = stored() - before - plan.heapBytesAdded;
      if (grew > 64 * 1024) doublings++;
      expect(plan.metadataBytesAdded, `step ${step}`).to.be.at.least(grew);
    }
    // The arrays doubled past 64 KiB at once more than a few times: the figure held through them.
    expect(doublings).to.be.greaterThan(5);
  });

  it('plans at least what a metadata replace then allocates', () => {
    const index = new VectorIndex(loadKernelModule(), 10_000);
    index.upsert(Array.from({ length: 2000 }, (_, i) => ({ id: `v${i}`, vector: [1, 2] })));
    for (let i = 0; i < 2000; i++) {
      const metadata = Object.fromEntries(Array.from({ length: 32 }, (_, k) => [`k${k}`, `${i}.${k}`]));
      const planned = index.metadataBytesUpper(metadata);
      const before = index.stats().metadataBytes + index.stats().heapBytes;
      index.setMetadata(`v${i}`, metadata);
      expect(planned, `row ${i}`).to.be.at.least(index.stats().metadataBytes + index.stats().heapBytes - before);
    }
  });

  it('holds nothing for a batch that is only planned (a refused add leaves no store behind)', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    const plan = index.prepareUpsert([{ id: 'a', vector: [1, 2], metadata: { tag: 'x', n: 1 } }]);
    expect(plan.metadataBytesAdded).to.be.greaterThan(0);
    expect(index.stats().metadataBytes).to.equal(0);
  });

  it('compacts a chunk that is half holes into the open one, keeping the bytes and entries of its rows', () => {
    const arena = new MetadataArena();
    const rows = 400;
    const json = (row: number) => JSON.stringify({ row, pad: 'p'.repeat(row % 97) });
    const entries = (row: number) => Uint32Array.from([row, row * 7, 123456]);
    for (let row = 0; row < rows; row++) arena.write(row, json(row), json(row).length, entries(row), 3);
    const held = arena.byteLength;
    for (let row = 0; row < rows; row += 2) arena.free(row);
    for (let step = 0; step < 20; step++) arena.compactStep(rows);
    expect(arena.byteLength).to.be.lessThan(held);
    for (let row = 1; row < rows; row += 2) {
      expect(arena.json(row)).to.equal(json(row));
      expect(Array.from(arena.entries(row))).to.deep.equal(Array.from(entries(row)));
    }
    for (let row = 0; row < rows; row += 2) expect(arena.has(row)).to.equal(false);
  });
});
