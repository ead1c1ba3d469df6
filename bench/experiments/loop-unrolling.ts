// npm run bench:experiment -- loop-unrolling: the kernel's search paths timed in Node
// processes started with V8's defaults and with --no-wasm-loop-unrolling,
// the processes alternated (a flag is fixed for a process's life, so the two
// cannot share one). V8 unrolls a wasm loop by how deeply it is nested, and
// copies search-many's pass loop, nested in the row and tile loops, three
// times with every copy's loads first (see bench/experiments/fp-peak/probe.ts); the
// other loops are measured here so a flag that helps one path is not taken
// for the service if it slows another.
import { spawnSync } from 'node:child_process';
import { uniformVectors } from '../lib/data.js';
import { filledKernel } from '../lib/kernel-setup.js';
import { fmt, interleave, median, printTable, quick } from '../lib/measure.js';
import { writeExperimentResults } from '../lib/results.js';

const FLAG = '--no-wasm-loop-unrolling';
const DIM = 384;
const N = quick ? 2_000 : 100_000;
const SMALL = quick ? 1_000 : 10_000;
const BLOCK = 16;

/** In a child: every path's median ms per call, as JSON on stdout. */
function measurePaths(): Record<string, number> {
  const big = filledKernel(uniformVectors(N, DIM, 71), DIM, 'cosine');
  const small = filledKernel(uniformVectors(SMALL, DIM, 71), DIM, 'cosine');
  const l2 = filledKernel(uniformVectors(SMALL, DIM, 71), DIM, 'l2');
  const int8 = filledKernel(uniformVectors(N, DIM, 71), DIM, 'cosine', 'int8');
  const queries = uniformVectors(BLOCK, DIM, 72);
  const one = queries.subarray(0, DIM);
  const percent = Int32Array.from({ length: N / 100 }, (_, i) => i * 100);
  const timings = interleave(
    [
      { name: `cosine k10, ${N / 1000}k`, run: () => big.search({ queries: one, queryCount: 1, k: 10, count: N }) },
      { name: `cosine k10, ${SMALL / 1000}k`, run: () => small.search({ queries: one, queryCount: 1, k: 10, count: SMALL }) },
      { name: `cosine k100, ${SMALL / 1000}k`, run: () => small.search({ queries: one, queryCount: 1, k: 100, count: SMALL }) },
      { name: `l2 k10, ${SMALL / 1000}k`, run: () => l2.search({ queries: one, queryCount: 1, k: 10, count: SMALL }) },
      { name: `search-many 16, ${SMALL / 1000}k`, run: () => small.search({ queries, queryCount: BLOCK, k: 10, count: SMALL }) },
      { name: `search-many 16, ${N / 1000}k`, run: () => big.search({ queries, queryCount: BLOCK, k: 10, count: N }) },
      { name: `int8 pool 100, ${N / 1000}k`, run: () => int8.search({ queries: one, queryCount: 1, k: 10, candidatePool: 100, count: N }) },
      { name: `1% row list, ${N / 1000}k`, run: () => big.search({ queries: one, queryCount: 1, k: 10, count: N, rowList: percent }) },
    ],
    { rounds: 5, targetMs: quick ? 20 : 80 },
  );
  return Object.fromEntries(timings.map((t) => [t.name, t.ms]));
}

if (process.env.TEMPVEC_LOOP_UNROLLING_CHILD) {
  process.stdout.write(JSON.stringify(measurePaths()));
} else {
  const processes = quick ? 1 : 4;
  const runs: Record<'default' | 'flag', Record<string, number>[]> = { default: [], flag: [] };
  for (let p = 0; p < processes; p++) {
    for (const setting of p % 2 ? (['flag', 'default'] as const) : (['default', 'flag'] as const)) {
      const child = spawnSync(
        process.execPath,
        [...(setting === 'flag' ? [FLAG] : []), '--import', 'tsx', new URL(import.meta.url).pathname, ...process.argv.slice(2)],
        {
          env: { ...process.env, TEMPVEC_LOOP_UNROLLING_CHILD: '1' },
          encoding: 'utf8',
          maxBuffer: 1 << 20,
        },
      );
      if (child.status !== 0) throw new Error(`child (${setting}) failed: ${child.stderr}`);
      runs[setting].push(JSON.parse(child.stdout));
      console.error(`process ${p + 1}/${processes} ${setting} done`);
    }
  }
  const rows = Object.keys(runs.default[0]).map((path) => {
    const base = median(runs.default.map((r) => r[path])),
      flagged = median(runs.flag.map((r) => r[path]));
    return { path, 'default ms': fmt(base, 3), [`${FLAG} ms`]: fmt(flagged, 3), 'flag/default': fmt(flagged / base) };
  });
  printTable(rows);
  console.log(`results: ${writeExperimentResults('loop-unrolling', { flag: FLAG, processes, rows })}`);
}
