// How LocalIndex gets its kernel: given, fetched (streamed in browsers), or read
// from a file: URL in Node; a relaxed-SIMD build this engine cannot compile
// falls back to the simd128 build beside it.
import { relaxedSimdSupported } from '../kernel/relaxed-simd.js';
import { TempvecError } from './errors.js';

export interface KernelOptions {
  /** Where the kernel is; defaults to kernel.wasm beside this module (the server serves both). */
  wasmUrl?: string | URL;
  /** The kernel itself, compiled or as bytes (skips the fetch). */
  wasm?: WebAssembly.Module | ArrayBuffer | ArrayBufferView;
}

/** How the kernel was obtained: instantiateStreaming in browsers, else from bytes. */
export type KernelSource = 'instantiateStreaming' | 'bytes' | 'module';

/** What to pass when the kernel cannot be found where this module is. */
const KERNEL_HINT = "pass LocalIndex.load({ wasmUrl: '<server>/kernel.wasm' }) or { wasm: <its bytes or a WebAssembly.Module> }";

/** The simd128 build, which the server serves beside /kernel.wasm for engines without relaxed SIMD. */
const SIMD128_KERNEL = './kernel.simd128.wasm';

/**
 * Any failure to get or compile the kernel is KERNEL_UNAVAILABLE, saying where
 * it looked and what to pass. A kernel this engine cannot compile, where the
 * engine lacks relaxed SIMD, is the relaxed build: the simd128 build beside it
 * is loaded instead.
 */
export async function loadKernel(options: KernelOptions): Promise<{ module: WebAssembly.Module; source: KernelSource }> {
  let where = 'the given bytes';
  const lacksRelaxedSimd = (err: unknown) => err instanceof WebAssembly.CompileError && !relaxedSimdSupported();
  try {
    const { wasm } = options;
    if (wasm instanceof WebAssembly.Module) return { module: wasm, source: 'module' };
    if (wasm) {
      try {
        return { module: await WebAssembly.compile(wasm as BufferSource), source: 'bytes' };
      } catch (err) {
        if (lacksRelaxedSimd(err))
          throw new Error(`${(err as Error).message}: this engine lacks relaxed SIMD, pass the simd128 build (/kernel.simd128.wasm)`, { cause: err });
        throw err;
      }
    }
    where = String(options.wasmUrl ?? `./kernel.wasm beside ${import.meta.url}`);
    const url = new URL(options.wasmUrl ?? './kernel.wasm', import.meta.url);
    where = url.href;
    try {
      return await fetchKernel(url);
    } catch (err) {
      if (!lacksRelaxedSimd(err)) throw err;
      const simd128 = new URL(SIMD128_KERNEL, url);
      where = `${url.href}, which needs relaxed SIMD, then ${simd128.href}`;
      return await fetchKernel(simd128);
    }
  } catch (err) {
    if (err instanceof TempvecError) throw err;
    const why = (err as { code?: string })?.code ?? (err as Error)?.message ?? String(err);
    throw new TempvecError(0, 'KERNEL_UNAVAILABLE', `could not load the kernel from ${where} (${why}); ${KERNEL_HINT}`, undefined, { cause: err });
  }
}

async function fetchKernel(url: URL): Promise<{ module: WebAssembly.Module; source: KernelSource }> {
  if (url.protocol === 'file:') return { module: await WebAssembly.compile(readLocalFile(url)), source: 'bytes' };
  // Each index instantiates the module over its own memory; this first
  // instance only proves the imports match while the bytes stream in.
  const imports = { env: { memory: new WebAssembly.Memory({ initial: 1 }) } };
  const response = await fetch(url);
  if (!response.ok)
    throw new TempvecError(response.status, 'KERNEL_UNAVAILABLE', `could not load the kernel from ${url}: HTTP ${response.status}; ${KERNEL_HINT}`);
  if (typeof WebAssembly.instantiateStreaming === 'function' && response.headers.get('content-type')?.startsWith('application/wasm')) {
    return { module: (await WebAssembly.instantiateStreaming(response, imports)).module, source: 'instantiateStreaming' };
  }
  return { module: await WebAssembly.compile(await response.arrayBuffer()), source: 'bytes' };
}

/** Node only (a file: URL); reached through process so no bundle needs node:fs. */
function readLocalFile(url: URL): Uint8Array<ArrayBuffer> {
  const fs = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:fs') as
    | { readFileSync(url: URL): Uint8Array<ArrayBuffer> }
    | undefined;
  if (!fs) throw new TempvecError(0, 'KERNEL_UNAVAILABLE', `cannot read ${url} here; ${KERNEL_HINT}`);
  return fs.readFileSync(url);
}
