// npm run bench:experiment -- selection --baseline before=/tmp/old.wasm:
// what the top-K and candidatePool selection costs, the current build
// (build/kernel.bench.wasm) paired with another build in one process.
//
//   int8 first stage, 100k x 384 (clustered and uniform): pool 2048 against pool 1
//   float32 single query, 10k and 100k x 384 (uniform, cosine): k = 100 against k = 1
//
// Each build gets its own raw kernel (bench/lib/raw-kernel.ts) over the same rows. Every query is
// timed on both builds back to back (the order alternating), so load on this
// shared machine hits both alike; a round is 16 queries, and the table
// prints medians over the rounds of each build's selection share (pool 2048 /
// pool 1 - 1, k100 / k1 - 1) and of the paired ratios current / baseline.
// Pools and top-K ids must be equal between the builds before timing counts.
// To make the baseline from the commit before:
//   git stash -u && npm run build:kernel && cp build/kernel.bench.wasm /tmp/old.wasm && git stash pop && npm run build:kernel
import { performance } from 'node:perf_hooks';
import { loadKernelFile } from '../lib/bench-kernel.js';
import { clusteredVectors, rowOf, uniformVectors } from '../lib/data.js';
import { fmt, median, printTable, quick } from '../lib/measure.js';
import { writeExperimentResults } from '../lib/results.js';
import { RawKernel } from '../lib/raw-kernel.js';

const DIM = 384;
const QUERIES = 16;
const ROUNDS = quick ? 3 : 25;

function baseline(): WebAssembly.Module {
  const at = process.argv.indexOf('--baseline');
  if (at < 0) throw new Error('usage: npm run bench:experiment -- selection --baseline [name=]old.wasm');
  const spec = process.argv[at + 1];
  const eq = spec.indexOf('=');
  return loadKernelFile(eq > 0 ? spec.slice(eq + 1) : spec);
}

type Op = (kernel: RawKernel, query: Float32Array) => Int32Array;
const pool =
  (size: number): Op =>
  (kernel, q) =>
    kernel.firstStage(q, size);
const topK =
  (k: number): Op =>
  (kernel, q) =>
    kernel.search(q, 1, k, 'cosine');

/** Per round: each op's ms per query on [current, baseline]. */
function pairedRounds(kernels: [RawKernel, RawKernel], queries: Float32Array[], ops: Op[]): number[][][] {
  const rounds: number[][][] = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const ms = ops.map(() => [0, 0]);
    queries.forEach((q, j) => {
      ops.forEach((op, o) => {
        for (const b of (j + r) % 2 ? [0, 1] : [1, 0]) {
          const t0 = performance.now();
          op(kernels[b], q);
          ms[o][b] += (performance.now() - t0) / queries.length;
        }
      });
    });
    if (r > 0) rounds.push(ms); // round 0 warms up
  }
  return rounds;
}

const old = baseline();
const table: Record<string, string | number>[] = [];
const scenarios = [
  { data: 'clustered', n: quick ? 20_000 : 100_000, type: 'int8' as const, heavy: 2048, light: 1, label: 'pool 2048 vs pool 1' },
  { data: 'uniform', n: quick ? 20_000 : 100_000, type: 'int8' as const, heavy: 2048, light: 1, label: 'pool 2048 vs pool 1' },
  { data: 'uniform', n: quick ? 2_000 : 10_000, type: 'float32' as const, heavy: 100, light: 1, label: 'k100 vs k1' },
  { data: 'uniform', n: quick ? 20_000 : 100_000, type: 'float32' as const, heavy: 100, light: 1, label: 'k100 vs k1' },
];
for (const s of scenarios) {
  const data = s.data === 'clustered' ? clusteredVectors(s.n, DIM) : uniformVectors(s.n, DIM, 41);
  const queries = Array.from({ length: QUERIES }, (_, j) =>
    Float32Array.from(rowOf(s.data === 'clustered' ? clusteredVectors(QUERIES, DIM, 7) : uniformVectors(QUERIES, DIM, 7), DIM, j)),
  );
  const int8 = s.type === 'int8';
  const kernels: [RawKernel, RawKernel] = [new RawKernel(data, DIM, s.n, undefined, int8), new RawKernel(data, DIM, s.n, old, int8)];
  const make = s.type === 'int8' ? pool : topK;
  const ops = [make(s.heavy), make(s.light)];
  for (const q of queries)
    for (const op of ops) {
      // A pool comes in no particular order; top-K rows best first.
      const [a, b] = kernels.map((kernel) => (s.type === 'int8' ? op(kernel, q).sort() : op(kernel, q)));
      if (a.join() !== b.join()) throw new Error(`${s.data} ${s.n} ${s.type}: the builds disagree`);
    }
  const rounds = pairedRounds(kernels, queries, ops);
  const share = (b: number) => median(rounds.map((ms) => ms[0][b] / ms[1][b] - 1)) * 100;
  table.push({
    case: `${s.type} ${s.n / 1000}k x ${DIM} ${s.data}, ${s.label}`,
    'ms current': fmt(median(rounds.map((ms) => ms[0][0]))),
    'ms baseline': fmt(median(rounds.map((ms) => ms[0][1]))),
    'share current': `${fmt(share(0), 1)}%`,
    'share baseline': `${fmt(share(1), 1)}%`,
    'heavy current/baseline': fmt(median(rounds.map((ms) => ms[0][0] / ms[0][1]))),
    'light current/baseline': fmt(median(rounds.map((ms) => ms[1][0] / ms[1][1]))),
  });
}
printTable(table);
console.log(`(${ROUNDS} rounds of ${QUERIES} queries, medians; share = heavy / light - 1 within one build)`);
console.log(`results: ${writeExperimentResults('selection', { rounds: ROUNDS, queries: QUERIES, table })}`);
