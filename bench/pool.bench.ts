// npm run bench:pool: the kernel pool against the inline kernel, in one
// process, rounds alternating: one query on 100k x 384 (split in row ranges;
// goal: 2 threads <= 0.65x of 1) and search-many of 64 on 50k x 1024 (query
// blocks; goal <= 0.6x). Results are checked equal before timing counts.
// Beside each, the read floor on 1 and 2 threads (bench/lib/read-floor-threads.ts).
// Then the crossover: one query on small sessions, inline against the pool.
import { performance } from 'node:perf_hooks';
import { KernelPool } from '../src/kernel/kernel-pool.js';
import { KernelInstance } from '../src/kernel/kernel-instance.js';
import { loadKernelModule, loadSharedKernelModule } from '../src/kernel/load-node.js';
import { POOL_MIN_WORK } from '../src/kernel/search-path.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { readFloorOnThreads } from './lib/read-floor-threads.js';
import { fmt, median, printTable, quick, writeResults } from './lib/measure.js';

const THREADS = 2;
const ROUNDS = quick ? 3 : 9;

function filled(module: WebAssembly.Module, data: Float32Array, dim: number): KernelInstance {
  const n = data.length / dim;
  const kernel = new KernelInstance(module, dim, 'cosine', n);
  kernel.ensureCapacity(n);
  for (let r = 0; r < n; r++) kernel.writeRow(r, rowOf(data, dim, r), r);
  return kernel;
}

const pool = new KernelPool(THREADS, loadSharedKernelModule());
const rows: Record<string, string | number>[] = [];
for (const { n, dim, queryCount, goal } of [
  { n: quick ? 10_000 : 100_000, dim: 384, queryCount: 1, goal: 0.65 },
  { n: quick ? 5_000 : 50_000, dim: 1024, queryCount: 64, goal: 0.6 },
]) {
  const data = uniformVectors(n, dim, 81);
  const queries = uniformVectors(queryCount, dim, 82);
  const inline = filled(loadKernelModule(), data, dim);
  const shared = filled(loadSharedKernelModule(), data, dim);
  const want = inline.search(queries, queryCount, 10, n);
  const got = await shared.searchOnPool(pool, queries, queryCount, 10, n);
  if (want.rows.join() !== got.rows.join()) throw new Error(`${n} x ${dim}: pool and inline results differ`);
  const calls = queryCount === 1 ? 20 : 2;
  const inlineMs: number[] = [], poolMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const timeInline = () => { const t0 = performance.now(); for (let c = 0; c < calls; c++) inline.search(queries, queryCount, 10, n); inlineMs.push((performance.now() - t0) / calls); };
    const timePool = async () => { const t0 = performance.now(); for (let c = 0; c < calls; c++) await shared.searchOnPool(pool, queries, queryCount, 10, n); poolMs.push((performance.now() - t0) / calls); };
    if (r % 2) { timeInline(); await timePool(); } else { await timePool(); timeInline(); }
  }
  const ratio = median(poolMs) / median(inlineMs);
  // What reading the same bytes at all costs on 1 and on THREADS threads, right after: the best a split scan can do today.
  const floors = [await readFloorOnThreads(1, n * dim * 4), await readFloorOnThreads(THREADS, n * dim * 4)];
  rows.push({
    case: `${queryCount === 1 ? 'one query' : `search-many ${queryCount}`}, ${n / 1000}k x ${dim}`, 'inline ms': fmt(median(inlineMs)), [`${THREADS} threads ms`]: fmt(median(poolMs)),
    ratio: fmt(ratio), goal: `<= ${goal}`, met: ratio <= goal ? 'yes' : 'no',
    'read floor 1t ms': fmt(floors[0]), [`read floor ${THREADS}t ms`]: fmt(floors[1]), 'floor ratio': fmt(floors[1] / floors[0]),
  });
  console.error(`done ${n} x ${dim}`);
}

// Where the pool starts to pay: one query over growing sessions (work =
// rows x dims), inline against the pool, each timed as the median of many
// calls. POOL_MIN_WORK (src/kernel/search-path.ts) should sit near the
// first size where the pool is faster.
const crossover: Record<string, string | number>[] = [];
for (const n of [500, 1000, 2500, 5000, 10_000, 20_000]) {
  const dim = 384;
  const data = uniformVectors(n, dim, 83);
  const query = uniformVectors(1, dim, 84);
  const inline = filled(loadKernelModule(), data, dim);
  const shared = filled(loadSharedKernelModule(), data, dim);
  const inlineMs: number[] = [], poolMs: number[] = [];
  const calls = 50;
  for (let r = 0; r < ROUNDS; r++) {
    let t0 = performance.now();
    for (let c = 0; c < calls; c++) inline.search(query, 1, 10, n);
    inlineMs.push((performance.now() - t0) / calls);
    t0 = performance.now();
    for (let c = 0; c < calls; c++) await shared.searchOnPool(pool, query, 1, 10, n);
    poolMs.push((performance.now() - t0) / calls);
  }
  pool.release(shared.id);
  crossover.push({ rows: n, work: n * dim, 'inline ms': fmt(median(inlineMs)), 'pool ms': fmt(median(poolMs)), 'pool / inline': fmt(median(poolMs) / median(inlineMs)), 'below POOL_MIN_WORK': n * dim < POOL_MIN_WORK ? 'yes' : 'no' });
}
await pool.close();
printTable(rows);
printTable(crossover);
console.log(`results: ${writeResults('pool', { threads: THREADS, rows, crossover })}`);
