// PagedArray against a plain array on random growths, writes and reads; its
// length is what pagedLength projects, and growth past a page adds pages.
import { expect } from 'chai';
import { PAGE, PagedArray, pagedLength } from '../../../src/index/metadata/paged-array.js';
import { randomInt, seededRng } from '../../helpers/random.js';

describe('PagedArray', () => {
  for (const [name, make, fill, value] of [
    ['Uint32Array filled with 0xffffffff', Uint32Array, 0xffffffff, (r: number) => Math.floor(r * 2 ** 32)],
    ['Int32Array', Int32Array, 0, (r: number) => Math.floor(r * 2 ** 32) - 2 ** 31],
    ['Float64Array', Float64Array, 0, (r: number) => r * 1e9 - 5e8],
    ['Uint8Array', Uint8Array, 0, (r: number) => Math.floor(r * 256)],
  ] as const) {
    it(`reads what was written, as a plain array does (${name})`, () => {
      const rng = seededRng(7);
      const paged = new PagedArray(make as new (n: number) => Uint32Array, fill);
      const reference: number[] = [];
      let limit = 0;
      for (let round = 0; round < 40; round++) {
        const before = paged.length;
        limit += randomInt(rng, round < 20 ? 100 : PAGE / 2);
        paged.ensure(limit);
        expect(paged.length).to.equal(pagedLength(before, limit)).and.to.be.at.least(limit);
        if (limit > PAGE) expect(paged.length % PAGE).to.equal(0);
        for (let i = 0; i < 200; i++) {
          const at = randomInt(rng, limit);
          const v = value(rng());
          paged.set(at, v);
          reference[at] = v;
        }
        for (let i = 0; i < 400; i++) {
          const at = randomInt(rng, limit);
          expect(paged.get(at)).to.equal(reference[at] ?? fill);
        }
      }
      expect(paged.byteLength).to.equal(paged.length * make.BYTES_PER_ELEMENT);
      paged.fillAll(3);
      expect(paged.get(randomInt(rng, limit))).to.equal(3);
    });
  }
});
