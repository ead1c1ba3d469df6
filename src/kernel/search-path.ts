// Which way one search goes through the kernel, and the call that runs it.
// The same hits come out every way; the faster ways for one query need
// scratch for a key or bound per scanned row (KernelInstance sizes it).

import type { Metric } from '../config.js';
import type { KernelExports } from './kernel-module.js';
import { inverseNorm } from './inverse-norm.js';
import type { Layout, ScratchLayout } from './layout.js';

/** Below this many floats a row, one l2 query scans plainly: the bounds' per-row work only pays off on longer rows. */
const L2_BOUNDS_MIN_DIM = 16;
/**
 * The most bytes of rows a keys-first selection scans: over rows that fit
 * a last-level cache the one-pass scan's selection shows; a scan streaming
 * from memory hides it, and storing every key then costs more.
 */
const KEYS_FIRST_MAX_SCAN_BYTES = 16 * 1024 * 1024;

/**
 * Less work than this (queries x rows x dims) runs on the request's own
 * thread: handing a search to a pool thread and back costs more
 * (bench:pool measures the crossover).
 */
export const POOL_MIN_WORK = 2_000_000;
/** Work of one pool call: about 15 ms of scan on one core here; a busy pool turns to another session between calls. */
export const POOL_SLICE_WORK = 128_000_000;
/** The most calls one search is cut into (each has scratch of its own). */
export const POOL_MAX_SLICES = 64;

/** The fewest rows an int8 first stage's range scans (a smaller range is not worth a call). */
const INT8_MIN_RANGE_ROWS = 8;

/**
 * Ranges of rows each query's int8 first stage is cut into on a pool of
 * `threads`: enough for fewer queries than threads to use them all, and for
 * calls of about `sliceWork` at most (an int8 row counts a quarter of its
 * dims, as in the search plan's work); 1 keeps whole queries (blocks of them).
 */
export function int8RowParts(threads: number, queryCount: number, scanned: number, dim: number, sliceWork: number): number {
  const wanted = Math.max(Math.ceil(threads / queryCount), Math.ceil((scanned * dim) / 4 / sliceWork));
  return Math.max(1, Math.min(wanted, Math.floor(POOL_MAX_SLICES / queryCount), Math.floor(scanned / INT8_MIN_RANGE_ROWS)));
}

/** What a kernel build offers a single query beyond the one-pass scan. */
export interface SingleQueryPaths {
  /** It has searchL2Bounded. */
  bounded: boolean;
  /** Its KEYS_FIRST_MIN_TOPK: the top k from which search() can select after the scan. */
  minTopK: number;
  /** Its KEYS_FIRST_ROWS_PER_POOL: the rows per result either needs. */
  rowsPerResult: number;
}

export function singleQueryPathsOf(kernel: KernelExports): SingleQueryPaths {
  return { bounded: true, minTopK: kernel.KEYS_FIRST_MIN_TOPK.value, rowsPerResult: kernel.KEYS_FIRST_ROWS_PER_POOL.value };
}

/**
 * 'bounded': l2 by bounds (searchL2Bounded, 8 bytes of scratch a row);
 * 'keysFirst': every key stored, the k best selected after the scan (4 bytes
 * a row); 'plain': the one-pass scan.
 */
export type SingleQueryPathName = 'bounded' | 'keysFirst' | 'plain';

export interface SingleQueryShape {
  metric: Metric;
  dim: number;
  k: number;
  /** Rows the query scans (the filter's row list, or all). */
  scanned: number;
}

/** The fastest way for one query's top k (the same hits every way). */
export function singleQueryPath(paths: SingleQueryPaths, { metric, dim, k, scanned }: SingleQueryShape): SingleQueryPathName {
  if (!(scanned >= paths.rowsPerResult * k)) return 'plain';
  if (metric === 'l2' && paths.bounded && dim >= L2_BOUNDS_MIN_DIM) return 'bounded';
  return k >= paths.minTopK && scanned * dim * 4 <= KEYS_FIRST_MAX_SCAN_BYTES ? 'keysFirst' : 'plain';
}

export interface KernelSearch {
  kernel: KernelExports;
  layout: Layout;
  /** Offsets of the call's scratch, where the queries (and row list) are already written. */
  scratch: ScratchLayout;
  path: SingleQueryPathName;
  /** Whether the rows scanned are scratch.rowList (a filter) rather than rows [0, count). */
  withRowList: boolean;
  /** Rows scanned: the row list's length, or the stored rows. */
  count: number;
  /** The queries as given (the bounded path takes its norm from here). */
  queries: Float32Array;
  queryCount: number;
  metricCode: number;
  k: number;
}

