// How one session's instance of a kernel build is made over its own memory.
// The builds' raw exports are KernelExports, generated from the build
// (kernel-exports.ts).

import type { Backend } from '../config.js';
import type { KernelExports } from './kernel-exports.js';
import { align16 } from './layout.js';

export type { KernelExports } from './kernel-exports.js';

const sharedBuilds = new WeakSet<WebAssembly.Module>();

/** Mark `module` as the shared-memory build (it imports a shared memory). */
export function markSharedBuild(module: WebAssembly.Module): WebAssembly.Module {
  sharedBuilds.add(module);
  return module;
}

export const isSharedBuild = (module: WebAssembly.Module) => sharedBuilds.has(module);

/** The build's declared maximum (asconfig.json "shared": maximumMemory): 4 GiB of pages. */
export const SHARED_MAXIMUM_PAGES = 65536;

/** A new session memory of the kind `module` imports. */
export function memoryFor(module: WebAssembly.Module): WebAssembly.Memory {
  return isSharedBuild(module) ? new WebAssembly.Memory({ initial: 1, maximum: SHARED_MAXIMUM_PAGES, shared: true }) : new WebAssembly.Memory({ initial: 1 });
}

export function instantiateKernel(module: WebAssembly.Module, memory: WebAssembly.Memory): KernelExports {
  const instance = new WebAssembly.Instance(module, { env: { memory } });
  return instance.exports as unknown as KernelExports;
}

/** What every instance of a module shares, asked once of one throwaway instance. */
const facts = new WeakMap<WebAssembly.Module, { heapBase: number; backend: Backend }>();

function factsOf(module: WebAssembly.Module) {
  let known = facts.get(module);
  if (known === undefined) {
    const kernel = instantiateKernel(module, memoryFor(module));
    // A kernel from before the relaxed build exports no RELAXED_SIMD: it is simd128.
    known = { heapBase: align16(kernel.heapBase()), backend: kernel.RELAXED_SIMD?.value === 1 ? 'wasm-relaxed-simd' : 'wasm-simd128' };
    facts.set(module, known);
  }
  return known;
}

/** First 16-byte-aligned byte past the module's static data. */
export const heapBaseOf = (module: WebAssembly.Module): number => factsOf(module).heapBase;

/** The build `module` is (its RELAXED_SIMD export). */
export const backendOf = (module: WebAssembly.Module): Backend => factsOf(module).backend;
