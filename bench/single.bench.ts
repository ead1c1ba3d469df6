// npm run bench:single: the single-query float32 scan (one query per call,
// top 10, 8 queries cycled) at 1k, 10k and 100k x 384 for cosine, l2 and the
// bare dot product, against the read-only floors (one stream, and four
// streams as the scan reads the rows), in one process. To time another
// build beside this one: npm run bench:experiment -- single-builds.
import { uniformVectors } from './lib/data.js';
import { fmt, interleave, printTable, quick, type Case } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { RawKernel, type RawMetric } from './lib/raw-kernel.js';

const DIM = 384;
const K = 10;
const QUERIES = 8;
const METRICS: RawMetric[] = ['cosine', 'l2', 'dot'];
const sizes = quick ? [1_000, 2_000] : [1_000, 10_000, 100_000];

const rows: Record<string, string | number>[] = [];
for (const n of sizes) {
  const data = uniformVectors(n, DIM, 41);
  const queries = uniformVectors(QUERIES, DIM, 42);
  const query = (i: number) => queries.subarray(i * DIM, (i + 1) * DIM);
  const kernel = new RawKernel(data, DIM);
  const cases: Case[] = [
    { name: 'floor', run: () => kernel.readFloor() },
    { name: 'floor4', run: () => kernel.readFloor4() },
  ];
  for (const metric of METRICS) {
    let q = 0;
    cases.push({ name: `${metric} now`, run: () => kernel.search(query(q++ % QUERIES), 1, K, metric) });
  }
  const t = Object.fromEntries(interleave(cases, { rounds: 9, targetMs: 60 }).map((x) => [x.name, x.ms]));
  for (const metric of METRICS) {
    const row: Record<string, string | number> = {
      vectors: n,
      dim: DIM,
      metric,
      ms: t[`${metric} now`],
      'floor ms': t.floor,
      'floor4 ms': t.floor4,
      '/floor': fmt(t[`${metric} now`] / t.floor, 2),
      '/floor4': fmt(t[`${metric} now`] / t.floor4, 2),
    };
    rows.push(row);
  }
  console.error(`done ${n}`);
}
printTable(rows);
console.log(`results: ${writeResults('single', { topK: K, rows })}`);
