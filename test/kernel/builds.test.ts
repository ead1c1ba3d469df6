// The product kernel and the bench build: probes stay out of the product.
import { expect } from 'chai';
import { loadBenchKernelModule } from '../../bench/lib/bench-kernel.js';
import { loadKernelModule, loadSharedKernelModule } from '../../src/kernel/load-node.js';

const exportNames = (module: WebAssembly.Module) => WebAssembly.Module.exports(module).map((e) => e.name);
const PROBES = ['METRIC_DOT', 'readFloor', 'readFloor4'];

describe('kernel builds', () => {
  it('the product kernel exports no benchmark probe', () => {
    const names = exportNames(loadKernelModule());
    for (const probe of PROBES) expect(names).not.to.include(probe);
  });

  it('the bench build exports the product kernel plus the probes', () => {
    const product = exportNames(loadKernelModule());
    expect(exportNames(loadBenchKernelModule()).sort()).to.deep.equal([...product, ...PROBES].sort());
  });

  it('the shared build exports what the product kernel exports', () => {
    expect(exportNames(loadSharedKernelModule()).sort()).to.deep.equal(exportNames(loadKernelModule()).sort());
  });
});