/** One kernel call with its arguments (what a pool thread is sent, in a job: executor.ts). */
export type KernelCall =
  | { fn: 'search'; args: Parameters<KernelExports['search']> }
  | { fn: 'searchL2Bounded'; args: Parameters<KernelExports['searchL2Bounded']> }
  /** One int8 first stage (a range of one query's rows): the candidates it kept. */
  | { fn: 'searchInt8'; args: Parameters<KernelExports['searchInt8']> };

/**
 * The kernel call for a search laid out in scratch, the way `path` says:
 * searchL2Bounded for 'bounded', otherwise search(), given room for every
 * key for 'keysFirst'.
 */
export function kernelCallOf({ layout, scratch, path, withRowList, count, queries, queryCount, metricCode, k }: Omit<KernelSearch, 'kernel'>): KernelCall {
  const { vectors, invNorms, seqs, dim } = layout;
  const rowList = withRowList ? scratch.rowList : 0;
  if (path === 'bounded') {
    const inverse = inverseNorm(queries);
    return {
      fn: 'searchL2Bounded',
      args: [
        vectors,
        invNorms,
        seqs,
        dim,
        rowList,
        count,
        scratch.queries,
        inverse > 0 ? 1 / inverse : 0,
        k,
        scratch.outRows,
        scratch.outKeys,
        scratch.keys,
        scratch.list,
        scratch.poolRows,
        scratch.poolKeys,
      ],
    };
  }
  return {
    fn: 'search',
    args: [
      vectors,
      invNorms,
      seqs,
      dim,
      rowList,
      count,
      scratch.queries,
      queryCount,
      metricCode,
      k,
      scratch.outRows,
      scratch.outKeys,
      scratch.block,
      path === 'keysFirst' ? scratch.keys : 0,
    ],
  };
}

/** One int8 first stage: a query's codes over a range of rows (or a row list), keeping its `candidates` best by the codes. */
export interface Int8StageCall {
  layout: Layout;
  metric: Metric;
  metricCode: number;
  /** First row of the range, whose per-row regions the kernel reads from (0 with a row list: it indexes them). */
  from: number;
  /** Where the stage's row list lies, 0 for none. */
  rowListAt: number;
  /** Rows scanned: the range's or the row list's. */
  count: number;
  /** The query's codes, widened to i16, and its scale. */
  query16: number;
  queryScale: number;
  candidates: number;
  outRows: number;
  outKeys: number;
  /** Room for the key of every scanned row (a large pool), 0 for none. */
  keys: number;
}

/** The kernel call of an int8 first stage (searchInt8). */
export function int8StageCallOf(stage: Int8StageCall): KernelCall {
  const { layout, from } = stage;
  const { codes, codeStride, scales, seqs } = layout;
  // cosine ranks by the dot product over the row's norm, l2 by it less the squared norm.
  const aux = stage.metric === 'cosine' ? layout.invNorms : layout.sqNorms;
  return {
    fn: 'searchInt8',
    args: [
      codes + from * codeStride,
      codeStride,
      scales + from * 4,
      aux + from * 4,
      seqs + from * 4,
      stage.rowListAt,
      stage.count,
      stage.query16,
      stage.queryScale,
      stage.metricCode,
      stage.candidates,
      stage.outRows,
      stage.outKeys,
      stage.keys,
    ],
  };
}

/** An exact re-ranking: one query, written at scratch.queries, over the `count` candidate rows listed at rowListAt. */
export interface RerankCall {
  layout: Layout;
  metricCode: number;
  rowListAt: number;
  count: number;
  scratch: ScratchLayout;
  k: number;
}

/** The kernel call of a re-ranking: the one-pass float32 scan of the candidates (search()). */
export function rerankCallOf({ layout, metricCode, rowListAt, count, scratch, k }: RerankCall): KernelCall {
  const { vectors, invNorms, seqs, dim } = layout;
  return {
    fn: 'search',
    args: [vectors, invNorms, seqs, dim, rowListAt, count, scratch.queries, 1, metricCode, k, scratch.outRows, scratch.outKeys, scratch.block, 0],
  };
}

/** Run a call on this thread: searchL2Bounded's count of rows scored exactly, searchInt8's candidates kept, else 0. */
export function runKernelCall(kernel: KernelExports, call: KernelCall): number {
  if (call.fn === 'searchL2Bounded') return kernel.searchL2Bounded(...call.args);
  if (call.fn === 'searchInt8') return kernel.searchInt8(...call.args);
  kernel.search(...call.args);
  return 0;
}

/** Run a search laid out in scratch (kernelCallOf); returns searchL2Bounded's count of rows scored exactly, else 0. */
export function runKernelSearch(search: KernelSearch): number {
  return runKernelCall(search.kernel, kernelCallOf(search));
}
