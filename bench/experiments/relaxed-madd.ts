// npm run bench:experiment -- relaxed-madd [--quick]: the relaxed kernel build
// (build/kernel.relaxed.wasm, KERNEL_BUILD=relaxed: simd.ts's madd is
// f32x4.relaxed_madd, a fused multiply-add where V8 has FMA3) against the
// simd128 build (KERNEL_BUILD=auto), on the same rows, rounds interleaved: search-many
// of 64 and one query on 100k x 384 (cosine, top 10), inline and on a pool of
// 2 threads (each build's shared twin). Ids must be equal before timing
// counts; the largest score difference between the builds is printed, with
// each build's GFLOP/s a thread, against what its tile loop reaches over rows
// in L1 (relaxed-madd/probe.ts) and per cycle of the clock /proc/cpuinfo names
// (4-lane FMA's peak: 16 flops a cycle; a boost clock above it shows as more).
// Needs an engine that validates relaxed SIMD (Node 24; Node 20 only with
// --experimental-wasm-relaxed-simd). Findings: docs/experiments/2026-11-26-relaxed-madd-second-build.md; the
// choice of KERNEL_BUILD=auto they support: docs/experiments/2026-11-26-relaxed-build-shipped.md.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { KernelPool } from '../../src/kernel/kernel-pool.js';
import { loadKernelModule, loadSharedKernelModule } from '../../src/kernel/load-node.js';
import { relaxedSimdSupported } from '../../src/kernel/relaxed-simd.js';
import { rowOf, uniformVectors } from '../lib/data.js';
import { fmt, interleaveTimed, printTable, quick, timeCalls } from '../lib/measure.js';
import { writeExperimentResults } from '../lib/results.js';
import { onPool } from '../../src/kernel/executor.js';

const root = new URL('../../', import.meta.url).pathname;
const N = quick ? 10_000 : 100_000,
  DIM = 384,
  K = 10,
  MANY = 64,
  THREADS = 2;

if (!relaxedSimdSupported()) {
  console.error(`this engine (Node ${process.version}) does not validate relaxed SIMD: run under Node 24, or Node 20 with --experimental-wasm-relaxed-simd`);
  process.exit(1);
}
const RELAXED = 'wasm-relaxed-simd';

function filled(module: WebAssembly.Module, data: Float32Array): KernelInstance {
  const kernel = new KernelInstance(module, DIM, 'cosine', N);
  kernel.ensureCapacity(N);
  for (let r = 0; r < N; r++) kernel.writeRows([r], [rowOf(data, DIM, r)], r);
  return kernel;
}

// Multiply-adds per second with the rows in L1 (the tile loop's shape) and in registers, each way.
mkdirSync(`${root}bench/results/experiments`, { recursive: true });
const probeOut = `${root}bench/results/experiments/relaxed-probe.wasm`;
execFileSync(
  process.execPath,
  [
    `${root}node_modules/assemblyscript/bin/asc.js`,
    `${root}bench/experiments/relaxed-madd/probe.ts`,
    '-O3',
    '--enable',
    'simd,relaxed-simd',
    '--runtime',
    'stub',
    '--noAssert',
    '--importMemory',
    '-o',
    probeOut,
  ],
  { stdio: 'inherit' },
);
const probe = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(probeOut)), { env: { memory: new WebAssembly.Memory({ initial: 1 }) } })
  .exports as Record<string, (...args: number[]) => number>;
const STEPS = quick ? 200_000 : 20_000_000;
const rate = (run: () => unknown, pairs: number) => {
  run();
  const runs: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = process.hrtime.bigint();
    run();
    runs.push(pairs / (Number(process.hrtime.bigint() - t0) / 1e9) / 1e9);
  }
  return runs.sort((a, b) => a - b)[3];
};
const probes = [
  { probe: 'tile loop over L1, multiply then add', 'G multiply-adds/s': rate(() => probe.tilePairs(STEPS, 1.0000001, 0.9999999), 8 * STEPS) },
  { probe: 'tile loop over L1, relaxed_madd', 'G multiply-adds/s': rate(() => probe.tileFused(STEPS, 1.0000001, 0.9999999), 8 * STEPS) },
  { probe: '12 chains in registers, multiply then add', 'G multiply-adds/s': rate(() => probe.chainPairs(STEPS, 0.5), 12 * STEPS) },
  { probe: '12 chains in registers, relaxed_madd', 'G multiply-adds/s': rate(() => probe.chainFused(STEPS, 0.5), 12 * STEPS) },
];

