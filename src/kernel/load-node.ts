// Node side: compile build/kernel.wasm once per process. Sessions instantiate
// the compiled module over their own memories.
import { readFileSync } from 'node:fs';
import { markSharedBuild } from './kernel-module.js';

let compiled: WebAssembly.Module | undefined;

/** Path of the kernel file; the same bytes are served to browsers. */
export const KERNEL_WASM_URL = new URL('../../build/kernel.wasm', import.meta.url);

export function loadKernelModule(): WebAssembly.Module {
  if (!compiled) {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(KERNEL_WASM_URL);
    } catch (err) {
      throw new Error(`kernel not built (${KERNEL_WASM_URL.pathname}): run "npm run build"`, { cause: err });
    }
    compiled = new WebAssembly.Module(new Uint8Array(bytes));
  }
  return compiled;
}

let compiledShared: WebAssembly.Module | undefined;

/** The kernel built for a shared, imported memory (build/kernel.shared.wasm), for the kernel pool. */
export function loadSharedKernelModule(): WebAssembly.Module {
  if (!compiledShared) {
    const url = new URL('../../build/kernel.shared.wasm', import.meta.url);
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(url);
    } catch (err) {
      throw new Error(`kernel not built (${url.pathname}): run "npm run build"`, { cause: err });
    }
    compiledShared = markSharedBuild(new WebAssembly.Module(new Uint8Array(bytes)));
  }
  return compiledShared;
}
