// The metadata value index must stay in step with every mutation (adds,
// replacements, metadata set/delete, deletes that move the last row into the
// hole, clear): after each step, random filters over random metadata select
// exactly the rows the reference reading selects.
import { expect } from 'chai';
import type { Metadata } from '../../src/index/filter.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { referenceMatches } from '../helpers/filter-reference.js';
import { randomInt, seededRng, type Rng } from '../helpers/random.js';
import { pick, randomFilter as randomFilterOf, randomMetadata as randomMetadataOf, type MetadataShape } from '../helpers/random-metadata.js';

const SHAPE: MetadataShape = {
  scalars: ['red', 'blue', 'green', 0, 1, 2, 3.5, -1, true, false, null, '1'],
  keys: ['color', 'n', 'flag', 'tags', 'meta', 'meta.color'],
  paths: ['color', 'n', 'flag', 'tags', 'meta', 'meta.color', 'meta.n', 'tags.color', 'meta.meta.flag'],
  bounds: [0, 1, 2, 'blue', 'm'],
  maxDepth: 2,
  keyChance: 0.6,
};
const randomMetadata = (rng: Rng) => randomMetadataOf(SHAPE, rng);
const randomFilter = (rng: Rng) => randomFilterOf(SHAPE, rng);

describe('metadata index under mutation', () => {
  it('agrees with the reference reading after every kind of change', () => {
    const rng = seededRng(404);
    const index = new VectorIndex(loadKernelModule(), 1000);
    const model = new Map<string, Metadata>();
    let nextId = 0;
    const check = (step: string) => {
      for (let f = 0; f < 12; f++) {
        const filter = randomFilter(rng);
        const expected = [...model]
          .filter(([, m]) => referenceMatches(filter, m))
          .map(([id]) => id)
          .sort();
        const out = index.search([[1, 0.5]], { filter, topK: 100 });
        expect(out.stats.matched, `${step} ${JSON.stringify(filter)}`).to.equal(expected.length);
        if (expected.length <= 100) {
          expect(out.results[0].map((h) => h.id).sort(), `${step} ${JSON.stringify(filter)}`).to.deep.equal(expected);
        }
      }
    };
    for (let step = 0; step < 120; step++) {
      const ids = [...model.keys()];
      const r = rng();
      if (r < 0.4 || ids.length < 5) {
        const batch = Array.from({ length: 1 + randomInt(rng, 6) }, () => {
          const id = rng() < 0.3 && ids.length ? pick(rng, ids) : `v${nextId++}`; // some replace
          return { id, vector: [rng() + 0.1, rng()], metadata: randomMetadata(rng) };
        });
        index.upsert(batch);
        for (const { id, metadata } of batch) model.set(id, metadata);
      } else if (r < 0.6) {
        const id = pick(rng, ids);
        const metadata = rng() < 0.3 ? {} : randomMetadata(rng);
        expect(index.setMetadata(id, metadata)).to.equal(true);
        model.set(id, metadata);
      } else if (r < 0.97) {
        const gone = Array.from({ length: 1 + randomInt(rng, 3) }, () => pick(rng, ids));
        index.delete(gone);
        for (const id of gone) model.delete(id);
      } else {
        index.clear();
        model.clear();
      }
      check(`step ${step}`);
    }
  });
});

describe('postings that hold every row', () => {
  it('match exactly every row, and stop doing so when one row changes or goes', () => {
    const index = new VectorIndex(loadKernelModule(), 1000);
    // 70 rows: more than two bitmap words, and not a multiple of 32.
    index.upsert(Array.from({ length: 70 }, (_, i) => ({ id: `v${i}`, vector: [1 + i, 1], metadata: { kind: 'doc', n: 5 } })));
    const matched = (filter: Record<string, unknown>) => index.search([[1, 0.5]], { filter, topK: 100 }).stats.matched;
    for (const filter of [{ kind: 'doc' }, { n: { $gte: 5 } }, { kind: { $exists: true } }, { $or: [{ kind: 'doc' }, { n: 1 }] }]) {
      expect(matched(filter), JSON.stringify(filter)).to.equal(70);
    }
    expect(matched({ kind: { $ne: 'doc' } })).to.equal(0);
    expect(matched({ $not: { kind: 'doc' } })).to.equal(0);
    index.setMetadata('v3', { kind: 'note', n: 5 });
    expect(matched({ kind: 'doc' })).to.equal(69);
    expect(index.search([[1, 0.5]], { filter: { kind: 'note' }, topK: 5 }).results[0].map((h) => h.id)).to.deep.equal(['v3']);
    index.delete(['v3']);
    expect(matched({ kind: 'doc' })).to.equal(69);
    expect(matched({ kind: { $exists: true } })).to.equal(69);
    expect(matched({ n: { $gte: 5 } })).to.equal(69);
  });
});
