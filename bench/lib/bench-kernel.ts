// The bench build of the kernel (build/kernel.bench.wasm from
// assembly/bench.ts): the product's exports plus probes only benchmarks use.
import { readFileSync } from 'node:fs';
import type { KernelExports } from '../../src/kernel/kernel-module.js';
import { compileKernelFile } from '../../src/kernel/load-node.js';
import type { SingleQueryPaths } from '../../src/kernel/search-path.js';

export interface BenchKernelExports extends KernelExports {
  /** Bare dot product, no norm: the baseline cosine and l2 are held to. */
  METRIC_DOT: WebAssembly.Global;
  /** Read a byte range with SIMD loads and nothing else (the memory floor). */
  readFloor(start: number, bytes: number): number;
  /** The same bytes read as four streams, one per quarter (the single-query scan's access pattern). */
  readFloor4(start: number, bytes: number): number;
}

const BENCH_WASM_URL = new URL('../../build/kernel.bench.wasm', import.meta.url);

export function loadBenchKernelModule(): WebAssembly.Module {
  return compileKernelFile(BENCH_WASM_URL, 'npm run build:kernel');
}

/** A kernel file given on the command line (experiments compare older builds). */
export function loadKernelFile(path: string): WebAssembly.Module {
  return new WebAssembly.Module(new Uint8Array(readFileSync(path)));
}

/** singleQueryPathsOf for any build, older ones included (each path they lack is never taken). */
export function singleQueryPathsOfAnyBuild(kernel: Partial<KernelExports>): SingleQueryPaths {
  return {
    bounded: kernel.searchL2Bounded !== undefined,
    minTopK: kernel.KEYS_FIRST_MIN_TOPK?.value ?? Infinity,
    rowsPerResult: kernel.KEYS_FIRST_ROWS_PER_POOL?.value ?? Infinity,
  };
}
