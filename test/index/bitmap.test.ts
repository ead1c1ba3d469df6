// RowBitmap: the set algebra filters run on.
import { expect } from 'chai';
import { RowBitmap } from '../../src/index/bitmap.js';

describe('RowBitmap', () => {
  for (const size of [1, 31, 32, 33, 70, 96]) {
    it(`adds a set of rows, a full set word by word, at size ${size}`, () => {
      const all = new Set(Array.from({ length: size }, (_, i) => i));
      const full = RowBitmap.of(size, all);
      expect(full.count()).to.equal(size);
      expect(Array.from(full.rows())).to.deep.equal([...all]);
      // The tail bits past `size` stay clear, so not() of all is empty.
      expect(RowBitmap.of(size, all).not().count()).to.equal(0);
      const some = new Set([...all].filter((i) => i % 3 !== 1));
      expect(Array.from(RowBitmap.of(size, some).rows())).to.deep.equal([...some]);
      expect(RowBitmap.of(size, new Set()).count()).to.equal(0);
    });
  }
});
