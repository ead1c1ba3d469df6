// The raw exports of the kernel builds (see assembly/index.ts) and how one
// session's instance is made over its own memory.

import type { Backend } from '../config.js';
import { align16 } from './layout.js';

export interface KernelExports {
  heapBase(): number;
  /** 1 in the relaxed-SIMD build, 0 in the simd128 build. */
  RELAXED_SIMD: WebAssembly.Global;
  search(
    vectors: number, invNorms: number, seqs: number, dim: number,
    rowList: number, count: number,
    queries: number, queryCount: number, metric: number, k: number,
    outRows: number, outKeys: number, blockScratch: number, keyScratch: number,
  ): void;
  /** The top k from which search() selects one query's results after the scan, given keyScratch. */
  KEYS_FIRST_MIN_TOPK: WebAssembly.Global;
  /** Rows per pool entry (or result) a selection after the scan, and searchL2Bounded's two passes, need. */
  KEYS_FIRST_ROWS_PER_POOL: WebAssembly.Global;
  /** The most queries search() scores in one pass over the rows (layout.ts reserves their interleaved copy). */
  TILE_PASS_QUERIES: WebAssembly.Global;
  /** search() for one l2 query, by dot-loop bounds then an exact pass over the rows they leave (assembly/l2-bounds.ts); returns the rows scored exactly. */
  searchL2Bounded(
    vectors: number, invNorms: number, seqs: number, dim: number,
    rowList: number, count: number, query: number, queryNorm: number, k: number,
    outRows: number, outKeys: number,
    bounds: number, list: number, poolRows: number, poolKeys: number,
  ): number;
  searchInt8(
    codes: number, stride: number, scales: number, aux: number, seqs: number,
    rowList: number, count: number,
    query16: number, queryScale: number, metric: number, k: number,
    outRows: number, outKeys: number, keyScratch: number,
  ): number;
  /** Pools from which searchInt8 can take keyScratch (room for every scanned row's key) and select after the scan. */
  KEYS_FIRST_MIN_POOL: WebAssembly.Global;
  /** Point this instance's mutable buffers at `at` (WORK_AREA_BYTES, 16-aligned); 0: back to static data. */
  setWorkArea(at: number): void;
  WORK_AREA_BYTES: WebAssembly.Global;
  /** invNorms[r] = 1 / ||row r|| (0 for a zero row) for rows [first, first + count). */
  storeInverseNorms(vectors: number, dim: number, first: number, count: number, invNorms: number): void;
  METRIC_COSINE: WebAssembly.Global;
  METRIC_L2: WebAssembly.Global;
  /** Base64 text at src as float32 values at dst (assembly/base64.ts): the count, or a negative code. */
  decodeFloat32Base64(src: number, length: number, dst: number, maxAbsBits: number): number;
}

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
  return isSharedBuild(module)
    ? new WebAssembly.Memory({ initial: 1, maximum: SHARED_MAXIMUM_PAGES, shared: true })
    : new WebAssembly.Memory({ initial: 1 });
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
