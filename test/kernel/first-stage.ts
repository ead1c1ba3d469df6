// The int8 first stage's pool through the product API: with k = pool, the
// exact re-ranking keeps every pooled row, so its rows are the pool.
import type { KernelInstance } from '../../src/kernel/kernel-instance.js';

/** Rows of the `pool` best int8 keys among rows [0, count) (or `rowList`), in no particular order. */
export function firstStagePool(kernel: KernelInstance, query: Float32Array, pool: number, count: number, rowList: Int32Array | null = null): Int32Array {
  return kernel.search({ queries: query, queryCount: 1, k: pool, candidatePool: pool, count, rowList }).rows;
}
