// VectorIndex.memoryGuard: a search that must grow the linear memory for its
// scratch (queries, a filter's row list, heaps, int8 keys) asks the guard
// first, once, with the bytes the memory will then hold; a refusal leaves
// the memory as it was. The server's guard is its memory budget.
import { expect } from 'chai';
import type { VectorType } from '../../../src/config.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { randomVector, randomVectors, seededRng } from '../../helpers/random.js';

const ROWS = 5000;
const DIM = 16;

/** Records a call per growth; refuses growth past `limit`. */
class Guard {
  calls: number[] = [];
  limit = Infinity;
  readonly ask = (bytesAfter: number) => {
    this.calls.push(bytesAfter);
    if (bytesAfter > this.limit) throw new Error(`refused ${bytesAfter}`);
  };
}

function filledIndex(vectorType: VectorType, guard: Guard | null) {
  const rng = seededRng(17);
  const index = new VectorIndex(loadKernelModule(), ROWS);
  index.upsert(
    Array.from({ length: ROWS }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, DIM), metadata: { g: i === 0 ? 0 : 1 } })),
    { vectorType },
  );
  if (guard) index.memoryGuard = guard.ask;
  return index;
}

// Scratch of this search passes a page whatever the free room: 64 queries and
// a row list of 4999 rows (float32: heaps of 65 x 100; int8: pools of 2 x 2048
// and a key per scanned row).
const BIG = { queries: randomVectors(seededRng(5), 64, DIM), options: { topK: 100, candidatePool: 2048, filter: { g: 1 } } };
const SMALL = { queries: randomVectors(seededRng(6), 2, DIM), options: { topK: 5, candidatePool: 5 } };

const idsOf = (out: ReturnType<VectorIndex['search']>) => out.results.map((hits) => hits.map((h) => h.id));

describe('VectorIndex search memory guard', () => {
  for (const vectorType of ['float32', 'int8'] as const) {
    it(`${vectorType}: asks once before growing, with the bytes after`, () => {
      const guard = new Guard();
      const index = filledIndex(vectorType, guard);
      const before = index.stats().memoryBytes;
      const out = index.search(BIG.queries, BIG.options);
      expect(index.stats().memoryBytes).to.be.greaterThan(before);
      expect(guard.calls).to.deep.equal([index.stats().memoryBytes]);
      expect(idsOf(out)).to.deep.equal(idsOf(filledIndex(vectorType, null).search(BIG.queries, BIG.options)));
      // The memory now holds that scratch: the same search again does not ask.
      index.search(BIG.queries, BIG.options);
      index.search(SMALL.queries, SMALL.options);
      expect(guard.calls).to.have.length(1);
    });

    it(`${vectorType}: a refused search changes nothing; smaller ones work`, () => {
      const guard = new Guard();
      const index = filledIndex(vectorType, guard);
      const small = idsOf(index.search(SMALL.queries, SMALL.options));
      const held = index.stats().memoryBytes;
      guard.limit = held;
      expect(() => index.search(BIG.queries, BIG.options)).to.throw(/^refused/);
      expect(guard.calls.at(-1)).to.be.greaterThan(held);
      expect(index.stats().memoryBytes).to.equal(held);
      expect(index.size).to.equal(ROWS);
      expect(idsOf(index.search(SMALL.queries, SMALL.options))).to.deep.equal(small);
      // Room granted later lets the same search through.
      guard.limit = Infinity;
      expect(idsOf(index.search(BIG.queries, BIG.options))).to.deep.equal(idsOf(filledIndex(vectorType, null).search(BIG.queries, BIG.options)));
    });
  }

  it("without a guard (the SDK's local index) searches grow the memory as they need", () => {
    const index = filledIndex('float32', null);
    const before = index.stats().memoryBytes;
    index.search(BIG.queries, BIG.options);
    expect(index.stats().memoryBytes).to.be.greaterThan(before);
  });
});
