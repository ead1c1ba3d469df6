// Node side: compile each kernel build once per process. Sessions instantiate
// the compiled module over their own memories.
import { readFileSync } from 'node:fs';
import { markSharedBuild } from './kernel-module.js';

/** Path of the kernel file; the same bytes are served to browsers. */
export const KERNEL_WASM_URL = new URL('../../build/kernel.wasm', import.meta.url);
const SHARED_KERNEL_WASM_URL = new URL('../../build/kernel.shared.wasm', import.meta.url);

const compiled = new Map<string, WebAssembly.Module>();

/** Compile the kernel file at `url` once; a missing file says which build command makes it. */
export function compileKernelFile(url: URL, buildCommand = 'npm run build'): WebAssembly.Module {
  let module = compiled.get(url.href);
  if (!module) {
    let bytes: Uint8Array;
    try {
      bytes = readFileSync(url);
    } catch (err) {
      throw new Error(`kernel not built (${url.pathname}): run "${buildCommand}"`, { cause: err });
    }
    module = new WebAssembly.Module(new Uint8Array(bytes));
    compiled.set(url.href, module);
  }
  return module;
}

export function loadKernelModule(): WebAssembly.Module {
  return compileKernelFile(KERNEL_WASM_URL);
}

/** The kernel built for a shared, imported memory (build/kernel.shared.wasm), for the kernel pool. */
export function loadSharedKernelModule(): WebAssembly.Module {
  return markSharedBuild(compileKernelFile(SHARED_KERNEL_WASM_URL));
}
