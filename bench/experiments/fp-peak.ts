// npm run bench:experiment -- fp-peak: how many f32x4 adds and multiplies V8's code issues
// per second on this machine with everything in registers, and how many
// multiply-add pairs the tiles' loop reaches over data in L1, on its own and
// nested in another loop as the tiles' is (bench/experiments/fp-peak/probe.ts, compiled
// here with asc); next to the pairs per second the scans reach at 10k x 384
// (a single query, and search-many's 16 queries in tiles): the ceiling the
// search-many goal meets where the rows sit in cache (16 queries in <= 0.7x
// the time of 16 singles).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { uniformVectors } from '../lib/data.js';
import { interleave, median, printTable, quick } from '../lib/measure.js';
import { writeExperimentResults } from '../lib/results.js';
import { RawKernel } from '../lib/raw-kernel.js';

const root = new URL('../../', import.meta.url).pathname;
const out = `${root}bench/results/experiments/fp-peak.wasm`;
mkdirSync(`${root}bench/results/experiments`, { recursive: true });
execFileSync(
  process.execPath,
  [
    `${root}node_modules/assemblyscript/bin/asc.js`,
    `${root}bench/experiments/fp-peak/probe.ts`,
    '-O3',
    '--enable',
    'simd',
    '--runtime',
    'stub',
    '--noAssert',
    '-o',
    out,
  ],
  { stdio: 'inherit' },
);
const probe = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(out)), { env: { memory: new WebAssembly.Memory({ initial: 1 }) } })
  .exports as Record<string, (...args: number[]) => number>;

const N = quick ? 200_000 : 20_000_000;
const rate = (run: () => unknown, ops: number) => {
  run(); // warm-up
  const runs: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    run();
    runs.push(ops / (Number(process.hrtime.bigint() - t0) / 1e9) / 1e9);
  }
  return median(runs);
};
const adds = rate(() => probe.adds(N, 1.0000001), 8 * N);
const muls = rate(() => probe.muls(N, 1.0000001), 8 * N);
const pairs = rate(() => probe.pairs(N, 1.0000001, 0.9999999), 8 * N);
const TILE_STEPS = 48; // one pass of a tile over a row pair at 384 dimensions (every other 4-float chunk)
const nested = rate(() => probe.pairsNested(N, TILE_STEPS, 1.0000001, 0.9999999), 8 * N);

const DIM = 384,
  ROWS = quick ? 2_000 : 10_000,
  BLOCK = 16;
const kernel = new RawKernel(uniformVectors(ROWS, DIM, 31), DIM);
const queries = uniformVectors(BLOCK, DIM, 32);
const t = Object.fromEntries(
  interleave(
    [
      { name: 'single', run: () => kernel.search(queries.subarray(0, DIM), 1, 10, 'cosine') },
      { name: 'tiles', run: () => kernel.search(queries, BLOCK, 10, 'cosine') },
    ],
    { rounds: 7, targetMs: 100 },
  ).map((x) => [x.name, x.ms]),
);
const pairsPerQuery = (ROWS * DIM) / 4;
const single = pairsPerQuery / (t.single / 1000) / 1e9;
const block = (BLOCK * pairsPerQuery) / (t.tiles / 1000) / 1e9;
const goal = single / 0.7;

const rows = [
  { probe: 'f32x4 adds alone, in registers', 'G per s': adds.toFixed(2) },
  { probe: 'f32x4 multiplies alone, in registers', 'G per s': muls.toFixed(2) },
  { probe: 'tile loop over 1 KB in L1 (pairs)', 'G per s': pairs.toFixed(2) },
  { probe: `the same inside another loop, ${TILE_STEPS} steps a run (pairs)`, 'G per s': nested.toFixed(2) },
  { probe: `single-query scan, ${ROWS / 1000}k x ${DIM} (pairs)`, 'G per s': single.toFixed(2) },
  { probe: `search-many, ${BLOCK} queries in tiles (pairs)`, 'G per s': block.toFixed(2) },
  { probe: 'pairs the tiles would need for 0.7x of singles', 'G per s': goal.toFixed(2) },
];
printTable(rows);
console.log(
  `the goal needs ${(2 * goal).toFixed(1)} G f32x4 operations/s: ${(((2 * goal) / (adds + muls)) * 100).toFixed(0)}% of adds and multiplies at their separate peaks (${(adds + muls).toFixed(1)} G/s); the tiles reach ${(((2 * block) / (adds + muls)) * 100).toFixed(0)}%`,
);
console.log(
  `the tiles reach ${((block / pairs) * 100).toFixed(0)}% of their loop on its own over L1, ${((block / nested) * 100).toFixed(0)}% of it nested as V8 compiles theirs`,
);
console.log(`results: ${writeExperimentResults('fp-peak', { rows, adds, muls, pairs, nested, single, block, goal })}`);