const data = uniformVectors(N, DIM, 484);
const queries = uniformVectors(MANY, DIM, 684);
const one = queries.subarray(0, DIM);
const builds = {
  simd128: {
    inline: filled(loadKernelModule(), data),
    shared: filled(loadSharedKernelModule(), data),
    pool: new KernelPool(THREADS, loadSharedKernelModule()),
  },
  relaxed: {
    inline: filled(loadKernelModule(RELAXED), data),
    shared: filled(loadSharedKernelModule(RELAXED), data),
    pool: new KernelPool(THREADS, loadSharedKernelModule(RELAXED)),
  },
};

const want = builds.simd128.inline.search({ queries, queryCount: MANY, k: K, count: N });
let largest = 0;
for (const build of Object.values(builds)) {
  const runs = [
    build.inline.search({ queries, queryCount: MANY, k: K, count: N }),
    await build.shared.search({ queries, queryCount: MANY, k: K, count: N }, onPool(build.pool)),
  ];
  for (const got of runs) {
    if (got.rows.join() !== want.rows.join()) throw new Error("the builds' ids differ");
    for (let i = 0; i < got.scores.length; i++) largest = Math.max(largest, Math.abs(got.scores[i] - want.scores[i]));
  }
}

const cases = Object.entries(builds).flatMap(([name, b]) => [
  { name: `${name} many inline`, time: timeCalls(() => b.inline.search({ queries, queryCount: MANY, k: K, count: N })) },
  { name: `${name} many ${THREADS}t`, time: timeCalls(() => b.shared.search({ queries, queryCount: MANY, k: K, count: N }, onPool(b.pool))) },
  { name: `${name} one inline`, time: timeCalls(() => b.inline.search({ queries: one, queryCount: 1, k: K, count: N })) },
  { name: `${name} one ${THREADS}t`, time: timeCalls(() => b.shared.search({ queries: one, queryCount: 1, k: K, count: N }, onPool(b.pool))) },
]);
const t = Object.fromEntries((await interleaveTimed(cases, { rounds: quick ? 3 : 7, targetMs: 300 })).map((x) => [x.name, x.ms]));
await Promise.all(Object.values(builds).map((b) => b.pool.close()));

// Flops of search-many (2 per dimension per query per row) per second a thread, and against
// what the same build's tile loop reaches over rows in L1 (8 flops a multiply-add).
const mhz = Number(/cpu MHz\s*:\s*([\d.]+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? NaN);
const gflops = (ms: number, threads: number) => (2 * MANY * N * DIM) / (ms / 1000) / threads / 1e9;
const inL1 = { simd128: probes[0]['G multiply-adds/s'] * 8, relaxed: probes[1]['G multiply-adds/s'] * 8 };
const rows = [
  ...(['inline', `${THREADS}t`] as const).map((where) => {
    const threads = where === 'inline' ? 1 : THREADS;
    const [plain, relaxed] = [t[`simd128 many ${where}`], t[`relaxed many ${where}`]];
    const [plainRate, relaxedRate] = [gflops(plain, threads), gflops(relaxed, threads)];
    return {
      case: `search-many ${MANY}, ${N / 1000}k x ${DIM}, ${where}`,
      'simd128 ms': fmt(plain),
      'relaxed ms': fmt(relaxed),
      'relaxed / simd128': fmt(relaxed / plain),
      goal: '<= 0.75',
      'GFLOP/s a thread simd128 / relaxed': `${fmt(plainRate, 1)} / ${fmt(relaxedRate, 1)}`,
      'of the L1 loop': `${fmt(plainRate / inL1.simd128, 2)} / ${fmt(relaxedRate / inL1.relaxed, 2)}`,
    };
  }),
  ...(['inline', `${THREADS}t`] as const).map((where) => {
    const [plain, relaxed] = [t[`simd128 one ${where}`], t[`relaxed one ${where}`]];
    return {
      case: `one query, ${N / 1000}k x ${DIM}, ${where}`,
      'simd128 ms': fmt(plain),
      'relaxed ms': fmt(relaxed),
      'relaxed / simd128': fmt(relaxed / plain),
      goal: '<= 1.03',
      'GFLOP/s a thread simd128 / relaxed': '',
      'of the L1 loop': '',
    };
  }),
];
printTable(rows);
printTable(
  probes.map((p) => ({
    ...p,
    'G multiply-adds/s': fmt(p['G multiply-adds/s'], 2),
    'GFLOP/s': fmt(p['G multiply-adds/s'] * 8, 1),
    [`per ${mhz} MHz cycle`]: fmt((p['G multiply-adds/s'] * 8e3) / mhz, 1),
  })),
);
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`largest score difference between the builds: ${largest.toExponential(2)}; clock ${mhz} MHz; Node ${process.version}; load average ${load}`);
console.log(`results: ${writeExperimentResults('relaxed-madd', { node: process.version, mhz, load, largestScoreDifference: largest, rows, probes })}`);
