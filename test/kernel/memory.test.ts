// KernelInstance's memory: growth keeps rows, bounds are checked in JS.
import { expect } from 'chai';
import { randomVector, seededRng } from '../helpers/random.js';
import { expectSameTopK } from '../helpers/reference.js';
import { KernelModel } from './model.js';

describe('kernel capacity growth', () => {
  for (const metric of ['cosine', 'l2'] as const) {
    it(`${metric}: keeps every stored row, norm and sequence intact across each growth`, () => {
      const rng = seededRng(3);
      const dim = 7; // small rows: the per-row regions move across the old vector area
      const model = new KernelModel(dim, metric);
      const twin = randomVector(rng, dim);
      const twins: string[] = [];
      const capacities = new Set<number>();
      for (let i = 0; i < 700; i++) {
        const before = model.kernel.capacity;
        if (i % 50 === 0) twins.push(model.add(twin));
        else model.add(randomVector(rng, dim));
        if (model.kernel.capacity === before) continue;
        capacities.add(model.kernel.capacity);
        model.rows.forEach((row, r) => {
          expect(Array.from(model.kernel.readRow(r))).to.deep.equal(Array.from(row.vector));
        });
        const query = randomVector(rng, dim);
        expectSameTopK(metric, model.search([query], 10)[0], query, model.rows, 10, `capacity ${model.kernel.capacity}`);
        // Equal scores still come back in insertion order: the sequence numbers moved too.
        expect(model.search([twin], twins.length)[0].map((h) => h.id)).to.deep.equal(twins);
      }
      expect(capacities.size, 'the test grew the capacity several times').to.be.greaterThan(4);
    });
  }

  it('grows its linear memory with the rows and never beyond maxCapacity', () => {
    const model = new KernelModel(256, 'l2', 100);
    const start = model.kernel.memoryBytes;
    for (let i = 0; i < 100; i++) model.add(new Array(256).fill(i));
    expect(model.kernel.capacity).to.equal(100);
    expect(model.kernel.memoryBytes).to.be.greaterThan(start);
    expect(model.kernel.memoryBytes).to.be.at.least(model.kernel.usedBytes);
    expect(() => model.kernel.ensureCapacity(101)).to.throw(RangeError);
  });
});

describe('kernel bounds checks', () => {
  it('refuses rows outside capacity, bad lengths, query shapes and row lists', () => {
    const model = new KernelModel(4, 'cosine');
    model.add([1, 2, 3, 4]);
    const { kernel } = model;
    expect(() => kernel.writeRows([kernel.capacity], [new Float32Array(4)], 0)).to.throw(RangeError);
    expect(() => kernel.writeRows([0], [new Float32Array(3)], 0)).to.throw(RangeError);
    expect(() => kernel.readRow(-1)).to.throw(RangeError);
    expect(() => kernel.moveRow(0, kernel.capacity)).to.throw(RangeError);
    expect(() => kernel.search({ queries: new Float32Array(5), queryCount: 1, k: 1, count: 1 })).to.throw(RangeError);
    expect(() => kernel.search({ queries: new Float32Array(4), queryCount: 1, k: 0, count: 1 })).to.throw(RangeError);
    expect(() => kernel.search({ queries: new Float32Array(4), queryCount: 1, k: 1, count: kernel.capacity + 1 })).to.throw(RangeError);
    expect(() => kernel.search({ queries: new Float32Array(4), queryCount: 1, k: 1, count: 1, rowList: Int32Array.of(1) })).to.throw(RangeError);
  });
});
