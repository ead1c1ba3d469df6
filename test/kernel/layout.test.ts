// The scratch layout written in TypeScript against what the kernel build needs.
import { expect } from 'chai';
import { instantiateKernel } from '../../src/kernel/kernel-module.js';
import { layoutFor, scratchFor, TILE_PASS_QUERIES } from '../../src/kernel/layout.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';

describe('kernel scratch layout', () => {
  it('reserves room for one pass of TILE_PASS_QUERIES interleaved queries, by 4', () => {
    const kernel = instantiateKernel(loadKernelModule(), new WebAssembly.Memory({ initial: 1 }));
    expect(kernel.TILE_PASS_QUERIES.value).to.equal(TILE_PASS_QUERIES);
    const dim = 37;
    const layout = layoutFor(kernel.heapBase(), dim, 100);
    const blockBytes = (queries: number) => {
      const s = scratchFor(layout, queries, 0, 10);
      return s.keys - s.block;
    };
    // 37 floats a query: 4, 8 and 16 queries take whole multiples of 16 bytes, so no rounding hides a short region.
    expect([1, 3].map(blockBytes)).to.deep.equal([0, 0]);
    expect(blockBytes(4)).to.equal(4 * dim * 4);
    expect(blockBytes(7)).to.equal(4 * dim * 4);
    expect(blockBytes(8)).to.equal(8 * dim * 4);
    expect(blockBytes(40)).to.equal(TILE_PASS_QUERIES * dim * 4);
  });
});
