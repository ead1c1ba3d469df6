// The kernel's TypeScript binding is generated from the build, and every
// build exports exactly what it declares.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { BINDING_PATH, bindingOf, DECLARATIONS_PATH } from '../../scripts/kernel-binding.js';
import { loadKernelModule, loadSharedKernelModule } from '../../src/kernel/load-node.js';

const declared = (text: string) => [...text.matchAll(/^ {2}(?:readonly )?(\w+)[(:]/gm)].map((m) => m[1]).sort();

describe('kernel binding', () => {
  it('src/kernel/kernel-exports.ts is what scripts/kernel-binding.ts makes of build/kernel.d.ts (npm run docs)', () => {
    expect(readFileSync(BINDING_PATH, 'utf8'), 'run npm run docs').to.equal(bindingOf(readFileSync(DECLARATIONS_PATH, 'utf8')));
  });

  it('declares every export of the simd128 build and its shared twin, and nothing else', () => {
    const names = declared(readFileSync(BINDING_PATH, 'utf8'));
    expect(names).to.include.members(['search', 'searchInt8', 'RELAXED_SIMD', 'memory']);
    for (const module of [loadKernelModule(), loadSharedKernelModule()]) {
      expect(
        WebAssembly.Module.exports(module)
          .map((e) => e.name)
          .sort(),
      ).to.deep.equal(names);
    }
  });

  it('declares each function with the parameters and result asc reports', () => {
    const text = bindingOf(
      [
        '  /**',
        '   * assembly/norms/storeInverseNorms',
        '   * @param vectors `usize`',
        '   * @param dim `i32`',
        '   */',
        '  export function storeInverseNorms(vectors: number, dim: number): void;',
        '  /** assembly/index/RELAXED_SIMD */',
        '  export const RELAXED_SIMD: {',
        '    /** @type `i32` */',
        '    get value(): number',
        '  };',
      ].join('\n'),
    );
    expect(text).to.include(
      '  /** assembly/norms/storeInverseNorms(vectors: usize, dim: i32): void */\n  storeInverseNorms(vectors: number, dim: number): void;\n',
    );
    expect(text).to.include('  /** assembly/index/RELAXED_SIMD: i32 */\n  readonly RELAXED_SIMD: WebAssembly.Global;\n');
  });
});
