// VectorIndex.openExport: a consistent snapshot in insertion order, whatever
// is written while it is read.
import { expect } from 'chai';
import type { ExportedVector, IndexExport } from '../../src/index/types.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomInt, randomVector, seededRng } from '../helpers/random.js';

const newIndex = (maxVectors = 10_000) => new VectorIndex(loadKernelModule(), maxVectors);

/** What the index holds now, in insertion order, as an export would give it. */
function snapshotOf(index: VectorIndex): { id: string; vector: number[]; metadata: unknown }[] {
  return index
    .list({ limit: 10_000, includeVectors: true, includeMetadata: true })
    .vectors.map((v) => ({ id: v.id, vector: Array.from(v.vector!), metadata: v.metadata!.value() }));
}

function readAll(exp: IndexExport, batch: number, between: () => void = () => {}): ExportedVector[] {
  const out: ExportedVector[] = [];
  for (;;) {
    const part = exp.next(batch);
    if (part.length === 0) return out;
    out.push(...part);
    between();
  }
}

describe('VectorIndex export', () => {
  it('yields every vector in insertion order with its exact float32 values and metadata', () => {
    const index = newIndex();
    index.upsert(
      [
        { id: 'a', vector: [0.1, 0.2], metadata: { x: 1 } },
        { id: 'b', vector: [1e-7, 3] },
      ],
      { metric: 'l2' },
    );
    index.upsert([{ id: 'a', vector: [0.3, 0.4], metadata: { y: [1, 2] } }]);
    const exp = index.openExport();
    expect(exp.count).to.equal(2);
    expect(exp.config).to.deep.equal({ dimensions: 2, metric: 'l2', vectorType: 'float32', analyzer: null, embedding: null });
    const out = readAll(exp, 1);
    expect(out.map((v) => v.id)).to.deep.equal(['b', 'a']);
    expect(out[1].vector).to.deep.equal(Float32Array.from([0.3, 0.4]));
    expect(out[1].metadata.value()).to.deep.equal({ y: [1, 2] });
    expect(out[0].metadata.value()).to.deep.equal({});
  });

  it('of a new index yields nothing', () => {
    const exp = newIndex().openExport();
    expect(exp.count).to.equal(0);
    expect(exp.config.dimensions).to.equal(null);
    expect(exp.next(10)).to.deep.equal([]);
  });

  it('gives the snapshot taken when opened, through random writes, clears and resets', () => {
    const rng = seededRng(7);
    for (let round = 0; round < 30; round++) {
      const index = newIndex();
      let nextId = 0;
      const add = (n: number) =>
        index.upsert(Array.from({ length: n }, () => ({ id: `v${nextId++}`, vector: randomVector(rng, 4), metadata: { r: randomInt(rng, 5) } })));
      add(20 + randomInt(rng, 50));
      if (round % 3 === 0) index.delete(['v1', 'v5']);
      const expected = snapshotOf(index);
      const exp = index.openExport();
      const out = readAll(exp, 1 + randomInt(rng, 9), () => {
        for (let w = randomInt(rng, 5); w > 0; w--) {
          const ids = index.list({ limit: 10_000 }).vectors.map((v) => v.id);
          const victim = ids[randomInt(rng, ids.length)];
          const op = randomInt(rng, 20);
          if (op < 4 || !victim) add(1 + randomInt(rng, 3));
          else if (op < 8) index.delete([victim]);
          else if (op < 12) index.upsert([{ id: victim, vector: randomVector(rng, 4), metadata: { changed: true } }]);
          else if (op < 17) index.setMetadata(victim, { set: op });
          else if (op < 19) index.clear();
          else index.reset();
        }
      });
      expect(out.length).to.equal(exp.count);
      expect(out.map((v) => ({ id: v.id, vector: Array.from(v.vector), metadata: v.metadata.value() }))).to.deep.equal(expected);
    }
  });

  it('reports the bytes of the copies it keeps, and gives them all back', () => {
    const rng = seededRng(3);
    const dim = 32;
    const fill = () => Array.from({ length: 100 }, (_, i) => ({ id: `v${i}`, vector: randomVector(rng, dim), metadata: { i, s: 'x'.repeat(200) } }));
    for (const closeEarly of [false, true]) {
      const index = newIndex();
      index.upsert(fill(), { metric: 'l2' });
      let held = 0;
      let most = 0;
      const exp = index.openExport((bytes) => {
        held += bytes;
        most = Math.max(most, held);
      });
      expect(exp.next(10)).to.have.length(10);
      expect(held).to.equal(0);
      index.upsert(fill()); // 90 of them not yet reached: copied
      // Each copy: its values, its id, its metadata of 200+ characters.
      expect(held).to.be.at.least(90 * (dim * 4 + 200));
      index.delete(['v50']); // already copied: no second copy
      expect(held).to.equal(most);
      if (closeEarly) exp.close();
      else expect(readAll(exp, 7)).to.have.length(90);
      expect(held).to.equal(0);
    }
  });

  it('stops yielding once closed', () => {
    const index = newIndex();
    index.upsert(Array.from({ length: 10 }, (_, i) => ({ id: `v${i}`, vector: [i + 1, 1] })));
    const exp = index.openExport();
    expect(exp.next(3)).to.have.length(3);
    exp.close();
    expect(exp.next(3)).to.deep.equal([]);
  });
});
