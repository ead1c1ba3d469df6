// npm run bench:pool: the kernel pool against the inline kernel, in one
// process, rounds alternating: one query on 100k x 384 (split in row ranges;
// goal: 2 threads <= 0.65x of 1) and search-many of 64 on 50k x 1024 (query
// blocks; goal <= 0.6x). Results are checked equal before timing counts.
// Beside each, the read floor on 1 and 2 threads (bench/lib/read-floor-threads.ts).
// Then one int8 query on 100k x 384 (clustered) against one float32 query,
// both on the pool (goal: int8 <= 0.35x, recall@10 at the default pool unchanged),
// and inline for reference. Then the crossover: one query on small sessions, inline against the pool.
import { performance } from 'node:perf_hooks';
import { KernelPool } from '../src/kernel/kernel-pool.js';
import { KernelInstance } from '../src/kernel/kernel-instance.js';
import { loadKernelModule, loadSharedKernelModule } from '../src/kernel/load-node.js';
import { POOL_MIN_WORK } from '../src/kernel/search-path.js';
import { SPEC_LIMITS } from '../src/config.js';
import { clusteredVectors, rowOf, uniformVectors } from './lib/data.js';
import { filledKernel } from './lib/kernel-setup.js';
import { readFloorOnThreads } from './lib/read-floor-threads.js';
import { fmt, interleaveTimed, median, printTable, quick, timeCalls } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { onPool } from '../src/kernel/executor.js';

const THREADS = 2;
const ROUNDS = quick ? 3 : 9;

function filled(module: WebAssembly.Module, data: Float32Array, dim: number): KernelInstance {
  const n = data.length / dim;
  const kernel = new KernelInstance(module, dim, 'cosine', n);
  kernel.ensureCapacity(n);
  for (let r = 0; r < n; r++) kernel.writeRows([r], [rowOf(data, dim, r)], r);
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
  const want = inline.search({ queries, queryCount, k: 10, count: n });
  const got = await shared.search({ queries, queryCount, k: 10, count: n }, onPool(pool));
  if (want.rows.join() !== got.rows.join()) throw new Error(`${n} x ${dim}: pool and inline results differ`);
  const calls = queryCount === 1 ? 20 : 2;
  const inlineMs: number[] = [],
    poolMs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const timeInline = () => {
      const t0 = performance.now();
      for (let c = 0; c < calls; c++) inline.search({ queries, queryCount, k: 10, count: n });
      inlineMs.push((performance.now() - t0) / calls);
    };
    const timePool = async () => {
      const t0 = performance.now();
      for (let c = 0; c < calls; c++) await shared.search({ queries, queryCount, k: 10, count: n }, onPool(pool));
      poolMs.push((performance.now() - t0) / calls);
    };
    if (r % 2) {
      timeInline();
      await timePool();
    } else {
      await timePool();
      timeInline();
    }
  }
  const ratio = median(poolMs) / median(inlineMs);
  // What reading the same bytes at all costs on 1 and on THREADS threads, right after: the best a split scan can do today.
  const floors = [await readFloorOnThreads(1, n * dim * 4), await readFloorOnThreads(THREADS, n * dim * 4)];
  rows.push({
    case: `${queryCount === 1 ? 'one query' : `search-many ${queryCount}`}, ${n / 1000}k x ${dim}`,
    'inline ms': fmt(median(inlineMs)),
    [`${THREADS} threads ms`]: fmt(median(poolMs)),
    ratio: fmt(ratio),
    goal: `<= ${goal}`,
    met: ratio <= goal ? 'yes' : 'no',
    'read floor 1t ms': fmt(floors[0]),
    [`read floor ${THREADS}t ms`]: fmt(floors[1]),
    'floor ratio': fmt(floors[1] / floors[0]),
  });
  console.error(`done ${n} x ${dim}`);
}

