// Node side: compile build/kernel.wasm once per process. Sessions instantiate
// the compiled module over their own memories.
import { readFileSync } from 'node:fs';

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
