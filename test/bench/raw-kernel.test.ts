// The benchmarks' baselines must compute what they claim to: the bare dot
// scan ranks by the dot product, and the floor pass reads every byte.
import { expect } from 'chai';
import { uniformVectors } from '../../bench/lib/data.js';
import { RawKernel } from '../../bench/lib/raw-kernel.js';
import { scratchFor } from '../../src/kernel/layout.js';

describe('bench raw kernel', () => {
  const dim = 20;
  const n = 300;
  const data = uniformVectors(n, dim, 5);

  function bruteDot(query: Float32Array, k: number): number[] {
    const scored = Array.from({ length: n }, (_, r) => {
      let s = 0;
      for (let d = 0; d < dim; d++) s += query[d] * data[r * dim + d];
      return { r, s };
    });
    return scored
      .sort((a, b) => b.s - a.s)
      .slice(0, k)
      .map((x) => x.r);
  }

  it('ranks by the bare dot product, singly and in blocks of queries', () => {
    const kernel = new RawKernel(data, dim);
    const queries = uniformVectors(6, dim, 6);
    const block = kernel.search(queries, 6, 5, 'dot');
    for (let j = 0; j < 6; j++) {
      const query = queries.subarray(j * dim, (j + 1) * dim);
      expect(Array.from(block.subarray(j * 5, (j + 1) * 5))).to.deep.equal(bruteDot(query, 5));
      expect(Array.from(kernel.search(query, 1, 5, 'dot'))).to.deep.equal(bruteDot(query, 5));
    }
  });

  it('returns min(k, count) rows and keys per query, with or without a row list', () => {
    const small = uniformVectors(3, dim, 7);
    const kernel = new RawKernel(small, dim);
    const queries = uniformVectors(2, dim, 8);
    const dot = (q: number, r: number) => small.subarray(r * dim, (r + 1) * dim).reduce((s, x, d) => s + x * queries[q * dim + d], 0);
    for (const list of [null, Int32Array.from([2, 0])]) {
      const rows = list ? Array.from(list) : [0, 1, 2];
      const hits = kernel.searchWithKeys(queries, 2, 10, 'dot', list);
      expect(hits.rows).to.have.length(2 * rows.length);
      for (let q = 0; q < 2; q++) {
        const expected = rows.slice().sort((a, b) => dot(q, b) - dot(q, a));
        const at = q * rows.length;
        expect(Array.from(hits.rows.subarray(at, at + rows.length))).to.deep.equal(expected);
        expected.forEach((r, i) => {
          expect(hits.keys[at + i]).to.be.closeTo(dot(q, r), 1e-5);
        });
      }
    }
  });

  it('keeps nothing and writes nothing past the results for k = 0', () => {
    const kernel = new RawKernel(data, dim);
    kernel.search(uniformVectors(1, dim, 9), 1, 3, 'cosine'); // grows the scratch
    const past = new Uint8Array(kernel.memory.buffer, scratchFor(kernel.layout, 1, 0, 0).outRows);
    past.fill(0xab);
    for (const metric of ['cosine', 'l2', 'dot'] as const) {
      expect(kernel.searchWithKeys(uniformVectors(1, dim, 9), 1, 0, metric).rows).to.have.length(0);
    }
    expect(past.every((b) => b === 0xab)).to.equal(true);
  });

  it('reads the whole vector region in the floor passes (one stream, and four)', () => {
    const ones = new Float32Array(64 * 16).fill(1);
    expect(new RawKernel(ones, 16).readFloor()).to.equal(1024);
    // Four quarters plus a remainder: 64 rows of 16 is 64 blocks of 64 bytes (16 per quarter); 67 rows leave 3.
    expect(new RawKernel(ones, 16).readFloor4()).to.equal(1024);
    expect(new RawKernel(new Float32Array(67 * 16).fill(1), 16).readFloor4()).to.equal(67 * 16);
    const ramp = Float32Array.from({ length: 67 * 16 }, (_, i) => i % 7);
    expect(new RawKernel(ramp, 16).readFloor4()).to.equal(ramp.reduce((s, x) => s + x, 0));
  });
});
