// npm run bench:int8: int8 storage against exact float32 at 100k x 384
// (cosine, top 10), on clustered data (a Gaussian mixture with uneven
// per-dimension scales, like real embeddings) and on uniform random data.
// Prints the bare scan speed-up (goal >= 2.5x), then recall@10 against the
// exact answer and time relative to the exact search for candidatePool in
// {topK, 2 x topK, 100 (the default), 500} (goal at the default: recall >= 0.99
// in <= 0.45x the exact time), and what selecting a pool of 2048 costs in the
// first stage against a pool of 1, paired call by call (goal: <= 10% of the
// scan). All other cases of one data set are interleaved.
import type { Metric } from '../src/config.js';
import { clusteredVectors, rowOf, uniformVectors } from './lib/data.js';
import { filledKernel } from './lib/kernel-setup.js';
import { fmt, interleave, pairedRatio, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { RawKernel } from './lib/raw-kernel.js';

const N = quick ? 5_000 : 100_000;
const DIM = 384;
const K = 10;
const QUERIES = 50;
const POOLS = [K, 2 * K, 100, 500];
const metric: Metric = 'cosine';

const rows: Record<string, string | number>[] = [];
for (const [name, make] of [
  ['clustered', clusteredVectors],
  ['uniform', uniformVectors],
] as const) {
  const data = make(N, DIM, 61);
  const queries = make(QUERIES, DIM, 62);
  const float = filledKernel(data, DIM, metric);
  const int8 = filledKernel(data, DIM, metric, 'int8');
  // The first stage on its own runs over the bench kernel's raw exports (the service has no such call).
  const firstStage = new RawKernel(data, DIM, N, undefined, true);
  const query = (j: number) => rowOf(queries, DIM, j % QUERIES);

  const truth = Array.from({ length: QUERIES }, (_, j) => new Set(float.search({ queries: query(j), queryCount: 1, k: K, count: N }).rows));
  const recall = (pool: number) => {
    let found = 0;
    for (let j = 0; j < QUERIES; j++)
      for (const r of int8.search({ queries: query(j), queryCount: 1, k: K, candidatePool: pool, count: N }).rows) if (truth[j].has(r)) found++;
    return found / (QUERIES * K);
  };

  let j = 0;
  const t = Object.fromEntries(
    interleave(
      [
        { name: 'float32 exact', run: () => float.search({ queries: query(j++), queryCount: 1, k: K, count: N }) },
        { name: 'float32 scan', run: () => float.search({ queries: query(j++), queryCount: 1, k: 1, count: N }) },
        { name: 'int8 scan', run: () => int8.search({ queries: query(j++), queryCount: 1, k: 1, candidatePool: 1, count: N }) },
        { name: 'first stage pool 2048', run: () => firstStage.firstStage(query(j++), 2048, metric) },
        ...POOLS.map((pool) => ({ name: `pool ${pool}`, run: () => int8.search({ queries: query(j++), queryCount: 1, k: K, candidatePool: pool, count: N }) })),
      ],
      { rounds: 7, targetMs: 100 },
    ).map((x) => [x.name, x.ms]),
  );

  rows.push({ data: name, case: 'float32 exact top 10', 'ms/query': t['float32 exact'], 'vs exact': '1.000', recall: '1.000' });
  rows.push({
    data: name,
    case: 'int8 scan vs float32 scan',
    'ms/query': t['int8 scan'],
    'vs exact': fmt(t['int8 scan'] / t['float32 exact']),
    recall: `${fmt(t['float32 scan'] / t['int8 scan'], 2)}x faster scan`,
  });
  // A few percent: paired call by call over the queries (rounds apart are too noisy).
  const stage = (pool: number) => (call: number) => firstStage.firstStage(query(call), pool, metric);
  const selection = pairedRatio(stage(1), stage(2048), { pairs: 31, calls: 4 }) - 1;
  rows.push({
    data: name,
    case: 'pool 2048 selection vs pool 1',
    'ms/query': t['first stage pool 2048'],
    'vs exact': fmt(t['first stage pool 2048'] / t['float32 exact']),
    recall: `+${fmt(selection * 100, 1)}% of the int8 scan`,
  });
  for (const pool of POOLS) {
    rows.push({
      data: name,
      case: `int8 + rescore, pool ${pool}`,
      'ms/query': t[`pool ${pool}`],
      'vs exact': fmt(t[`pool ${pool}`] / t['float32 exact']),
      recall: fmt(recall(pool)),
    });
  }
  console.error(`done ${name}`);
}
printTable(rows);
console.log(`results: ${writeResults('int8', { vectors: N, dim: DIM, topK: K, metric, queries: QUERIES, rows })}`);
