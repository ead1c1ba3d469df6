// The benchmarks only time results they have checked equal; these tests
// check the checker and the plain TypeScript baseline it compares against.
import { expect } from 'chai';
import { invNormsOf, plainSearch, sameIds } from '../../bench/lib/plain.js';

describe('bench plain reference', () => {
  it('finds the k nearest by cosine, best first', () => {
    const data = Float32Array.from([1, 0, 0, 1, 0.9, 0.1, -1, 0]);
    const hits = plainSearch(data, 2, 4, invNormsOf(data, 2, 4), Float32Array.from([1, 0]), 3, 'cosine');
    expect(Array.from(hits.rows)).to.deep.equal([0, 2, 1]);
  });

  it('finds the k nearest by l2', () => {
    const data = Float32Array.from([0, 0, 5, 5, 1, 1]);
    const hits = plainSearch(data, 2, 3, null, Float32Array.from([4, 4]), 2, 'l2');
    expect(Array.from(hits.rows)).to.deep.equal([1, 2]);
    expect(hits.keys[0]).to.be.closeTo(-2, 1e-9);
  });

  it('accepts a swap only between near-equal scores', () => {
    expect(sameIds([1, 2, 3], [1, 2, 3])).to.equal(true);
    expect(sameIds([1, 2, 3], [1, 3, 2], [0.9, 0.5, 0.5], [0.9, 0.5, 0.5])).to.equal(true);
    expect(sameIds([1, 2, 3], [1, 3, 2], [0.9, 0.7, 0.5], [0.9, 0.6, 0.5])).to.equal(false);
    expect(sameIds([1, 2, 3], [1, 2, 4], [0.9, 0.7, 0.5], [0.9, 0.7, 0.4])).to.equal(false);
    expect(sameIds([1, 2], [1, 3])).to.equal(false);
  });
});
