// Node side: compile each kernel build once per process. Sessions instantiate
// the compiled module over their own memories.
import { readFileSync } from 'node:fs';
import type { Backend } from '../config.js';
import { markSharedBuild } from './kernel-module.js';

/** The file of each build (scripts/build.ts makes them), from the repository root; the plain ones are served to pages too. */
export const KERNEL_FILES: Readonly<Record<Backend, { plain: string; shared: string }>> = {
  'wasm-simd128': { plain: 'build/kernel.wasm', shared: 'build/kernel.shared.wasm' },
  'wasm-relaxed-simd': { plain: 'build/kernel.relaxed.wasm', shared: 'build/kernel.relaxed.shared.wasm' },
};
const fileUrl = (path: string) => new URL(`../../${path}`, import.meta.url);

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

export function loadKernelModule(backend: Backend = 'wasm-simd128'): WebAssembly.Module {
  return compileKernelFile(fileUrl(KERNEL_FILES[backend].plain));
}

/** The kernel built for a shared, imported memory (build/kernel.shared.wasm or its relaxed twin), for the kernel pool. */
export function loadSharedKernelModule(backend: Backend = 'wasm-simd128'): WebAssembly.Module {
  return markSharedBuild(compileKernelFile(fileUrl(KERNEL_FILES[backend].shared)));
}