// int8 against float32, one query at a time, each on the pool and inline: the
// int8 first stage is split by rows as the float32 scan is.
const int8Rows: Record<string, string | number>[] = [];
{
  const n = quick ? 10_000 : 100_000,
    dim = 384,
    k = 10,
    queryCount = 50;
  const candidatePool = SPEC_LIMITS.defaultCandidatePool;
  const data = clusteredVectors(n, dim, 61);
  const queries = clusteredVectors(queryCount, dim, 62);
  const query = (j: number) => rowOf(queries, dim, j % queryCount);
  const shared = loadSharedKernelModule();
  const float = filledKernel(data, dim, 'cosine', 'float32', shared);
  const int8 = filledKernel(data, dim, 'cosine', 'int8', shared);
  let found = 0;
  for (let j = 0; j < queryCount; j++) {
    const truth = new Set(float.search({ queries: query(j), queryCount: 1, k, count: n }).rows);
    const got = await int8.search({ queries: query(j), queryCount: 1, k, candidatePool, count: n }, onPool(pool));
    if (got.rows.join() !== int8.search({ queries: query(j), queryCount: 1, k, candidatePool, count: n }).rows.join())
      throw new Error('int8 on the pool and inline differ');
    for (const r of got.rows) if (truth.has(r)) found++;
  }
  let j = 0;
  const t = Object.fromEntries(
    (
      await interleaveTimed(
        [
          { name: 'float32 pool', time: timeCalls(() => float.search({ queries: query(j++), queryCount: 1, k, count: n }, onPool(pool))) },
          { name: 'int8 pool', time: timeCalls(() => int8.search({ queries: query(j++), queryCount: 1, k, candidatePool, count: n }, onPool(pool))) },
          { name: 'float32 inline', time: timeCalls(() => float.search({ queries: query(j++), queryCount: 1, k, count: n })) },
          { name: 'int8 inline', time: timeCalls(() => int8.search({ queries: query(j++), queryCount: 1, k, candidatePool, count: n })) },
        ],
        { rounds: ROUNDS, targetMs: 150 },
      )
    ).map((x) => [x.name, x.ms]),
  );
  const ratio = t['int8 pool'] / t['float32 pool'];
  int8Rows.push({
    case: `one query, ${n / 1000}k x ${dim} clustered, pool ${candidatePool}`,
    [`float32 ${THREADS}t ms`]: fmt(t['float32 pool']),
    [`int8 ${THREADS}t ms`]: fmt(t['int8 pool']),
    'int8 / float32': fmt(ratio),
    goal: '<= 0.35',
    met: ratio <= 0.35 ? 'yes' : 'no',
    'recall@10': fmt(found / (queryCount * k)),
    'float32 1t ms': fmt(t['float32 inline']),
    'int8 1t ms': fmt(t['int8 inline']),
    'int8 / float32 1t': fmt(t['int8 inline'] / t['float32 inline']),
  });
  pool.release(float.id);
  pool.release(int8.id);
  console.error('done int8');
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
  const inlineMs: number[] = [],
    poolMs: number[] = [];
  const calls = 50;
  for (let r = 0; r < ROUNDS; r++) {
    let t0 = performance.now();
    for (let c = 0; c < calls; c++) inline.search({ queries: query, queryCount: 1, k: 10, count: n });
    inlineMs.push((performance.now() - t0) / calls);
    t0 = performance.now();
    for (let c = 0; c < calls; c++) await shared.search({ queries: query, queryCount: 1, k: 10, count: n }, onPool(pool));
    poolMs.push((performance.now() - t0) / calls);
  }
  pool.release(shared.id);
  crossover.push({
    rows: n,
    work: n * dim,
    'inline ms': fmt(median(inlineMs)),
    'pool ms': fmt(median(poolMs)),
    'pool / inline': fmt(median(poolMs) / median(inlineMs)),
    'below POOL_MIN_WORK': n * dim < POOL_MIN_WORK ? 'yes' : 'no',
  });
}
await pool.close();
printTable(rows);
printTable(int8Rows);
printTable(crossover);
console.log(`results: ${writeResults('pool', { threads: THREADS, rows, int8: int8Rows, crossover })}`);
